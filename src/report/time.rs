//! UTC timestamps for file names and run records, without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// Civil date (year, month, day) of a count of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a civil date (the inverse of
/// `civil_from_days`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days in month `m` (1-12) of year `y` of the Gregorian calendar.
fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Seconds since the Unix epoch of a time as [`Utc::rfc3339`] writes it
/// (`2026-11-30T08:36:46.123Z`; the fraction may be missing or of any
/// length); None for anything else, a day the month does not have too.
pub(crate) fn unix_seconds(text: &str) -> Option<f64> {
    let t = text.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let num = |s: &str| s.parse::<u32>().ok();
    let mut d = date.splitn(3, '-');
    let (y, mo, day) = (d.next()?.parse::<i64>().ok()?, num(d.next()?)?, num(d.next()?)?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut h = hms.splitn(3, ':');
    let (hh, mm, ss) = (num(h.next()?)?, num(h.next()?)?, num(h.next()?)?);
    if !(1..=12).contains(&mo) || !(1..=days_in_month(y, mo)).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let frac = if frac.is_empty() { 0.0 } else { format!("0.{frac}").parse::<f64>().ok()? };
    let secs = days_from_civil(y, mo, day) * 86_400 + (hh * 3600 + mm * 60 + ss) as i64;
    Some(secs as f64 + frac)
}

/// Broken-down UTC time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

impl Utc {
    pub(crate) fn from_system(t: SystemTime) -> Utc {
        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = d.as_secs() as i64;
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let rem = secs.rem_euclid(86_400);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            millis: d.subsec_millis(),
        }
    }

    pub fn now() -> Utc {
        Utc::from_system(SystemTime::now())
    }

    /// `2026-11-30T08:36:46.123Z`
    pub(crate) fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millis
        )
    }

    /// `20261130T083646Z`, for file names.
    pub(crate) fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The local time now as C's `strftime` writes `format` (the time zone
/// the process's `TZ` and /etc/localtime give, as `localtime` reads
/// them); empty where the C library cannot say.
pub(crate) fn local_now(format: &std::ffi::CStr) -> String {
    // SAFETY: `time` with a null pointer only returns; `localtime_r` fills
    // the `tm` given; `strftime` writes at most the buffer's length and
    // returns how many bytes it wrote (0 on failure).
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return String::new();
        }
        let mut buf = [0u8; 128];
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), format.as_ptr(), &tm);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants() {
        let t = UNIX_EPOCH + Duration::from_millis(1_796_027_806_123);
        let u = Utc::from_system(t);
        assert_eq!(u.rfc3339(), "2026-11-30T08:36:46.123Z");
        assert_eq!(u.compact(), "20261130T083646Z");
        assert_eq!(Utc::from_system(UNIX_EPOCH).rfc3339(), "1970-01-01T00:00:00.000Z");
        // a leap day
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(Utc::from_system(leap).compact(), "20000229T000000Z");
    }

    #[test]
    fn written_times_read_back() {
        assert_eq!(unix_seconds("2026-11-30T08:36:46.123Z"), Some(1_796_027_806.123));
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(unix_seconds("2000-02-29T00:00:00.000Z"), Some(951_782_400.0));
        assert_eq!(unix_seconds("2024-02-29T00:00:00Z"), Some(1_709_164_800.0));
        for bad in [
            "",
            "2026-11-30",
            "2026-13-01T00:00:00Z",
            "2026-11-30T08:36:46",
            "x-1-1T0:0:0Z",
            "2026-02-30T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad}");
        }
        let now = Utc::now();
        let back = unix_seconds(&now.rfc3339()).unwrap();
        let sys = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        assert!((back - sys).abs() < 2.0);
    }
}
