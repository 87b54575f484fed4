//! nvbandwidth's two outputs: plain text, written as the run goes, or
//! with `-j` one JSON document at the end. Matrices print as it prints
//! them: the title, a header of column numbers (10 wide, after two
//! spaces), each row's number (2 wide) and values (10 wide, two decimals,
//! `N/A` where nothing was measured), a blank line, `SUM <key> <sum>`
//! (`&&&& PERF <key> <sum> +GB/s` with `--perfFormatter`), with `-v` the
//! minimum, maximum and mean, and a blank line.

use super::json::Json;
use crate::c_num::general;

/// The nvbandwidth release whose behaviour and output this follows.
pub const NVBANDWIDTH_VERSION: &str = "v0.8";

/// A bandwidth or latency matrix: rows x columns, `None` where nothing
/// was measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub key: String,
    pub title: String,
    pub rows: usize,
    pub cols: usize,
    pub cells: Vec<Option<f64>>,
    pub latency: bool,
}

impl Matrix {
    pub fn new(key: &str, title: &str, rows: usize, cols: usize, latency: bool) -> Matrix {
        Matrix { key: key.into(), title: title.into(), rows, cols, cells: vec![None; rows * cols], latency }
    }

    pub fn set(&mut self, row: usize, col: usize, v: f64) {
        self.cells[row * self.cols + col] = Some(v);
    }

    pub fn get(&self, row: usize, col: usize) -> Option<f64> {
        self.cells[row * self.cols + col]
    }

    /// Sum, minimum, maximum (each counting `N/A` as 0, the maximum
    /// starting from the smallest positive double) and the mean of the
    /// positive values.
    fn stats(&self) -> (f64, f64, f64, f64) {
        let (mut sum, mut min, mut max, mut count) = (0.0, f64::MAX, f64::MIN_POSITIVE, 0usize);
        for c in &self.cells {
            let v = c.unwrap_or(0.0);
            sum += v;
            min = min.min(v);
            max = max.max(v);
            count += usize::from(v > 0.0);
        }
        (sum, min, max, sum / count as f64)
    }
}

/// C++'s fixed two decimals, with its spelling of non-finite values.
fn fixed2(v: f64) -> String {
    if v.is_nan() {
        // 0/0 on x86 has its sign bit set.
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format!("{v:.2}")
}

/// Where the run's lines go.
pub struct Out {
    json: Option<Json>,
    verbose: bool,
    perf: bool,
}

impl Out {
    pub fn new(json: bool, verbose: bool, perf: bool) -> Out {
        Out { json: json.then(Json::object), verbose, perf }
    }

    pub fn is_json(&self) -> bool {
        self.json.is_some()
    }

    fn top(&mut self) -> Option<&mut Json> {
        self.json.as_mut().map(|j| j.member("nvbandwidth"))
    }

    fn text(&self, s: &str) {
        if self.json.is_none() {
            super::super::out(s);
        }
    }

    /// Verbose text (`-v`, plain text only).
    pub fn verbose(&self, s: &str) {
        if self.verbose {
            self.text(s);
        }
    }

    pub fn version(&mut self) {
        let git = format!("commbench-{}", env!("CARGO_PKG_VERSION"));
        self.text(&format!("nvbandwidth Version: {NVBANDWIDTH_VERSION}\nBuilt from Git version: {git}\n\n"));
        if let Some(t) = self.top() {
            *t.member("version") = Json::Str(NVBANDWIDTH_VERSION.into());
            *t.member("git_version") = Json::Str(git);
        }
    }

    /// The driver's CUDA version (as an integer, 12040) and the kernel
    /// driver's version.
    pub fn cuda(&mut self, cuda: i32, driver: &str) {
        self.text(&format!("CUDA Runtime Version: {cuda}\nCUDA Driver Version: {cuda}\nDriver Version: {driver}\n\n"));
        if let Some(t) = self.top() {
            *t.member("CUDA Runtime Version") = Json::Int(i64::from(cuda));
            *t.member("Driver Version") = Json::Str(driver.into());
        }
    }

    /// The host and each GPU as `<name> (<domain>:<bus>:<device>)`.
    pub fn devices(&mut self, host: &str, gpus: &[String]) {
        let mut s = format!("{host}\n");
        for (i, g) in gpus.iter().enumerate() {
            s.push_str(&format!("Device {i}: {g}\n"));
        }
        s.push('\n');
        self.text(&s);
        if let Some(t) = self.top() {
            let list = gpus.iter().enumerate().map(|(i, g)| Json::Str(format!("{i}: {g}: ({host})"))).collect();
            *t.member("GPU Device list") = Json::Array(list);
        }
    }

    pub fn warning(&mut self, s: &str) {
        self.text(&format!("{s}\n"));
        if let Some(t) = self.top() {
            *t.member("warning") = Json::Str(s.into());
        }
    }

    /// A case's status line: `Running <key>.`, or `<status>: <message>`.
    pub fn status(&mut self, key: &str, status: &str, msg: &str) {
        if status == "Running" {
            self.text(&format!("{status} {key}.\n"));
        } else {
            self.text(&format!("{status}: {msg}\n"));
        }
        if let Some(t) = self.top() {
            let mut case = Json::object();
            *case.member("name") = Json::Str(key.into());
            *case.member("status") = Json::Str(status.into());
            t.member("testcases").push(case);
        }
    }

    /// A case that failed after it began: its status, and (in JSON) a
    /// second entry as nvbandwidth adds one.
    pub fn failed(&mut self, key: &str, msg: &str) {
        self.text(&format!("Error: {msg}\n"));
        if let Some(j) = self.json.as_mut() {
            // nvbandwidth looks for its case list at the top level, finds
            // none (leaving a null there), and adds the case again.
            j.member("testcases");
            self.status(key, "Error", msg);
        }
    }

    pub fn matrix(&mut self, m: &Matrix) {
        let (sum, min, max, avg) = m.stats();
        let mut s = format!("{}\n  ", m.title);
        for c in 0..m.cols {
            s.push_str(&format!("{c:>10}"));
        }
        s.push('\n');
        for r in 0..m.rows {
            s.push_str(&format!("{r:>2}"));
            for c in 0..m.cols {
                match m.get(r, c) {
                    Some(v) => s.push_str(&format!("{:>10}", fixed2(v))),
                    None => s.push_str(&format!("{:>10}", "N/A")),
                }
            }
            s.push('\n');
        }
        s.push('\n');
        if self.perf {
            let unit = if m.latency { " -ns" } else { " +GB/s" };
            s.push_str(&format!("&&&& PERF {} {}{unit}\n", m.key, fixed2(sum)));
        } else {
            s.push_str(&format!("SUM {} {}\n", m.key, fixed2(sum)));
        }
        if self.verbose {
            s.push_str(&format!(
                "MIN {} {}\nMAX {} {}\nAVG {} {}\n",
                m.key,
                fixed2(min),
                m.key,
                fixed2(max),
                m.key,
                fixed2(avg)
            ));
        }
        s.push('\n');
        self.text(&s);
        let verbose = self.verbose;
        if let Some(t) = self.top() {
            let Some(case) = t.member("testcases").last_mut() else { return };
            for r in 0..m.rows {
                let row = (0..m.cols)
                    .map(|c| Json::Str(m.get(r, c).map(|v| general(v, 6)).unwrap_or_else(|| "N/A".into())))
                    .collect();
                case.member("bandwidth_matrix").push(Json::Array(row));
            }
            *case.member("sum") = Json::Real(sum);
            *case.member("bandwidth_description") = Json::Str(m.title.clone());
            *case.member("status") = Json::Str("Passed".into());
            if verbose {
                *case.member("min") = Json::Real(min);
                *case.member("max") = Json::Real(max);
                *case.member("average") = Json::Real(avg);
            }
        }
    }

    /// A run-stopping error: plain text on stderr; in JSON, the document
    /// with it, printed now.
    pub fn fatal(&mut self, msg: &str) {
        match self.top() {
            Some(t) => {
                *t.member("error") = Json::Str(msg.into());
                self.finish();
            }
            None => crate::diag::say(msg),
        }
    }

    /// The end of a run: the JSON document, or the closing note.
    pub fn finish(&mut self) {
        match &self.json {
            Some(j) => super::super::out(&format!("{}\n", j.styled())),
            None => self.text(
                "NOTE: These figures are what this run measured, not necessarily the platform's best.\n\
                 Drivers, clocks and the system's topology all change them.\n\n",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_sum_over_measured_cells() {
        let mut m = Matrix::new("k", "t", 2, 2, false);
        m.set(0, 1, 24.39);
        m.set(1, 0, 24.39);
        let (sum, min, max, avg) = m.stats();
        assert!((sum - 48.78).abs() < 1e-9);
        assert_eq!(min, 0.0);
        assert_eq!(max, 24.39);
        assert!((avg - 24.39).abs() < 1e-9);
        assert_eq!(fixed2(1.005), "1.00");
        assert_eq!(fixed2(f64::INFINITY), "inf");
        assert_eq!(fixed2(-f64::NAN), "-nan");
    }
}
