//! Reader of OSU Micro-Benchmarks text output, from 3.x to 7.x: titles,
//! `# Datatype:` lines (before or after the column header), the mbw_mr pairs
//! and window line, column headers and the size rows under them. Everything
//! else (launcher banners, warnings, prompts, several outputs in one file)
//! is passed over. Lines that start like a data row of an open table but do
//! not fit its columns become notes: the reader never guesses a value.

use super::model::{Memory, MemoryInfo, Note, Parsed, SizeRow, Table};
use crate::bench::registry;
use crate::bench::startup::init::INIT;

/// A column of an OSU table header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Column {
    Size,
    Latency,
    MinLatency,
    MaxLatency,
    Iterations,
    Bandwidth,
    MessageRate,
    Validation,
    TransmitSize,
    /// The non-blocking collectives' compute time, pure communication
    /// time and overlap percentage (overall time is `Latency`).
    Compute,
    PureComm,
    Overlap,
    /// A number read past (the non-blocking collectives' other parts).
    Other,
    /// `P50 Tail Lat(us)`, `P99 Tail BW(MB/s)`: the percentile label.
    Tail(String),
}

/// Header texts, longest alternatives first where one is a prefix of another.
const HEADER_WORDS: &[(&str, Column)] = &[
    ("Size", Column::Size),
    ("Avg Latency(us)", Column::Latency),
    ("Avg Latency (us)", Column::Latency),
    ("Latency (us)", Column::Latency),
    ("Latency(us)", Column::Latency),
    ("Min Latency(us)", Column::MinLatency),
    ("Max Latency(us)", Column::MaxLatency),
    ("Iterations", Column::Iterations),
    ("Bandwidth (MB/s)", Column::Bandwidth),
    ("Bandwidth(MB/s)", Column::Bandwidth),
    ("MB/s", Column::Bandwidth),
    ("Messages/s", Column::MessageRate),
    ("Validation", Column::Validation),
    ("Transmit Size", Column::TransmitSize),
    // The non-blocking collectives: the overall time is what is compared.
    ("Overall(us)", Column::Latency),
    ("Compute(us)", Column::Compute),
    ("Coll. Init(us)", Column::Other),
    ("MPI_Test(us)", Column::Other),
    ("MPI_Wait(us)", Column::Other),
    ("Pure Comm.(us)", Column::PureComm),
    ("Min Comm.(us)", Column::Other),
    ("Max Comm.(us)", Column::Other),
    ("Overlap(%)", Column::Overlap),
];

/// Benchmark name and version from a title line such as
/// `# OSU MPI-CUDA Latency Test v5.8`; `None` if the line is no title.
pub(crate) fn parse_title(line: &str) -> Option<(String, String)> {
    let s = line.trim().trim_start_matches('\\').trim_start_matches('#').trim();
    let rest = s.strip_prefix("OSU ")?;
    let (name_part, version) = rest.rsplit_once(" v")?;
    if !version.starts_with(|c: char| c.is_ascii_digit()) || version.contains(char::is_whitespace) {
        return None;
    }
    if !name_part.ends_with("Test") {
        return None;
    }
    // The one-sided titles name the call in place of the API word
    // (`MPI_Put Latency Test`): those match a title of ours whole.
    if let Some(b) = registry::specs().find(|b| b.title.strip_prefix("OSU ") == Some(name_part)) {
        return Some((b.name.to_string(), version.to_string()));
    }
    // Drop the API word: `MPI`, `MPI-CUDA`, `MPI-ROCM`, `MPI-ZE` ...
    let (_, test) = name_part.split_once(' ')?;
    let name = registry::specs()
        .find(|b| b.title.strip_prefix("OSU MPI ") == Some(test))
        .map(|b| b.name.to_string())
        .unwrap_or_else(|| slug(test));
    Some((name, version.to_string()))
}

/// The API word of a title (`MPI`, `MPI-CUDA`, `MPI-ROCM`, `MPI-ZE` ...).
pub(crate) fn title_api(line: &str) -> Option<&str> {
    let s = line.trim().trim_start_matches('\\').trim_start_matches('#').trim();
    s.strip_prefix("OSU ")?.split_whitespace().next()
}

/// Where OSU says the buffers were: the buffer line (`Send Buffer on
/// DEVICE (D) and Receive Buffer on HOST (H)`) when there is one, else the
/// title's API word (`MPI-CUDA`: device buffers; collectives print no
/// buffer line), else host.
fn memory_from(api: Option<&str>, buffers: Option<&(String, String)>) -> Option<MemoryInfo> {
    if let Some((send, recv)) = buffers {
        let kind = |w: &str| match w {
            "DEVICE" => Some(Memory::Device),
            "MANAGED" => Some(Memory::Managed),
            "HOST" => Some(Memory::Host),
            _ => None,
        };
        if let (Some(s), Some(r)) = (kind(send), kind(recv)) {
            // One device side makes it a device run; host only when both are.
            let memory = [s, r].into_iter().find(|m| *m == Memory::Device).unwrap_or(s.max(r));
            let from = format!("buffer line 'Send Buffer on {send}, Receive Buffer on {recv}'");
            return Some(MemoryInfo { memory, from, weak: false });
        }
    }
    let api = api?;
    if api == "MPI" {
        return Some(MemoryInfo { memory: Memory::Host, from: "title 'OSU MPI'".into(), weak: true });
    }
    Some(MemoryInfo { memory: Memory::Device, from: format!("title 'OSU {api}'"), weak: false })
}

/// The two locations of a buffer line, e.g. (`DEVICE`, `HOST`).
fn parse_buffer_line(body: &str) -> Option<(String, String)> {
    let word = |key: &str| {
        let (_, rest) = body.split_once(key)?;
        rest.split_whitespace().next().map(|w| w.trim_end_matches(',').to_string())
    };
    Some((word("Send Buffer on ")?, word("Receive Buffer on ")?))
}

/// `Foo_bar Latency Test` -> `osu_foo_bar`.
fn slug(test: &str) -> String {
    let t = test.trim_end_matches(" Test").trim_end_matches(" Latency");
    let s: String = t.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    format!("osu_{}", s.to_ascii_lowercase())
}

/// The columns of a header line (without its `#`); `None` if it is not one.
pub(crate) fn parse_header(body: &str) -> Option<Vec<Column>> {
    let mut rest = body.trim();
    let mut cols = Vec::new();
    while !rest.is_empty() {
        let (col, len) = match_column(rest)?;
        cols.push(col);
        rest = rest[len..].trim_start();
    }
    let values = cols.iter().filter(|c| **c != Column::Size).count();
    let sizes = cols.iter().filter(|c| **c == Column::Size).count();
    let size_first = sizes == 0 || cols.first() == Some(&Column::Size);
    (values > 0 && sizes <= 1 && size_first).then_some(cols)
}

fn match_column(s: &str) -> Option<(Column, usize)> {
    let ends_word = |n: usize| s[n..].chars().next().is_none_or(char::is_whitespace);
    let fixed =
        HEADER_WORDS.iter().filter(|(w, _)| s.starts_with(w) && ends_word(w.len())).max_by_key(|(w, _)| w.len());
    if let Some((w, c)) = fixed {
        return Some((c.clone(), w.len()));
    }
    // `P<number> Tail <unit>`
    let digits = s.strip_prefix('P')?;
    let n = digits.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    if n == 0 {
        return None;
    }
    let after = digits[n..].strip_prefix(" Tail ")?;
    let unit_len = after.find(char::is_whitespace).unwrap_or(after.len());
    if unit_len == 0 {
        return None;
    }
    let len = 1 + n + " Tail ".len() + unit_len;
    Some((Column::Tail(format!("P{}", &digits[..n])), len))
}

/// Fills a point from a data row; the error says which cell did not fit.
pub(crate) fn parse_row(line: &str, cols: &[Column]) -> Result<SizeRow, String> {
    let cells: Vec<&str> = line.split_whitespace().collect();
    if cells.len() != cols.len() {
        return Err(format!("{} cells where the header has {} columns", cells.len(), cols.len()));
    }
    let mut p = SizeRow::default();
    for (cell, col) in cells.iter().zip(cols) {
        let num = || -> Result<f64, String> {
            cell.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && cell.contains(|c: char| c.is_ascii_digit()))
                .ok_or_else(|| format!("'{cell}' is not a number"))
        };
        let int = || cell.parse::<u64>().map_err(|_| format!("'{cell}' is not a whole number"));
        match col {
            Column::Size => p.size = int()?,
            Column::Latency => p.latency_us = Some(num()?),
            Column::MinLatency => p.min_lat_us = Some(num()?),
            Column::MaxLatency => p.max_lat_us = Some(num()?),
            Column::Iterations => p.iterations = Some(int()?),
            Column::Bandwidth => p.bw_mbps = Some(num()?),
            Column::MessageRate => p.msg_rate = Some(num()?),
            Column::TransmitSize => {
                int()?;
            }
            Column::Validation => {
                p.validation = Some(match *cell {
                    "Pass" => true,
                    "Fail" => false,
                    _ => return Err(format!("'{cell}' is not Pass or Fail")),
                })
            }
            Column::Tail(label) => p.tails.push((label.clone(), num()?)),
            Column::Compute => p.compute_us = Some(num()?),
            Column::PureComm => p.pure_comm_us = Some(num()?),
            Column::Overlap => p.overlap_pct = Some(num()?),
            Column::Other => {
                num()?;
            }
        }
    }
    Ok(p)
}

/// What the lines before a table said about it.
#[derive(Default)]
struct Context {
    benchmark: Option<String>,
    version: Option<String>,
    title_line: usize,
    tables_since_title: usize,
    pairs: Option<u64>,
    window: Option<String>,
    datatype: Option<String>,
    /// The title's API word (`MPI`, `MPI-CUDA` ...).
    api: Option<String>,
    /// The buffer line's send and receive locations.
    buffers: Option<(String, String)>,
}

/// The table being filled.
struct Open {
    table: Table,
    cols: Vec<Column>,
}

enum State {
    None,
    Table(Box<Open>),
    /// A block whose rows are recognised but not read (mbw_mr `-V`, or a
    /// header with no title before it).
    Skip,
}

struct Reader<'a> {
    path: &'a str,
    label: &'a str,
    ctx: Context,
    state: State,
    out: Parsed,
    /// Lines taken as data rows of an open table (read or noted).
    data_rows: usize,
}

impl Reader<'_> {
    fn note(&mut self, line: usize, message: String) {
        self.out.notes.push(Note { path: self.path.to_string(), line: Some(line), message });
    }

    fn close(&mut self) {
        if let State::Table(open) = std::mem::replace(&mut self.state, State::None) {
            if open.table.points.is_empty() {
                let line = open.table.line.unwrap_or(0);
                self.note(line, format!("{} table has a header but no data rows", open.table.benchmark));
            } else {
                self.out.tables.push(open.table);
            }
        }
        self.state = State::None;
    }

    fn end_title(&mut self) {
        self.close();
        if let Some(b) = &self.ctx.benchmark {
            if self.ctx.tables_since_title == 0 {
                let (line, b) = (self.ctx.title_line, b.clone());
                self.note(line, format!("{b} title with no table after it"));
            }
        }
    }

    fn line(&mut self, n: usize, raw: &str) {
        let s = raw.trim();
        let s = s.strip_prefix('\\').filter(|r| r.starts_with('#')).unwrap_or(s);
        if s.is_empty() {
            return;
        }
        if let Some((bench, version)) = parse_title(s) {
            // OSU 7.1 mbw_mr prints its title twice: the same title with
            // nothing between is one output.
            let repeat = self.ctx.benchmark.as_deref() == Some(bench.as_str())
                && self.ctx.tables_since_title == 0
                && matches!(self.state, State::None);
            if !repeat {
                self.end_title();
            }
            let api = title_api(s).map(String::from);
            self.ctx =
                Context { benchmark: Some(bench), version: Some(version), title_line: n, api, ..Context::default() };
            return;
        }
        if let Some(body) = s.strip_prefix('#') {
            self.comment(n, body.trim());
            return;
        }
        self.row(n, s);
    }

    fn comment(&mut self, n: usize, body: &str) {
        if let Some(dt) = body.strip_prefix("Datatype:") {
            let dt = dt.trim().trim_end_matches('.').to_string();
            match &mut self.state {
                // 7.1 to 7.3 print the datatype after the column header.
                State::Table(open) if open.table.points.is_empty() => open.table.datatype = Some(dt),
                _ => self.ctx.datatype = Some(dt),
            }
            return;
        }
        if let Some(b) = parse_buffer_line(body) {
            self.ctx.buffers = Some(b);
            return;
        }
        if body.starts_with("[ pairs:") {
            let field = |key: &str| {
                body.split_once(key).map(|(_, r)| r.trim_start().split(']').next().unwrap_or("").trim().to_string())
            };
            self.ctx.pairs = field("pairs:").and_then(|p| p.parse().ok());
            self.ctx.window = field("window size:");
            return;
        }
        let words: Vec<&str> = body.split_whitespace().collect();
        if !words.is_empty() && words.iter().all(|w| w.parse::<u64>().is_ok()) {
            // mbw_mr -V: a matrix of sizes against window sizes.
            self.close();
            self.state = State::Skip;
            self.ctx.tables_since_title += 1;
            self.note(n, "window-varied matrix (osu_mbw_mr -V) is not read".to_string());
            return;
        }
        if let Some(mut cols) = parse_header(body) {
            self.close();
            let Some(mut bench) = self.ctx.benchmark.clone() else {
                self.state = State::Skip;
                self.note(n, "column header with no OSU title line before it: table not read".to_string());
                return;
            };
            if bench == crate::bench::pt2pt::bw::SPEC.name && cols.contains(&Column::Latency) {
                // OSU's congestion tests title themselves as osu_bw and
                // print MB/s under latency labels; which of the two it was
                // the output does not say.
                bench = super::context::FAN_UNNAMED.into();
                for c in cols.iter_mut().filter(|c| **c == Column::Latency) {
                    *c = Column::Bandwidth;
                }
                self.note(
                    n,
                    "OSU congestion table (osu_bw_fan_in or osu_bw_fan_out: MB/s under latency labels) read as \
                     bandwidth of osu_bw_fan"
                        .to_string(),
                );
            }
            self.ctx.tables_since_title += 1;
            let table = Table {
                benchmark: bench,
                datatype: self.ctx.datatype.take(),
                osu_version: self.ctx.version.clone(),
                sized: cols.first() == Some(&Column::Size),
                pairs: self.ctx.pairs,
                window: self.ctx.window.clone(),
                np: None,
                memory: memory_from(self.ctx.api.as_deref(), self.ctx.buffers.as_ref()),
                points: Vec::new(),
                path: self.path.to_string(),
                line: Some(n),
                run_label: self.label.to_string(),
                run: None,
                band_for_one_run: false,
            };
            self.state = State::Table(Box::new(Open { table, cols }));
        }
        // Any other `#` line (buffer placement, section headings, a
        // harness's own comments) says nothing we compare.
    }

    /// osu_init's one line, `nprocs: N, min: A ms, max: B ms, avg: C ms`:
    /// a table of one unsized point, the average as its latency.
    fn init_line(&mut self, n: usize, s: &str) -> bool {
        let Some(rest) = s.strip_prefix("nprocs:") else { return false };
        if self.ctx.benchmark.as_deref() != Some(INIT.name) {
            return false;
        }
        let field = |key: &str| -> Option<f64> {
            let (_, r) = rest.split_once(key)?;
            r.split_whitespace().next()?.trim_end_matches(',').parse().ok()
        };
        let np = rest.split(',').next().and_then(|w| w.trim().parse::<u64>().ok());
        let (Some(min), Some(max), Some(avg)) = (field("min:"), field("max:"), field("avg:")) else {
            self.note(n, format!("not osu_init's line: '{s}'"));
            return true;
        };
        self.close();
        self.ctx.tables_since_title += 1;
        let point = SizeRow {
            latency_us: Some(avg * 1e3),
            min_lat_us: Some(min * 1e3),
            max_lat_us: Some(max * 1e3),
            ..SizeRow::default()
        };
        self.out.tables.push(Table {
            benchmark: INIT.name.into(),
            datatype: None,
            osu_version: self.ctx.version.clone(),
            sized: false,
            pairs: None,
            window: None,
            np,
            memory: memory_from(self.ctx.api.as_deref(), None),
            points: vec![point],
            path: self.path.to_string(),
            line: Some(n),
            run_label: self.label.to_string(),
            run: None,
            band_for_one_run: false,
        });
        true
    }

    fn row(&mut self, n: usize, s: &str) {
        if self.init_line(n, s) {
            return;
        }
        let looks_numeric = s.split_whitespace().next().is_some_and(|w| w.parse::<f64>().is_ok());
        if looks_numeric && matches!(self.state, State::Table(_)) {
            self.data_rows += 1;
        }
        match &mut self.state {
            State::Table(open) => match parse_row(s, &open.cols) {
                Ok(p) => open.table.points.push(p),
                Err(why) if looks_numeric => {
                    let b = open.table.benchmark.clone();
                    self.note(n, format!("not a data row of {b} ({why}): '{s}'"));
                }
                Err(_) => {}
            },
            State::Skip | State::None => {}
        }
    }
}

/// Reads every OSU output in `text`. `path` and `label` name the input in
/// tables and notes. A last line with no newline that is a data row of an
/// open table is an output cut off in the middle of that row (its value
/// may have lost digits): it goes to `cut`, as a CSV cut short does.
pub fn parse(text: &str, path: &str, label: &str) -> Parsed {
    let mut r =
        Reader { path, label, ctx: Context::default(), state: State::None, out: Parsed::default(), data_rows: 0 };
    let lines = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        let before = r.data_rows;
        r.line(i + 1, line);
        if i + 1 == lines && !text.ends_with('\n') && r.data_rows > before {
            r.out.cut.push(Note::cut_last_line(path, i + 1));
        }
    }
    r.end_title();
    r.out
}

#[cfg(test)]
mod tests;
