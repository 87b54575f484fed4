//! Numbers as C's library reads and writes them, for the drop-ins of C
//! tools. Read:
//! `strtol`/`strtoul` (base 0, 2, 10 or 16), `atoi`, `atof`, and the
//! `"%lf %1s"` scan behind nccl-tests' sizes. A drop-in must read `-n
//! 0x10`, `-b 1.5M`, `-c 1x` or `-T ' 5'` as nccl-tests does (and
//! bandwidthTest's `--start=1e3` as it does), including the prefix rules (trailing junk ignored,
//! no digits read as 0) and the clamping on overflow. Written: `%g` at
//! any precision ([`general`]: nccl-tests' `#wrong`, nvbandwidth's JSON
//! reals at `%.17g`) and `%e`'s exponent form.

/// C's `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn skip_space(s: &[u8]) -> usize {
    s.iter().take_while(|&&b| is_c_space(b)).count()
}

/// `s` without its leading C white space.
pub(crate) fn trim_c_space(s: &str) -> &str {
    &s[skip_space(s.as_bytes())..]
}

/// An optional sign at `b[*i]`, taken: whether it is a minus.
fn sign(b: &[u8], i: &mut usize) -> bool {
    match b.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    }
}

fn digit_value(b: u8) -> Option<u32> {
    (b as char).to_digit(36)
}

/// The unsigned magnitude of an integer prefix (`strtoul`'s reading):
/// the sign, the magnitude clamped to `u64::MAX` on overflow (with the
/// overflow flag), and whether any digit was read.
fn integer_prefix(s: &str, base: u32) -> (bool, u64, bool, bool) {
    let b = s.as_bytes();
    let mut i = skip_space(b);
    let negative = sign(b, &mut i);
    let mut base = base;
    let hex_prefix = b.get(i) == Some(&b'0')
        && matches!(b.get(i + 1), Some(b'x' | b'X'))
        && b.get(i + 2).and_then(|&c| digit_value(c)).is_some_and(|d| d < 16);
    if (base == 0 || base == 16) && hex_prefix {
        i += 2;
        base = 16;
    } else if base == 0 {
        base = if b.get(i) == Some(&b'0') { 8 } else { 10 };
    }
    let (mut value, mut overflow, mut any) = (0u64, false, false);
    while let Some(d) = b.get(i).and_then(|&c| digit_value(c)).filter(|&d| d < base) {
        any = true;
        match value.checked_mul(u64::from(base)).and_then(|v| v.checked_add(u64::from(d))) {
            Some(v) => value = v,
            None => {
                overflow = true;
                value = u64::MAX;
            }
        }
        i += 1;
    }
    (negative, value, overflow, any)
}

/// C's `strtol(s, NULL, base)` on a 64-bit `long`: 0 when no digit is read,
/// `i64::MAX` / `i64::MIN` when the value does not fit.
pub(crate) fn strtol(s: &str, base: u32) -> i64 {
    let (negative, magnitude, overflow, _) = integer_prefix(s, base);
    if negative {
        if overflow || magnitude > i64::MIN.unsigned_abs() {
            i64::MIN
        } else {
            0i64.wrapping_sub_unsigned(magnitude)
        }
    } else if overflow || magnitude > i64::MAX as u64 {
        i64::MAX
    } else {
        magnitude as i64
    }
}

/// C's `strtoul(s, NULL, base)`: a minus sign negates modulo 2^64 (so
/// "-1" is `u64::MAX`); `u64::MAX` on overflow. `None` when no digit is
/// read (the end pointer would not move), for callers that check it.
pub(crate) fn strtoul(s: &str, base: u32) -> Option<u64> {
    let (negative, magnitude, overflow, any) = integer_prefix(s, base);
    any.then_some(if overflow {
        u64::MAX
    } else if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    })
}

/// C's `(int)strtol(s, NULL, 0)`: the long value truncated to its low 32
/// bits, as the compiler converts it.
pub(crate) fn int_strtol(s: &str) -> i32 {
    strtol(s, 0) as i32
}

/// C's `atoi`: `(int)strtol(s, NULL, 10)`.
pub(crate) fn atoi(s: &str) -> i32 {
    strtol(s, 10) as i32
}

/// A floating-point number at the start of `s` (after C white space):
/// its value and the bytes it took. `lenient_exponent` is how `scanf`'s
/// `%lf` reads: an `e` (or a hexadecimal float's `p`) with no digits after
/// it is taken and ignored, and `0x` with no hexadecimal digit reads
/// nothing; `strtod` (lenient_exponent false) leaves such an `e` and reads
/// `0x` as 0.
fn float_prefix(s: &str, lenient_exponent: bool) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = skip_space(b);
    let negative = sign(b, &mut i);
    let signed = |v: f64| if negative { -v } else { v };
    let rest = &s[i..];
    let lower = rest.to_ascii_lowercase();
    if lower.starts_with("infinity") {
        return Some((signed(f64::INFINITY), i + 8));
    }
    if lower.starts_with("inf") {
        return Some((signed(f64::INFINITY), i + 3));
    }
    if lower.starts_with("nan") {
        let mut end = i + 3;
        // nan(chars): the parenthesis is taken only when closed.
        if b.get(end) == Some(&b'(') {
            let inner = b[end + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
            if b.get(end + 1 + inner) == Some(&b')') {
                end += inner + 2;
            }
        }
        return Some((signed(f64::NAN), end));
    }
    let is_hex = lower.starts_with("0x");
    if is_hex {
        let digits_at = i + 2;
        let mut j = digits_at;
        let (mut mantissa, mut exp2, mut any, mut seen_point) = (0f64, 0i64, false, false);
        loop {
            match b.get(j) {
                Some(&c) if c.is_ascii_hexdigit() => {
                    any = true;
                    mantissa = mantissa * 16.0 + f64::from(digit_value(c).unwrap_or(0));
                    if seen_point {
                        exp2 -= 4;
                    }
                }
                Some(b'.') if !seen_point => seen_point = true,
                _ => break,
            }
            j += 1;
        }
        if !any {
            // "0x" alone: scanf fails; strtod reads the 0.
            return if lenient_exponent { None } else { Some((signed(0.0), i + 1)) };
        }
        if matches!(b.get(j), Some(b'p' | b'P')) {
            let (e, taken) = exponent_digits(&b[j + 1..]);
            if let Some(e) = e {
                exp2 += e;
                j += 1 + taken;
            } else if lenient_exponent {
                j += 1 + taken;
            }
        }
        let value = mantissa * 2f64.powi(exp2.clamp(-2000, 2000) as i32);
        return Some((signed(value), j));
    }
    let start = i;
    let mut j = i;
    let int_digits = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    j += int_digits;
    let mut frac_digits = 0;
    if b.get(j) == Some(&b'.') {
        frac_digits = b[j + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if int_digits + frac_digits > 0 {
            j += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    let mut text = String::from("0");
    text.push_str(&s[start..j]);
    if text.ends_with('.') {
        text.push('0');
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let (e, taken) = exponent_digits(&b[j + 1..]);
        if let Some(e) = e {
            text.push_str(&format!("e{e}"));
            j += 1 + taken;
        } else if lenient_exponent {
            j += 1 + taken;
        }
    }
    let value: f64 = text.parse().ok()?;
    Some((signed(value), j))
}

/// An exponent's optional sign and digits: its value (clamped far beyond
/// any double's range) when there is a digit, and the bytes taken.
fn exponent_digits(b: &[u8]) -> (Option<i64>, usize) {
    let mut i = 0;
    let negative = sign(b, &mut i);
    let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return (None, i);
    }
    let mut v: i64 = 0;
    for &c in &b[i..i + digits] {
        v = (v * 10 + i64::from(c - b'0')).min(100_000);
    }
    (Some(if negative { -v } else { v }), i + digits)
}

/// C's `strtod` at the start of `s`: the number and the bytes it took
/// (leading space included), or None where it reads none. A finite
/// number out of a double's range (glibc's ERANGE) is None too.
pub(crate) fn strtod(s: &str) -> Option<(f64, usize)> {
    let (v, taken) = float_prefix(s, false)?;
    let spelled_infinite = s[..taken].to_ascii_lowercase().contains("inf");
    (!v.is_infinite() || spelled_infinite).then_some((v, taken))
}

/// C's `atof`: the number at the start of `s`, 0 when there is none.
pub(crate) fn atof(s: &str) -> f64 {
    float_prefix(s, false).map_or(0.0, |(v, _)| v)
}

/// What `sscanf(s, "%lf %1s", &size, unit)` reads: the number, and the
/// first non-space character after it if any. `None` when no number is
/// read (scanf returns 0, or EOF on an empty or blank string).
pub(crate) fn scan_number_and_unit(s: &str) -> Option<(f64, Option<char>)> {
    let (value, used) = float_prefix(s, true)?;
    let unit = s[used..].chars().find(|c| !c.is_ascii() || !is_c_space(*c as u8));
    Some((value, unit))
}

/// C's spelling of infinities and NaN (`%f`, `%e`, `%g`), for non-finite values.
pub(crate) fn non_finite(value: f64) -> Option<&'static str> {
    if value.is_nan() {
        Some("nan")
    } else if value.is_infinite() {
        Some(if value > 0.0 { "inf" } else { "-inf" })
    } else {
        None
    }
}

/// C's `%.{precision}e` for a finite value: Rust's mantissa, with the
/// exponent signed and at least two digits long.
pub(crate) fn c_exponent(value: f64, precision: usize) -> String {
    let rust = format!("{value:.precision$e}");
    match rust.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => rust,
    }
}

/// Drops trailing zeros after a decimal point, and the point if nothing
/// follows it.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's `%.{precision}g`: `precision` significant digits (at least one),
/// fixed notation when the rounded value's exponent is from -4 to below
/// `precision` and exponent notation otherwise, trailing zeros dropped.
pub(crate) fn general(value: f64, precision: usize) -> String {
    if let Some(word) = non_finite(value) {
        return word.to_string();
    }
    let precision = precision.max(1);
    let sci = c_exponent(value, precision - 1);
    let Some((mantissa, exp_text)) = sci.split_once('e') else {
        return sci;
    };
    // The exponent of the value rounded to `precision` digits decides the form.
    let exp: i64 = exp_text.parse().unwrap_or(0);
    if exp >= -4 && exp < precision as i64 {
        let decimals = usize::try_from(precision as i64 - 1 - exp).unwrap_or(0);
        trim_fraction(&format!("{value:.decimals$}")).to_string()
    } else {
        format!("{}e{exp_text}", trim_fraction(mantissa))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values read from glibc 2.36 by a C program calling the functions
    /// on these words (by hand, on the development machine).
    #[test]
    fn integers_read_as_glibc_reads_them() {
        let cases: &[(&str, i64, i32, Option<u64>)] = &[
            // word, strtol(.., 0), atoi, strtoul(.., 16)
            ("8", 8, 8, Some(8)),
            ("16G", 16, 16, Some(0x16)),
            ("1.5M", 1, 1, Some(1)),
            ("8B", 8, 8, Some(0x8b)),
            ("", 0, 0, None),
            (" ", 0, 0, None),
            ("x", 0, 0, None),
            ("0x10", 16, 0, Some(16)),
            ("0x", 0, 0, Some(0)),
            ("0xg", 0, 0, Some(0)),
            ("-1", -1, -1, Some(u64::MAX)),
            ("010", 8, 10, Some(16)),
            ("0b11", 0, 0, Some(0xb11)),
            (" 12abc", 12, 12, Some(0x12abc)),
            ("99999999999999999999", i64::MAX, -1, Some(u64::MAX)),
            ("-9999999999999999999", i64::MIN, 0, Some(u64::MAX)),
            ("2147483648", 2_147_483_648, i32::MIN, Some(0x2147483648)),
            ("4294967297", 4_294_967_297, 1, Some(0x4294967297)),
            ("+4", 4, 4, Some(4)),
        ];
        for &(word, long, int, hex) in cases {
            assert_eq!(strtol(word, 0), long, "strtol({word:?})");
            assert_eq!(atoi(word), int, "atoi({word:?})");
            assert_eq!(strtoul(word, 16), hex, "strtoul({word:?}, 16)");
        }
        assert_eq!(int_strtol("4294967297"), 1);
        assert_eq!(strtoul("0b101", 2), Some(0), "the prefix is not binary's: strtoul reads the 0");
        assert_eq!(strtoul("101", 2), Some(5));
    }

    type Scanned = Option<(f64, Option<char>)>;

    #[test]
    fn floats_read_as_atof_and_scanf_read_them() {
        let cases: &[(&str, f64, Scanned)] = &[
            // word, atof, sscanf("%lf %1s")
            ("8", 8.0, Some((8.0, None))),
            ("1.5M", 1.5, Some((1.5, Some('M')))),
            ("8 G", 8.0, Some((8.0, Some('G')))),
            ("\t8\tM", 8.0, Some((8.0, Some('M')))),
            ("8GB", 8.0, Some((8.0, Some('G')))),
            ("", 0.0, None),
            ("x", 0.0, None),
            ("1e3", 1000.0, Some((1000.0, None))),
            ("1e", 1.0, Some((1.0, None))),
            ("1eK", 1.0, Some((1.0, Some('K')))),
            ("8E", 8.0, Some((8.0, None))),
            ("0x10", 16.0, Some((16.0, None))),
            ("0x1p4K", 16.0, Some((16.0, Some('K')))),
            ("0x", 0.0, None),
            ("0x.8p1", 1.0, Some((1.0, None))),
            ("-1", -1.0, Some((-1.0, None))),
            ("4.", 4.0, Some((4.0, None))),
            (".5K", 0.5, Some((0.5, Some('K')))),
            (".", 0.0, None),
            ("-", 0.0, None),
            ("010", 10.0, Some((10.0, None))),
            ("0b11", 0.0, Some((0.0, Some('b')))),
            ("1,5M", 1.0, Some((1.0, Some(',')))),
            ("1e-5", 1e-5, Some((1e-5, None))),
        ];
        for &(word, want_atof, want_scan) in cases {
            assert_eq!(atof(word), want_atof, "atof({word:?})");
            assert_eq!(scan_number_and_unit(word), want_scan, "scan({word:?})");
        }
        assert_eq!(atof("infK"), f64::INFINITY);
        assert!(atof("nan").is_nan() && atof("-nan(0x1)").is_nan());
        assert_eq!(scan_number_and_unit("infK").map(|(_, u)| u), Some(Some('K')));
    }

    #[test]
    fn general_is_printf_g() {
        assert_eq!(general(110.43, 17), "110.43000000000001");
        assert_eq!(general(0.1, 17), "0.10000000000000001");
        assert_eq!(general(3.0, 17), "3");
        assert_eq!(general(24.390243902439025, 6), "24.3902");
        assert_eq!(general(1e-5, 6), "1e-05");
        assert_eq!(general(123456789.0, 6), "1.23457e+08");
        assert_eq!(general(100000.0, 6), "100000");
        assert_eq!(general(0.0, 6), "0");
        assert_eq!(general(f64::NAN, 6), "nan");
    }
}
