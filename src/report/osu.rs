//! The OSU 7.4 stdout layout: title, `# Datatype:` lines, column headers and
//! rows with OSU's widths (size `%-10d`, values `%18.2f`), optional columns
//! in OSU's order (Validation, then tail percentiles), and osu_mbw_mr's own
//! header and `-V` tables.

use std::io::{self, Write};

use super::{Row, Sink};
use crate::datatype::Datatype;
use crate::options::{Accel, Backend, WorkerCounts};
use crate::spec::{BenchSpec, MetricKind, Workers};

/// The title line with `-d`'s accelerator named where OSU names it
/// (`# OSU MPI-CUDA Latency Test v7.4`), and NCCL's collectives titled as
/// OSU's NCCL build titles them (`# OSU NCCL-CUDA Allreduce Latency Test
/// v7.4`); otherwise the spec's own (`# OSU MPI Latency Test v7.4`).
pub fn title_line(spec: &BenchSpec, accel: Option<Accel>, backend: Backend) -> String {
    let rest = spec.title.strip_prefix("OSU MPI ");
    match (accel, backend, rest) {
        (_, Backend::Nccl, Some(rest)) => {
            format!("# OSU NCCL{} {rest} v{}", Accel::Cuda.title_slot(), crate::OSU_VERSION)
        }
        (Some(a), _, Some(rest)) if spec.accel_slot => {
            format!("# OSU MPI{} {rest} v{}", a.title_slot(), crate::OSU_VERSION)
        }
        _ => spec.title_line(),
    }
}

/// Window sizes of osu_mbw_mr `-V`.
pub(crate) const VARIED_WINDOWS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// What the table shows beyond the main column.
#[derive(Clone, Debug)]
pub struct TableLayout {
    pub validation: bool,
    pub tails: Vec<u32>,
    /// osu_mbw_mr: Messages/s column (`-R 1`).
    pub print_rate: bool,
    /// osu_mbw_mr `-V`.
    pub vary_window: bool,
    pub window: usize,
    pub pairs: usize,
    /// Collectives `-f`: Min, Max and Iterations columns.
    pub full: bool,
    /// `-d`: named in the title as OSU's GPU builds do.
    pub accel: Option<Accel>,
    /// `--backend`: NCCL's collectives have their own title.
    pub backend: Backend,
    /// Processes in the job (osu_init's and osu_hello's line).
    pub np: usize,
    /// The one-sided benchmarks: the window and synchronisation OSU's
    /// header names.
    pub one_sided: Option<(crate::backend::rma::WinKind, crate::backend::rma::SyncMode)>,
    /// osu_latency_mt's threads or osu_latency_mp's forked processes.
    pub workers: Option<(Workers, WorkerCounts)>,
}

/// Writes the OSU table to `out` (stdout on rank 0).
pub(crate) struct OsuTable<W: Write> {
    out: W,
    spec: &'static BenchSpec,
    layout: TableLayout,
    /// `-V`: each size's messages/s per window, for the rate profile at the
    /// datatype's end.
    rates: Vec<(usize, Vec<f64>)>,
}

fn tail_label(p: u32, bandwidth: bool) -> String {
    let wide = usize::from(p > 9);
    if bandwidth {
        format!("{}P{p} Tail BW(MB/s)", " ".repeat(2 - wide))
    } else {
        format!("{}P{p} Tail Lat(us)", " ".repeat(3 - wide))
    }
}

impl<W: Write> OsuTable<W> {
    pub fn new(out: W, spec: &'static BenchSpec, layout: TableLayout) -> OsuTable<W> {
        OsuTable { out, spec, layout, rates: Vec::new() }
    }

    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }

    /// OSU's NCCL point-to-point tests print no title, and their header
    /// names the buffers (always on the GPU) and says `Latency (us)`.
    fn nccl_point_to_point(&self) -> bool {
        self.layout.backend == Backend::Nccl && self.spec.is_point_to_point()
    }

    /// Title lines, printed once before the first datatype.
    pub fn preamble(&mut self) -> io::Result<()> {
        if self.nccl_point_to_point() {
            return Ok(());
        }
        if self.spec.metric == MetricKind::MultiBandwidth {
            writeln!(self.out, "{}", title_line(self.spec, self.layout.accel, self.layout.backend))?;
            if self.layout.vary_window {
                writeln!(self.out, "# [ pairs: {} ] [ window size: varied ]", self.layout.pairs)?;
            } else {
                writeln!(self.out, "# [ pairs: {} ] [ window size: {} ]", self.layout.pairs, self.layout.window)?;
            }
        } else if self.layout.one_sided.is_some() {
            // The one-sided header comes whole with each datatype.
        } else if self.spec.is_startup() {
            // osu_init and osu_hello start with the title itself.
            writeln!(self.out, "{}", self.spec.title_line())?;
        } else {
            match self.layout.workers {
                // OSU's trailing space after the sender's count, too.
                Some((Workers::Threads, w)) => {
                    writeln!(self.out, "# Number of Sender threads: {} ", w.sender_threads())?;
                    writeln!(self.out, "# Number of Receiver threads: {}", w.receiver)?;
                }
                Some((Workers::Processes, w)) => {
                    writeln!(self.out, "# Number of forked processes in sender: {}", w.sender_processes())?;
                    writeln!(self.out, "# Number of forked processes in receiver: {}", w.receiver)?;
                }
                None => {}
            }
            writeln!(self.out)?;
            writeln!(self.out, "{}", title_line(self.spec, self.layout.accel, self.layout.backend))?;
            if self.spec.is_overlap() {
                writeln!(self.out, "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait")?;
                writeln!(self.out)?;
            }
        }
        self.out.flush()
    }

    /// osu_init's and osu_hello's one line. osu_init's values are whole
    /// milliseconds, as the row carries them (see bench/startup/init.rs).
    fn startup_line(&self, row: &Row) -> String {
        let ms = |us: f64| (us / 1e3).round() as u64;
        if self.spec.metric == MetricKind::Hello {
            return format!("This is a test with {} processes", self.layout.np);
        }
        let spread = row.spread.unwrap_or_default();
        format!(
            "nprocs: {}, min: {} ms, max: {} ms, avg: {} ms",
            self.layout.np,
            ms(spread.fastest.1),
            ms(spread.slowest.1),
            ms(row.avg_lat_us.unwrap_or(0.0))
        )
    }

    /// The non-blocking collectives' header: Overall, then Compute, Pure
    /// Comm. and Overlap (with `-f` also the start, test and wait times and
    /// the fastest and slowest rank's pure communication).
    fn overlap_header(&self) -> String {
        let mut h = match self.spec.metric {
            MetricKind::OverlapBarrier => String::from("# Overall(us)"),
            _ => format!("{:<10}{:>18}", "# Size", "Overall(us)"),
        };
        let cols: &[&str] = if self.layout.full {
            &[
                "Compute(us)",
                "Coll. Init(us)",
                "MPI_Test(us)",
                "MPI_Wait(us)",
                "Pure Comm.(us)",
                "Min Comm.(us)",
                "Max Comm.(us)",
                "Overlap(%)",
            ]
        } else {
            &["Compute(us)", "Pure Comm.(us)", "Overlap(%)"]
        };
        for c in cols {
            h.push_str(&format!("{c:>18}"));
        }
        if self.layout.validation {
            h.push_str(&format!("{:>18}", "Validation"));
        }
        for &p in &self.layout.tails {
            h.push_str(&tail_label(p, false));
        }
        h
    }

    fn overlap_row(&self, row: &Row) -> String {
        let o = row.overlap.unwrap_or_default();
        let mut s = match self.spec.metric {
            MetricKind::OverlapBarrier => format!("{:>13.2}", o.overall_us),
            _ => format!("{:<10}{:>18.2}", row.size, o.overall_us),
        };
        let vals: Vec<f64> = if self.layout.full {
            vec![o.compute_us, o.init_us, o.test_us, o.wait_us, o.pure_us, o.min_pure_us, o.max_pure_us, o.overlap_pct]
        } else {
            vec![o.compute_us, o.pure_us, o.overlap_pct]
        };
        for v in vals {
            s.push_str(&format!("{v:>18.2}"));
        }
        if let Some(ok) = row.validation {
            s.push_str(&format!("{:>18}", self.verdict(ok)));
        }
        for (_, v) in &row.tails {
            s.push_str(&format!("{v:>18.2}"));
        }
        s
    }

    fn header(&self) -> String {
        if self.spec.is_overlap() {
            return self.overlap_header();
        }
        let bandwidth = matches!(self.spec.metric, MetricKind::Bandwidth | MetricKind::MultiBandwidth);
        let mut h = String::new();
        match self.spec.metric {
            // No size column; the title fills 17 characters.
            MetricKind::Barrier | MetricKind::Overlap | MetricKind::OverlapBarrier => h.push_str("# Avg Latency(us)"),
            _ => h.push_str(&format!("{:<10}", "# Size")),
        }
        match self.spec.metric {
            MetricKind::Barrier
            | MetricKind::Startup
            | MetricKind::Hello
            | MetricKind::Overlap
            | MetricKind::OverlapBarrier => {}
            MetricKind::Latency if self.nccl_point_to_point() || self.layout.one_sided.is_some() => {
                h.push_str(&format!("{:>18}", "Latency (us)"))
            }
            MetricKind::Latency | MetricKind::Collective => h.push_str(&format!("{:>18}", "Avg Latency(us)")),
            // OSU's congestion tests print MB/s under a latency label.
            MetricKind::Bandwidth if self.spec.labels_bw_as_latency() => {
                h.push_str(&format!("{:>18}", "Avg Latency(us)"))
            }
            MetricKind::Bandwidth => h.push_str(&format!("{:>18}", "Bandwidth (MB/s)")),
            MetricKind::MultiBandwidth => {
                h.push_str(&format!("{:>18}", "MB/s"));
                if self.layout.print_rate {
                    h.push_str(&format!("{:>18}", "Messages/s"));
                }
            }
        }
        if self.layout.full {
            h.push_str(&format!("{:>18}{:>18}{:>12}", "Min Latency(us)", "Max Latency(us)", "Iterations"));
        }
        if self.layout.validation {
            h.push_str(&format!("{:>18}", "Validation"));
        }
        for &p in &self.layout.tails {
            h.push_str(&tail_label(p, bandwidth && !self.spec.labels_bw_as_latency()));
        }
        h
    }

    fn windows_line() -> String {
        let mut s = String::from("#      ");
        for w in VARIED_WINDOWS {
            s.push_str(&format!("  {w:>10}"));
        }
        s
    }

    /// The Validation column's word: OSU's one-sided atomics write
    /// `passed`/`failed`, its other benchmarks `Pass`/`Fail`.
    fn verdict(&self, ok: bool) -> &'static str {
        match (self.layout.one_sided.is_some(), ok) {
            (true, true) => "passed",
            (true, false) => "failed",
            (false, true) => "Pass",
            (false, false) => "Fail",
        }
    }

    fn format_row(&self, row: &Row) -> String {
        if self.spec.is_startup() {
            return self.startup_line(row);
        }
        if self.spec.is_overlap() {
            return self.overlap_row(row);
        }
        let mut s = match self.spec.metric {
            MetricKind::Barrier | MetricKind::Overlap | MetricKind::OverlapBarrier => String::new(),
            _ => format!("{:<10}", row.size),
        };
        match self.spec.metric {
            MetricKind::Barrier | MetricKind::Overlap | MetricKind::OverlapBarrier => {
                s.push_str(&format!("{:>17.2}", row.avg_lat_us.unwrap_or(0.0)))
            }
            MetricKind::Startup | MetricKind::Hello => {}
            // OSU's osu_latency_mp writes the value 10 wide unless the
            // Validation column follows.
            MetricKind::Latency if self.layout.workers.is_some_and(|(w, _)| w == Workers::Processes) => {
                let width = if row.validation.is_some() { 18 } else { 10 };
                s.push_str(&format!("{:>width$.2}", row.avg_lat_us.unwrap_or(0.0)))
            }
            MetricKind::Latency | MetricKind::Collective => {
                s.push_str(&format!("{:>18.2}", row.avg_lat_us.unwrap_or(0.0)))
            }
            MetricKind::Bandwidth => s.push_str(&format!("{:>18.2}", row.bw_mbps.unwrap_or(0.0))),
            MetricKind::MultiBandwidth => {
                s.push_str(&format!("{:>18.2}", row.bw_mbps.unwrap_or(0.0)));
                if self.layout.print_rate {
                    s.push_str(&format!("{:>18.2}", row.msg_rate.unwrap_or(0.0)));
                }
            }
        }
        if self.layout.full {
            let spread = row.spread.unwrap_or_default();
            s.push_str(&format!("{:>18.2}{:>18.2}{:>12}", spread.fastest.1, spread.slowest.1, row.iterations));
        }
        if let Some(ok) = row.validation {
            s.push_str(&format!("{:>18}", self.verdict(ok)));
        }
        for (_, v) in &row.tails {
            s.push_str(&format!("{v:>18.2}"));
        }
        s
    }

    /// `-V`: one line per size, its bandwidth at every window.
    fn varied_line(rows: &[Row]) -> String {
        let mut s = format!("{:<7}", rows.first().map_or(0, |r| r.size));
        for r in rows {
            s.push_str(&format!("  {:>10.2}", r.bw_mbps.unwrap_or(0.0)));
        }
        s
    }
}

impl<W: Write> Sink for OsuTable<W> {
    fn begin_datatype(&mut self, dt: Datatype) -> io::Result<()> {
        if self.layout.vary_window {
            self.rates.clear();
            writeln!(self.out)?;
            writeln!(self.out, "# Uni-directional Bandwidth (MB/sec)")?;
            writeln!(self.out, "# Datatype: {}.", dt.mpi_name())?;
            writeln!(self.out, "{}", Self::windows_line())?;
        } else {
            if let Some((win, sync)) = self.layout.one_sided {
                // OSU's one-sided header, repeated for every -T type: no
                // blank line first; osu_get_acc_latency names no datatype.
                writeln!(self.out, "{}", self.spec.title_line())?;
                writeln!(self.out, "# Window creation: {}", win.mpi_call())?;
                writeln!(self.out, "# Synchronization: {}", sync.mpi_calls())?;
                if self.spec.one_sided.is_none_or(|r| r.datatype_line) {
                    writeln!(self.out, "# Datatype: {}.", dt.mpi_name())?;
                }
            } else if self.nccl_point_to_point() {
                writeln!(self.out, "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)")?;
            } else if let Some((Workers::Threads, w)) = self.layout.workers {
                // Every sender thread of OSU's prints its own header.
                for _ in 1..w.sender_threads() {
                    writeln!(self.out, "# Datatype: {}.", dt.mpi_name())?;
                    writeln!(self.out, "{}", self.header())?;
                }
                writeln!(self.out, "# Datatype: {}.", dt.mpi_name())?;
            } else if self.spec.typed() {
                writeln!(self.out, "# Datatype: {}.", dt.mpi_name())?;
            }
            writeln!(self.out, "{}", self.header())?;
        }
        self.out.flush()
    }

    /// A size's line; with `-V` one line for all its windows, once every
    /// window has run (a size cut short by a failure prints none, as OSU).
    fn point(&mut self, rows: &[Row]) -> io::Result<()> {
        if self.layout.vary_window {
            if rows.len() == VARIED_WINDOWS.len() {
                writeln!(self.out, "{}", Self::varied_line(rows))?;
                self.rates.push((rows[0].size, rows.iter().map(|r| r.msg_rate.unwrap_or(0.0)).collect()));
            }
            return self.out.flush();
        }
        for row in rows {
            let line = self.format_row(row);
            writeln!(self.out, "{line}")?;
        }
        self.out.flush()
    }

    fn end_datatype(&mut self) -> io::Result<()> {
        if self.layout.vary_window && self.layout.print_rate {
            writeln!(self.out)?;
            writeln!(self.out, "# Message Rate Profile")?;
            writeln!(self.out, "{}", Self::windows_line())?;
            for (size, rates) in &self.rates {
                let mut s = format!("{size:<7}");
                for r in rates {
                    s.push_str(&format!("  {r:>10.2}"));
                }
                writeln!(self.out, "{s}")?;
            }
            self.out.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
