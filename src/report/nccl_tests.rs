//! nccl-tests' stdout layout (v2.19.6) and its bandwidth arithmetic, as pure
//! functions that return lines without a newline; the caller writes them.
//!
//! A run prints, in order: [`preamble`], [`devices`], [`header`], one [`row`]
//! per size and the [`footer`] built from a [`Totals`] that saw every cell.
//! Numbers in the time and bandwidth columns go through [`fit`], which keeps
//! them inside their column the way nccl-tests does. Trailing spaces that
//! nccl-tests leaves on some lines (where its optional timestamp column or
//! min-bandwidth verdict would go) are kept, so the text compares byte for
//! byte.
//!
//! Not covered: the version line (it names nccl-tests and NCCL builds), the
//! optional `-z`, `-I`, `-p` and `-M` lines, the `-C`, `-S` and `-I` columns,
//! and the final `# error: ...` line.

#[cfg(test)]
mod tests;

use crate::options::Blocking;
use crate::spec::{CollectiveCall, Op};

/// Width of the `size` column, bytes.
const SIZE_W: usize = 12;
/// Width of the `count` column, elements.
const COUNT_W: usize = 12;
/// Width of the `type` column.
const TYPE_W: usize = 8;
/// Width of the `redop` column.
const REDOP_W: usize = 6;
/// Width of the `root` column.
const ROOT_W: usize = 6;
/// Width of each `time` column, microseconds.
const TIME_W: usize = 7;
/// Width of each `algbw` and `busbw` column, GB/s.
const BW_W: usize = 6;
/// Width of each `#wrong` column.
const WRONG_W: usize = 6;
/// What separates two columns.
const GAP: &str = "  ";

/// The collectives commbench measures in nccl-tests' manner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// `ncclAllReduce`.
    AllReduce,
    /// `ncclAllGather`.
    AllGather,
    /// `ncclReduceScatter`.
    ReduceScatter,
    /// `ncclAlltoAll` (nccl-tests' alltoall).
    AllToAll,
    /// `ncclBroadcast`.
    Broadcast,
    /// `ncclReduce`.
    Reduce,
    /// Each rank sends to the next and receives from the previous.
    SendRecv,
    /// `ncclGather` (nccl-tests' gather: every rank's block to the root).
    Gather,
    /// `ncclScatter` (a block of the root's buffer to every rank).
    Scatter,
    /// An allgather by hypercube exchanges of grouped sends and receives.
    HyperCube,
    /// An all-to-all of a traffic pattern's amounts per pair
    /// ([`crate::traffic`]), as grouped sends and receives.
    AllToAllV,
}

impl Collective {
    /// Every collective, in nccl-tests' build order.
    #[cfg_attr(not(test), allow(dead_code, reason = "the nccl-tests binaries (issue 43) use it; unit tests pin it"))]
    pub const ALL: [Collective; 11] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::Broadcast,
        Collective::ReduceScatter,
        Collective::Reduce,
        Collective::AllToAll,
        Collective::SendRecv,
        Collective::Gather,
        Collective::Scatter,
        Collective::HyperCube,
        Collective::AllToAllV,
    ];

    /// The nccl-tests binary that runs this collective.
    pub fn program(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce_perf",
            Collective::AllGather => "all_gather_perf",
            Collective::ReduceScatter => "reduce_scatter_perf",
            Collective::AllToAll => "alltoall_perf",
            Collective::Broadcast => "broadcast_perf",
            Collective::Reduce => "reduce_perf",
            Collective::SendRecv => "sendrecv_perf",
            Collective::Gather => "gather_perf",
            Collective::Scatter => "scatter_perf",
            Collective::HyperCube => "hypercube_perf",
            Collective::AllToAllV => "alltoallv_perf",
        }
    }

    /// busbw / algbw for a communicator of `ranks` ranks: 2(n-1)/n for
    /// allreduce, (n-1)/n for allgather, reduce-scatter and alltoall, 1 for
    /// broadcast, reduce and sendrecv (one link bounds them). A single rank
    /// moves nothing over a link, so the first two kinds give 0 there; no
    /// ranks at all gives 0 for every kind rather than a division by zero.
    pub(crate) fn bus_factor(self, ranks: usize) -> f64 {
        if ranks == 0 {
            return 0.0;
        }
        let n = ranks as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather
            | Collective::ReduceScatter
            | Collective::AllToAll
            | Collective::AllToAllV
            | Collective::Gather
            | Collective::Scatter => (n - 1.0) / n,
            // The hypercube's algbw already counts only what crosses
            // links (the n - 1 other blocks).
            Collective::Broadcast | Collective::Reduce | Collective::SendRecv | Collective::HyperCube => 1.0,
        }
    }

    /// The bytes algbw divides by time, from the `count` column (elements
    /// per call; per rank's share for allgather, reduce-scatter, alltoall,
    /// gather and scatter, which this multiplies by the ranks) and the
    /// element size. It is also what the `size` column
    /// shows: the larger of one rank's send and receive buffers. Saturates
    /// instead of overflowing.
    #[cfg_attr(not(test), allow(dead_code, reason = "the nccl-tests binaries (issue 43) use it; unit tests pin it"))]
    pub fn data_bytes(self, count: usize, elt_size: usize, ranks: usize) -> usize {
        let one = count.saturating_mul(elt_size);
        if self.counts_per_rank() {
            one.saturating_mul(ranks)
        } else {
            one
        }
    }

    /// Whether nccl-tests' `count` column is one rank's share rather than
    /// the whole buffer: the collectives whose NCCL call takes a per-rank
    /// count (allgather, reduce-scatter, alltoall, gather, scatter).
    pub(crate) fn counts_per_rank(self) -> bool {
        matches!(
            self,
            Collective::AllGather
                | Collective::ReduceScatter
                | Collective::AllToAll
                | Collective::Gather
                | Collective::Scatter
                | Collective::HyperCube
        )
    }

    /// The `count` column for a row whose `size` column is `bytes` (see
    /// [`Collective::data_bytes`]): the element count of one NCCL call, as
    /// nccl-tests prints it (its `nbytes / wordSize`). For the per-rank
    /// collectives that is one rank's share, `bytes / elt_size / ranks`,
    /// rounded down (a reduce-scatter whose element count `ranks` does not
    /// divide gives its first ranks one element more); else every element.
    pub(crate) fn count_column(self, bytes: usize, elt_size: usize, ranks: usize) -> usize {
        let elements = bytes / elt_size.max(1);
        if self.counts_per_rank() {
            elements / ranks.max(1)
        } else {
            elements
        }
    }

    /// The `redop` column for a run with reduction `op` (`sum`, `max`, ...):
    /// `none` for allgather, alltoall and broadcast. sendrecv reduces nothing
    /// but nccl-tests still prints the op it was given, and so does this.
    pub(crate) fn redop_column(self, op: &str) -> &str {
        match self {
            Collective::AllGather
            | Collective::AllToAll
            | Collective::AllToAllV
            | Collective::Broadcast
            | Collective::Gather
            | Collective::Scatter => "none",
            // nccl-tests' hypercube passes no operation's name at all.
            Collective::HyperCube => "",
            _ => op,
        }
    }

    /// The `root` column: the root rank for broadcast and reduce, -1 for the
    /// collectives that have none.
    pub(crate) fn root_column(self, root: usize) -> i64 {
        match self {
            Collective::Broadcast | Collective::Reduce | Collective::Gather | Collective::Scatter => {
                i64::try_from(root).unwrap_or(i64::MAX)
            }
            _ => -1,
        }
    }

    /// Whether nccl-tests' test runs a sweep per operation under `-o all`
    /// (sendrecv too, though it reduces nothing).
    pub(crate) fn loops_over_operations(self) -> bool {
        matches!(self, Collective::AllReduce | Collective::Reduce | Collective::ReduceScatter | Collective::SendRecv)
    }

    /// Whether nccl-tests' test runs a sweep per root under `-r -1`.
    pub(crate) fn loops_over_roots(self) -> bool {
        matches!(self, Collective::Broadcast | Collective::Reduce | Collective::Gather | Collective::Scatter)
    }

    /// nccl-tests' test of a blocking collective operation (None for the
    /// others: nccl-tests has no barrier, vector or non-blocking tests).
    pub(crate) fn of_call(call: CollectiveCall) -> Option<Collective> {
        if call.nonblocking {
            return None;
        }
        match call.op {
            Op::Allreduce => Some(Collective::AllReduce),
            Op::Allgather => Some(Collective::AllGather),
            Op::ReduceScatter => Some(Collective::ReduceScatter),
            Op::Alltoall => Some(Collective::AllToAll),
            Op::Bcast => Some(Collective::Broadcast),
            Op::Reduce => Some(Collective::Reduce),
            Op::Gather => Some(Collective::Gather),
            Op::Scatter => Some(Collective::Scatter),
            Op::SendRecv => Some(Collective::SendRecv),
            Op::HyperCube => Some(Collective::HyperCube),
            Op::AlltoallvTraffic => Some(Collective::AllToAllV),
            _ => None,
        }
    }

    /// nccl-tests' size (the bytes algbw divides by time) of an OSU
    /// benchmark's message size: OSU's size is one rank's block for
    /// allgather, alltoall, gather and scatter, the whole buffer otherwise.
    pub(crate) fn osu_bytes(self, osu_size: usize, ranks: usize) -> usize {
        match self {
            Collective::AllGather
            | Collective::AllToAll
            | Collective::Gather
            | Collective::Scatter
            | Collective::HyperCube
            | Collective::AllToAllV => osu_size.saturating_mul(ranks),
            _ => osu_size,
        }
    }

    /// A row's `size` and `count` columns for a kernel size of `osu_size`
    /// bytes in elements of `elt_size` on `ranks` ranks. alltoallv's come
    /// from its pattern (`traffic`): the busiest rank's side and the
    /// per-peer count (0 for a matrix); every other collective's from
    /// [`Collective::osu_bytes`] and [`Collective::count_column`].
    pub(crate) fn row_columns(
        self,
        osu_size: usize,
        elt_size: usize,
        ranks: usize,
        traffic: Option<&crate::traffic::Traffic>,
    ) -> (usize, usize) {
        match (self, traffic) {
            (Collective::AllToAllV, Some(t)) => {
                let total = osu_size.saturating_mul(ranks) as u64;
                (t.busiest_bytes(ranks, total, elt_size), osu_size / elt_size.max(1))
            }
            _ => {
                let bytes = self.osu_bytes(osu_size, ranks);
                (bytes, self.count_column(bytes, elt_size, ranks))
            }
        }
    }

    /// busbw from algbw for `ranks` ranks.
    #[cfg_attr(not(test), allow(dead_code, reason = "the nccl-tests binaries (issue 43) use it; unit tests pin it"))]
    pub fn busbw(self, algbw: f64, ranks: usize) -> f64 {
        algbw * self.bus_factor(ranks)
    }
}

/// Algorithm bandwidth in GB/s (10^9 bytes per second, although nccl-tests'
/// size options are binary): `bytes` moved in `seconds` per operation.
/// Divides in nccl-tests' order, so the last bit agrees too.
#[cfg_attr(not(test), allow(dead_code, reason = "the nccl-tests binaries (issue 43) use it; unit tests pin it"))]
pub fn algbw_gbs(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / 1.0e9 / seconds
}

/// One placement's columns (out-of-place or in-place) of a result row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Time per operation, microseconds.
    pub time_us: f64,
    /// GB/s.
    pub algbw: f64,
    /// GB/s.
    pub busbw: f64,
    /// Wrong elements summed over ranks; `None` when nothing was checked
    /// (the column says `N/A`).
    pub wrong: Option<u64>,
}

impl Cell {
    /// The cell of `coll` moving `bytes` (see [`Collective::data_bytes`])
    /// among `ranks` ranks in `seconds` per operation.
    #[cfg_attr(not(test), allow(dead_code, reason = "the nccl-tests binaries (issue 43) use it; unit tests pin it"))]
    pub fn measured(coll: Collective, bytes: usize, ranks: usize, seconds: f64, wrong: Option<u64>) -> Cell {
        let algbw = algbw_gbs(bytes, seconds);
        Cell { time_us: seconds * 1.0e6, algbw, busbw: coll.busbw(algbw, ranks), wrong }
    }
}

/// The columns of a row before the two cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowLabels<'a> {
    /// Bytes (see [`Collective::data_bytes`]).
    pub size: usize,
    /// Elements per call.
    pub count: usize,
    /// nccl-tests' type name: `float`, `int32`, `bfloat16`, ...
    pub type_name: &'a str,
    /// See [`Collective::redop_column`].
    pub redop: &'a str,
    /// See [`Collective::root_column`].
    pub root: i64,
}

/// How the size sweep steps (`-f` factor or `-i` bytes).
pub use crate::options::SweepStep as Step;

/// The run's options as the preamble reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Threads per process (`-t`).
    pub threads: usize,
    /// GPUs per thread (`-g`).
    pub gpus: usize,
    /// Smallest size, bytes (`-b`).
    pub min_bytes: u64,
    /// Largest size, bytes (`-e`).
    pub max_bytes: u64,
    /// How sizes grow (`-i` or `-f`).
    pub step: Step,
    /// Untimed operations per size (`-w`).
    pub warmup_iters: usize,
    /// Timed iterations per size (`-n`).
    pub iters: usize,
    /// Operations per timed iteration (`-m`).
    pub agg_iters: usize,
    /// Validation rounds (`-c`; 0 = off).
    pub validation: i32,
    /// CUDA graph launches (`-G`; 0 = off).
    pub graph: usize,
    /// Each thread makes its own communicators (`-p 1`).
    pub parallel_init: bool,
    /// Elements the buffers are offset by (`-u`).
    pub unalign: usize,
    /// What follows each call or group (`-z`).
    pub blocking: Blocking,
    /// `-I 1`: each iteration timed on the device, its summary leaving out
    /// the first so many (`-K`); None without `-I`.
    pub per_iteration: Option<usize>,
}

/// One rank's line under `# Using devices`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Rank in the communicator.
    pub rank: usize,
    /// The `NCCL_TESTS_SPLIT` colour (0 without a split).
    pub group: i32,
    /// The rank's process id.
    pub pid: u32,
    /// The host's name.
    pub host: String,
    /// CUDA device index.
    pub device: usize,
    /// PCI domain of the GPU.
    pub pci_domain: u32,
    /// PCI bus of the GPU.
    pub pci_bus: u32,
    /// PCI device of the GPU.
    pub pci_device: u32,
    /// The GPU's product name.
    pub name: String,
}

/// What the footer summarises, gathered cell by cell.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Totals {
    /// busbw over every cell seen, GB/s.
    pub busbw_sum: f64,
    /// Cells seen (two per row).
    pub cells: usize,
    /// Checks that found wrong elements. [`Totals::add`] counts a cell
    /// once; nccl-tests counts once per rank (thread) that saw some, so a
    /// caller that knows the per-rank split may set this itself.
    pub out_of_bounds: u64,
}

impl Totals {
    /// Takes one printed cell into the totals.
    pub fn add(&mut self, cell: &Cell) {
        self.busbw_sum += cell.busbw;
        self.cells += 1;
        if cell.wrong.is_some_and(|n| n > 0) {
            self.out_of_bounds += 1;
        }
    }

    /// The arithmetic mean of busbw over every cell, out-of-place and
    /// in-place alike; NaN before the first cell, as in nccl-tests.
    pub(crate) fn avg_busbw(&self) -> f64 {
        self.busbw_sum / self.cells as f64
    }
}

/// `value` in at most `width` characters, right-aligned, the way nccl-tests
/// fills its time and bandwidth columns: two decimals if they fit, else
/// one, else none, else exponent notation (`1.0e+07` at width 7 and above,
/// `1e+07` below). Rounding is to nearest on the exact binary value, ties
/// to even, as C's printf does. Where even the exponent form is too wide
/// (|value| >= 1e100, or a negative value needing it at width 7) nccl-tests
/// cuts the text to the width and prints a wrong number; this lets it run
/// over instead.
pub fn fit(value: f64, width: usize) -> String {
    let text = if let Some(word) = crate::c_num::non_finite(value) {
        word.to_string()
    } else {
        [2, 1, 0]
            .into_iter()
            .map(|decimals| format!("{value:.decimals$}"))
            .find(|s| s.len() <= width)
            .unwrap_or_else(|| crate::c_num::c_exponent(value, if width >= 7 { 1 } else { 0 }))
    };
    format!("{text:>width$}")
}

/// C's `%g`: six significant digits, fixed notation when the rounded
/// value's exponent is from -4 to 5 and exponent notation otherwise, with
/// trailing zeros dropped. nccl-tests prints `#wrong` and the average bus
/// bandwidth this way.
pub(crate) fn c_general(value: f64) -> String {
    crate::c_num::general(value, 6)
}

/// The nccl-tests release whose behaviour and output this follows.
pub const NCCL_TESTS_VERSION: &str = "2.19.6";

/// The first line: the nccl-tests release and the NCCL version codes of
/// its build's headers and of the library loaded. commbench has no build
/// headers (it finds NCCL at run time and adapts to it), so both are the
/// loaded library's.
pub fn version_line(library: i32) -> String {
    format!("# nccl-tests version {NCCL_TESTS_VERSION} nccl-headers={library} nccl-library={library}")
}

/// The lines before the device list: which program, the run's options, `#`.
pub fn preamble(program: &str, s: &Settings) -> Vec<String> {
    let Settings {
        threads,
        gpus,
        min_bytes,
        max_bytes,
        step,
        warmup_iters,
        iters,
        agg_iters,
        validation,
        graph,
        parallel_init,
        unalign,
        blocking,
        per_iteration,
    } = *s;
    let (step, unit) = match step {
        Step::Bytes(b) => (b, "bytes"),
        Step::Factor(f) => (f, "factor"),
    };
    let mut lines = vec![
        format!("# Collective test starting: {program}"),
        format!(
            "# nThread {threads} nGpus {gpus} minBytes {min_bytes} maxBytes {max_bytes} step: {step}({unit}) \
             warmup iters: {warmup_iters} iters: {iters} agg iters: {agg_iters} validation: {validation} \
             graph: {graph} unalign: {unalign}"
        ),
    ];
    // `-z`: one line saying what follows each call (nccl-tests' words,
    // trailing space included).
    let what = match blocking {
        Blocking::None => None,
        Blocking::WaitAndBarrier => Some("wait and barrier after each inner iteration (-m)"),
        Blocking::Wait => Some("wait after each inner iteration (-m), no barrier"),
        Blocking::WaitEachGroupBarrierUntimed => {
            Some("wait and barrier after each outer iteration (-n); time excludes barrier")
        }
    };
    lines.extend(what.map(|w| format!("# Blocking Enabled: {w} ")));
    if let Some(skip) = per_iteration {
        // nccl-tests' words, trailing space included.
        let skips = if skip > 0 { format!("; summary skips first {skip} iterations") } else { String::new() };
        lines.push(format!("# Per-Iteration Report: CUDA event timing; i_* uses max over process rows{skips} "));
    }
    if parallel_init {
        // nccl-tests' words, trailing space included.
        lines.push("# Parallel Init Enabled: threads call into NcclInitRank concurrently ".to_string());
    }
    lines.push("#".to_string());
    lines
}

/// The largest size nccl-tests lets its buffers reach on GPUs of
/// `gpu_bytes` each, with (`check`) or without the expected values' third
/// buffer: what is left after a reserve of 1 GiB per 16 GiB installed (4
/// GiB at most) and 1 GiB for everything else, shared between the send,
/// receive and expected buffers. None where that leaves nothing: nccl-tests'
/// unsigned arithmetic wraps there and it lowers nothing.
pub fn gpu_max_bytes(gpu_bytes: u64, check: bool) -> Option<u64> {
    const GIB: u64 = 1 << 30;
    let reserve = (gpu_bytes.div_ceil(16 * GIB) * GIB).min(4 * GIB);
    let left = gpu_bytes.checked_sub(reserve)?.checked_sub(GIB)?;
    Some(left / if check { 3 } else { 2 })
}

/// The least GPU memory on which [`gpu_max_bytes`] leaves `max` bytes
/// (nccl-tests lowers a larger sweep on anything smaller). The reserve
/// grows with the memory (1 GiB per 16 GiB started, up to 4), so each
/// reserve's range of sizes is tried and the smallest that works is it.
pub fn gpu_bytes_needed(max: u64, check: bool) -> u64 {
    const GIB: u64 = 1 << 30;
    let buffers = max.saturating_mul(if check { 3 } else { 2 });
    (1..=4u64)
        .filter_map(|r| {
            // Memory whose reserve is r GiB: above (r-1)*16 GiB, and at
            // most r*16 GiB below the cap.
            let low = (r - 1) * 16 * GIB + 1;
            let need = buffers.saturating_add((1 + r) * GIB).max(low);
            (r == 4 || need <= r * 16 * GIB).then_some(need)
        })
        .min()
        .unwrap_or(u64::MAX)
}

/// The lines after the devices when the GPUs' memory lowered the
/// sweep's largest size to `bytes` ([`gpu_max_bytes`]).
pub fn lowered_max_lines(bytes: u64) -> [String; 2] {
    ["#".to_string(), format!("# Reducing maxBytes to {bytes} due to memory limitation")]
}

/// The line nccl-tests' hypercube prints instead of its rows on `ranks`
/// ranks, not a power of two.
pub fn skipped_line(ranks: usize) -> String {
    format!("nRanks {ranks} is not a power of 2, skipping")
}

/// `# Using devices` and one line per rank, in rank order.
pub fn devices(list: &[Device]) -> Vec<String> {
    let mut lines = vec!["# Using devices".to_string()];
    lines.extend(list.iter().map(|d| {
        format!(
            "#  Rank {:>2} Group {:>2} Pid {:>6} on {:>10} device {:>2} [{:04x}:{:02x}:{:02x}] {}",
            d.rank, d.group, d.pid, d.host, d.device, d.pci_domain, d.pci_bus, d.pci_device, d.name
        )
    }));
    lines
}

/// The width of each of `-I`'s four columns (`i_min` ... `i_cv%`).
const ITER_W: usize = 7;

/// One header line of right-aligned labels: the row labels' five, then
/// each placement's (four, or eight with `-I`'s); nccl-tests ends it with
/// the space that precedes its optional timestamp column. The first width
/// is the size column's less the `# ` that starts the line.
fn header_line(labels: [&str; 5], out_of_place: &[&str], in_place: &[&str]) -> String {
    let widths = [SIZE_W - 2, COUNT_W, TYPE_W, REDOP_W, ROOT_W];
    let placement = [TIME_W, BW_W, BW_W, WRONG_W, ITER_W, ITER_W, ITER_W, ITER_W];
    let cells: Vec<String> = labels
        .iter()
        .zip(widths)
        .chain(out_of_place.iter().zip(placement))
        .chain(in_place.iter().zip(placement))
        .map(|(l, w)| format!("{l:>w$}"))
        .collect();
    format!("# {} ", cells.join(GAP))
}

/// The format of `-S`'s timestamps (C's `strftime`, local time).
pub const TIMESTAMP_FORMAT: &std::ffi::CStr = c"%Y-%m-%d %H:%M:%S";

/// The table header: `#`, the out-of-place / in-place line, column names,
/// units; with `timestamps` (`-S 1`), the timestamp column's name and its
/// format after the last column, right-aligned in 19 characters; with
/// `cputime` (`-C 1`), both time columns named `cputime`.
pub fn header(timestamps: bool, cputime: bool, per_iteration: bool) -> Vec<String> {
    let mut lines = plain_header(if cputime { "cputime" } else { "time" }, per_iteration);
    if timestamps {
        lines[2].push_str(&format!("{:>19}", "timestamp"));
        lines[3].push_str(&format!("{:>19}", TIMESTAMP_FORMAT.to_string_lossy()));
    }
    lines
}

/// [`header`] without the timestamp column, the time columns named
/// `time`; with `per_iteration` (`-I 1`), each placement's four more.
fn plain_header(time: &str, per_iteration: bool) -> Vec<String> {
    // The two group names sit at fixed places over their columns.
    let labels_width = SIZE_W + COUNT_W + TYPE_W + REDOP_W + ROOT_W + 4 * GAP.len();
    let groups = if per_iteration {
        format!("{:<labels_width$}{:14}out-of-place (+ per-iteration){:32}in-place (+ per-iteration)", "#", "", "")
    } else {
        format!("{:<labels_width$}{:11}out-of-place{:23}in-place{:10}", "#", "", "", "")
    };
    let (names, units): (Vec<&str>, Vec<&str>) = if per_iteration {
        (
            vec![time, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%"],
            vec!["(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)"],
        )
    } else {
        (vec![time, "algbw", "busbw", "#wrong"], vec!["(us)", "(GB/s)", "(GB/s)", ""])
    };
    let names = header_line(["size", "count", "type", "redop", "root"], &names, &names);
    let units = header_line(["(B)", "(elements)", "", "", ""], &units, &units);
    vec!["#".to_string(), groups, names, units]
}

/// `-I`'s four columns of one placement: the iterations' least, most and
/// 99th percentile (µs), and their coefficient of variation (%), each
/// preceded by the gap.
pub fn iteration_columns(stats: &crate::stats::iterations::IterationStats) -> String {
    [stats.min * 1e6, stats.max * 1e6, stats.p99 * 1e6, stats.cv_pct()]
        .iter()
        .map(|&v| format!("{GAP}{}", fit(v, ITER_W)))
        .collect()
}

/// One placement's four columns, each preceded by the gap. A count fills
/// its column; `N/A` takes one character less (nccl-tests still prints it
/// as it did when the column was five wide), so whatever follows it sits
/// one character further left.
fn cell_columns(c: &Cell) -> String {
    let wrong = match c.wrong {
        Some(n) => format!("{:>WRONG_W$}", c_general(n as f64)),
        None => format!("{:>w$}", "N/A", w = WRONG_W - 1),
    };
    format!("{GAP}{}{GAP}{}{GAP}{}{GAP}{wrong}", fit(c.time_us, TIME_W), fit(c.algbw, BW_W), fit(c.busbw, BW_W))
}

/// `-S`'s cell after a row's last column: `stamp` right-aligned in 21
/// characters (nccl-tests' local time, [`TIMESTAMP_FORMAT`]).
pub fn timestamp_cell(stamp: &str) -> String {
    format!("{stamp:>21}")
}

/// One result row: the labels, then the out-of-place and in-place cells.
#[cfg(test)]
pub fn row(labels: &RowLabels, out_of_place: &Cell, in_place: &Cell) -> String {
    row_around(labels, [("", out_of_place, ""), ("", in_place, "")])
}

/// [`row`] with text before and after each cell (`-I`'s
/// [`iteration_columns`] after; alltoallv's summary lines before, which
/// nccl-tests prints inside the row): the labels, then for
/// the out-of-place and the in-place cell the text before, the cell's
/// columns and the text after.
pub fn row_around(labels: &RowLabels, cells: [(&str, &Cell, &str); 2]) -> String {
    let RowLabels { size, count, type_name, redop, root } = *labels;
    let mut line = format!(
        "{size:>SIZE_W$}{GAP}{count:>COUNT_W$}{GAP}{type_name:>TYPE_W$}{GAP}{redop:>REDOP_W$}{GAP}{root:>ROOT_W$}"
    );
    for (before, cell, after) in cells {
        line.push_str(before);
        line.push_str(&cell_columns(cell));
        line.push_str(after);
    }
    line
}

/// nccl-tests' size of memory: bytes, KB, MB or GB (powers of 1024, by
/// the magnitude), with 2 decimals below 10, 1 below 100, none above.
pub fn memory_amount(bytes: i64) -> String {
    let mut amount = bytes as f64;
    let mut unit = "B";
    for (scale, name) in [(1u64 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")] {
        if amount.abs() >= scale as f64 {
            amount /= scale as f64;
            unit = name;
            break;
        }
    }
    let decimals = if amount.abs() < 10.0 {
        2
    } else if amount.abs() < 100.0 {
        1
    } else {
        0
    };
    format!("{amount:.decimals$} {unit}")
}

/// `-M 1`'s line: the memory the communicator's making, the buffers and
/// the collectives took, and their sum.
pub fn memory_line(usage: &crate::report::MemoryUsage) -> String {
    let parts = [("Initialization", usage.init), ("User-Allocated", usage.buffers), ("Collective", usage.collective)];
    let listed: Vec<String> = parts.iter().map(|(name, b)| format!("{name} {} ", memory_amount(*b))).collect();
    let total = parts.iter().map(|(_, b)| b).sum::<i64>();
    format!("# {:<20} : {}| Total  {}", "GPU memory usage", listed.join("| "), memory_amount(total))
}

/// The lines after the last row: the out-of-bounds count with OK or
/// FAILED, the average bus bandwidth (with OK or FAILED where a minimum was
/// set: `below` says whether the average fell short of it; nccl-tests'
/// `NCCL_TESTS_MIN_BW` sets its own), `#`, which program ended, `#`, and an
/// empty line.
pub fn footer(totals: &Totals, program: &str, below: Option<bool>) -> Vec<String> {
    let bounds = if totals.out_of_bounds == 0 { "OK" } else { "FAILED" };
    let avg = totals.avg_busbw();
    let verdict = match below {
        None => "",
        Some(true) => "FAILED",
        Some(false) => "OK",
    };
    vec![
        format!("# {:<20} : {} {bounds}", "Out of bounds values", totals.out_of_bounds),
        format!("# {:<20} : {} {verdict}", "Avg bus bandwidth", c_general(avg)),
        "#".to_string(),
        format!("# Collective test concluded: {program}"),
        "#".to_string(),
        String::new(),
    ]
}
