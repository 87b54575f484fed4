//! nccl-tests' alltoallv settings: `NCCL_TESTS_ALLTOALLV_SPREAD`,
//! `_MATRIX_FILE`, `_MATRIX_SCALE` and `_PRINT_SUMMARY` read as its
//! binaries read them, and the matrix file parsed with its rules and its
//! lines for what it refuses (a value that is not a number or is
//! negative, a ragged row, a matrix that is empty or not square).

use std::path::Path;

use crate::c_num::{atoi, strtod};
use crate::report::nccl_tests::c_general;
use crate::traffic::{Matrix, Traffic, ALIGN};

/// A variable's number when the whole value is one (strtod took every
/// byte and it is in a double's range; NaN is no spread or scale), else
/// None: nccl-tests then keeps its default.
fn whole_number(value: Option<String>) -> Option<f64> {
    let v = value?;
    match strtod(&v) {
        Some((x, taken)) if taken == v.len() && !x.is_nan() => Some(x),
        _ => None,
    }
}

/// The pattern and whether each cell prints its summary, from the
/// environment `get` gives; `Err` is nccl-tests' line for a matrix file
/// it cannot use.
pub(crate) fn read(get: impl Fn(&str) -> Option<String>) -> Result<(Traffic, bool), String> {
    let summary = get("NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY").is_some_and(|v| atoi(&v) != 0);
    let Some(file) = get("NCCL_TESTS_ALLTOALLV_MATRIX_FILE") else {
        let spread = whole_number(get("NCCL_TESTS_ALLTOALLV_SPREAD")).unwrap_or(1.0).clamp(0.0, 1.0);
        return Ok((Traffic::Generated { spread }, summary));
    };
    let scale = whole_number(get("NCCL_TESTS_ALLTOALLV_MATRIX_SCALE")).unwrap_or(1.0).max(0.0);
    let unable = |what: &str| format!("Unable to {what} alltoallv traffic matrix file {file}.");
    let bytes = crate::input_file::read(Path::new(&file)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => unable("open"),
        _ => unable("read"),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let matrix = parse(&text, &file, scale)?;
    Ok((Traffic::Matrix(matrix), summary))
}

/// The matrix in `text` (whitespace-separated numbers, one row per line)
/// from `file`, each value times `scale` rounded down to a multiple of
/// [`ALIGN`] bytes; `Err` is nccl-tests' line for what is wrong.
pub(crate) fn parse(text: &str, file: &str, scale: f64) -> Result<Matrix, String> {
    let (mut rows, mut cols, mut in_row) = (0usize, 0usize, 0usize);
    let mut values = Vec::new();
    let ragged = |rows: usize, cols: usize, got: usize| {
        format!(
            "Invalid alltoallv traffic matrix column count in file {file} row {rows}. Expected {cols} columns, got {got}."
        )
    };
    let bad = |rows: usize, col: usize, why: &str| {
        format!("Invalid alltoallv traffic matrix value at row {rows} col {col} in file {file}.{why}")
    };
    let end_row = |rows: &mut usize, cols: &mut usize, in_row: &mut usize| {
        if *rows == 0 {
            *cols = *in_row;
        } else if *in_row != *cols {
            return Err(ragged(*rows, *cols, *in_row));
        }
        *in_row = 0;
        *rows += 1;
        Ok(())
    };
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == 0x0b {
            if c == b'\n' && in_row > 0 {
                end_row(&mut rows, &mut cols, &mut in_row)?;
            }
            i += 1;
            continue;
        }
        let Some((v, taken)) = strtod(&text[i..]) else { return Err(bad(rows, in_row, "")) };
        if b.get(i + taken).is_some_and(|c| !(c.is_ascii_whitespace() || *c == 0x0b)) || v.is_nan() {
            return Err(bad(rows, in_row, ""));
        }
        if v < 0.0 {
            return Err(bad(rows, in_row, " Value must be non-negative."));
        }
        let scaled = v * scale;
        if scaled >= u64::MAX as f64 {
            return Err(bad(
                rows,
                in_row,
                &format!(" Value overflow (value={} scale={}).", c_general(v), c_general(scale)),
            ));
        }
        values.push((scaled as u64) & !(ALIGN - 1));
        in_row += 1;
        i += taken;
    }
    if in_row > 0 {
        end_row(&mut rows, &mut cols, &mut in_row)?;
    }
    if rows == 0 {
        return Err(format!("Invalid alltoallv traffic matrix, file {file} is empty."));
    }
    if rows != cols {
        return Err(format!("Invalid alltoallv traffic matrix, file {file} must be square (got {rows}x{cols})."));
    }
    Ok(Matrix { file: file.to_string(), scale, dim: rows, bytes: values })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_variables_read_as_nccl_tests_reads_them() {
        assert_eq!(read(env(&[])).unwrap(), (Traffic::Generated { spread: 1.0 }, false));
        for (v, want) in [("0.25", 0.25), ("0", 0.0), ("7", 1.0), ("-2", 0.0), ("0.5x", 1.0), ("", 1.0), ("nan", 1.0)] {
            let (t, _) = read(env(&[("NCCL_TESTS_ALLTOALLV_SPREAD", v)])).unwrap();
            assert_eq!(t, Traffic::Generated { spread: want }, "{v:?}");
        }
        for (v, want) in [("1", true), ("0", false), ("yes", false), ("2", true)] {
            assert_eq!(read(env(&[("NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY", v)])).unwrap().1, want, "{v:?}");
        }
        assert_eq!(
            read(env(&[("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", "/nonexistent/m.txt")])).unwrap_err(),
            "Unable to open alltoallv traffic matrix file /nonexistent/m.txt."
        );
    }

    #[test]
    fn a_matrix_is_scaled_and_rounded_to_16_bytes() {
        let m = parse("100  200  150\n50   100  75\n300  150  200\n", "t.txt", 1.0).unwrap();
        assert_eq!((m.dim, m.bytes.clone()), (3, vec![96, 192, 144, 48, 96, 64, 288, 144, 192]));
        // Blank lines, tabs, exponents and C's hexadecimal, scaled by 2.
        let m = parse("  1e3\t0x20 \n\n 2.5 8", "t", 2.0).unwrap();
        assert_eq!((m.dim, m.bytes, m.scale), (2, vec![2000, 64, 0, 16], 2.0));
    }

    #[test]
    fn each_refusal_is_nccl_tests_line() {
        for (text, line) in [
            ("1 2\n3 x\n", "Invalid alltoallv traffic matrix value at row 1 col 1 in file f."),
            ("1 2\n3 4a\n", "Invalid alltoallv traffic matrix value at row 1 col 1 in file f."),
            (
                "1 -2\n3 4\n",
                "Invalid alltoallv traffic matrix value at row 0 col 1 in file f. Value must be non-negative.",
            ),
            (
                "1 2 3\n4 5\n",
                "Invalid alltoallv traffic matrix column count in file f row 1. Expected 3 columns, got 2.",
            ),
            ("1 2\n3 4\n5 6\n", "Invalid alltoallv traffic matrix, file f must be square (got 3x2)."),
            (" \n\n", "Invalid alltoallv traffic matrix, file f is empty."),
            (
                "inf 1\n1 1\n",
                "Invalid alltoallv traffic matrix value at row 0 col 0 in file f. Value overflow (value=inf scale=1).",
            ),
        ] {
            assert_eq!(parse(text, "f", 1.0).unwrap_err(), line, "{text:?}");
        }
        assert_eq!(c_general(1.5e300), "1.5e+300");
        assert_eq!(c_general(0.25), "0.25");
        assert_eq!(c_general(123456789.0), "1.23457e+08");
    }
}
