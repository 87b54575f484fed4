//! `bandwidthTest`, the drop-in for CUDA's sample of that name: its
//! command line (the samples' grammar, [`super::sample_args`]), its modes and sweeps
//! (quick: 32 MB; range: `--start/--end/--increment`; shmoo: 81 sizes
//! from 1 kB to 68 MB), its copies (host to GPU and back from pinned,
//! write-combined or pageable memory, and within a GPU, on one GPU or
//! summed over every GPU with `--device=all`), timed its way
//! ([`crate::gpu_bw::measure::series`]), and its output byte for byte:
//! the readable tables or `--csv` lines, `Result = PASS` or `FAIL` and
//! the closing note, with its exit status (0, or 1 for anything wrong).
//! Where the sample dies on a CUDA error, ours says one line on stderr
//! and exits 1 likewise.

use super::cells::{self, Cell, CopyRecord, Outputs, Unit};
use super::driver::{self, CudaError, Device};
use super::measure::series::{gb_per_s, series_ms, Direction, Flush, HostSide};
use super::measure::Lane;
use super::out;
use super::sample_args::Args;
use super::survey::Survey;
use crate::diag::say;
use crate::report::record::RunStatus;

const NAME: &str = "bandwidthTest";

/// Copies per timing.
const REPS: usize = 100;
/// Quick mode's size, and range mode's start and end when not given.
const QUICK_BYTES: u32 = 32_000_000;

/// How a run ends short of `Result = PASS`.
enum Stop {
    /// A refused setting: its lines are said; `Result = FAIL` follows.
    Refused,
    /// The sample would exit on the spot (a CUDA error, no host memory):
    /// one line on stderr, no result line.
    Died(String),
    /// Measured, but `--min-efficiency` named cells below their share
    /// (said on stderr): `Result = FAIL`.
    Below,
    /// As `Died`, the line already led by the tool's name.
    Said(String),
}

/// The sizes of one series, and how they are swept.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    Quick,
    Range { start: u32, end: u32, increment: u32 },
    Shmoo,
}

impl Mode {
    fn sizes(&self) -> Vec<u32> {
        match *self {
            Mode::Quick => vec![QUICK_BYTES],
            Mode::Range { start, end, increment } => {
                let count = 1 + end.wrapping_sub(start) / increment;
                (0..count).map(|i| start.wrapping_add(i.wrapping_mul(increment))).collect()
            }
            Mode::Shmoo => shmoo_sizes(),
        }
    }
}

/// bandwidthTest's shmoo: from 0, each step by the increment of the band
/// the size is in (1 kB steps to 20 kB, 2 kB to 50 kB, 10 kB to 100 kB,
/// 100 kB to 1 MB, 1 MB to 16 MB, 2 MB to 32 MB, 4 MB beyond), for as
/// long as the size before the step is at most 64 MB: 81 sizes, the last
/// 68 MB.
fn shmoo_sizes() -> Vec<u32> {
    let bands: [(u32, u32); 6] = [
        (20_000, 1_000),
        (50_000, 2_000),
        (100_000, 10_000),
        (1_000_000, 100_000),
        (16_000_000, 1_000_000),
        (32_000_000, 2_000_000),
    ];
    let mut sizes = Vec::new();
    let mut size = 0u32;
    while size <= 64_000_000 {
        size += bands.iter().find(|(below, _)| size < *below).map_or(4_000_000, |(_, step)| *step);
        sizes.push(size);
    }
    sizes
}

/// One series: which copy, its host memory, and whether `--wc` was
/// given (which the readable table says whatever the memory).
#[derive(Clone, Copy)]
struct Series {
    dir: Direction,
    host: HostSide,
    wc: bool,
}

impl Series {
    fn heading(self) -> &'static str {
        match self.dir {
            Direction::HostToDevice => "Host to Device",
            Direction::DeviceToHost => "Device to Host",
            Direction::DeviceToDevice => "Device to Device",
        }
    }

    fn memory(self) -> &'static str {
        match self.host {
            HostSide::Pinned { .. } => "PINNED",
            HostSide::Pageable => "PAGEABLE",
        }
    }

    /// GPU `gpu`'s figure at `size` as a cell of the results CSV.
    fn cell(self, gpu: usize, size: u32, gbps: f64, judged: bool) -> Cell {
        let (from, to) = match self.dir {
            Direction::HostToDevice => ("host".to_string(), format!("gpu{gpu}")),
            Direction::DeviceToHost => (format!("gpu{gpu}"), "host".to_string()),
            Direction::DeviceToDevice => (format!("gpu{gpu}"), format!("gpu{gpu}")),
        };
        let host_memory = match (self.dir, self.host) {
            (Direction::DeviceToDevice, _) => "",
            (_, HostSide::Pageable) => "pageable",
            (_, HostSide::Pinned { write_combined: false }) => "pinned",
            (_, HostSide::Pinned { write_combined: true }) => "write_combined",
        };
        Cell {
            test: self.csv_name(),
            engine: "ce",
            matrix: String::new(),
            row: None,
            column: None,
            from,
            to,
            host_memory,
            peer_access: None,
            bytes: u64::from(size),
            loops: Some(REPS as u64),
            samples: Some(1),
            statistic: "",
            value: gbps,
            unit: Unit::GBps,
            both_ways: false,
            judged,
        }
    }

    /// The CSV's configuration name: `D2D`, or the direction and the
    /// host memory (`H2D-Pinned-WriteCombined`).
    fn csv_name(self) -> String {
        let dir = match self.dir {
            Direction::DeviceToDevice => return "D2D".to_string(),
            Direction::HostToDevice => "H2D",
            Direction::DeviceToHost => "D2H",
        };
        let mem = match self.host {
            HostSide::Pageable => "-Paged",
            HostSide::Pinned { write_combined: false } => "-Pinned",
            HostSide::Pinned { write_combined: true } => "-Pinned-WriteCombined",
        };
        format!("{dir}{mem}")
    }
}

/// The readable table of a series: heading, memory, (with `--wc`, even
/// for pageable memory or within a GPU, a write-combining note that runs
/// into the next line, as the sample prints it) and one line per size, a
/// blank line after.
fn readable(series: Series, devices: usize, sizes: &[u32], gbs: &[f64]) -> String {
    let mut t =
        format!(" {} Bandwidth, {devices} Device(s)\n {} Memory Transfers\n", series.heading(), series.memory());
    if series.wc {
        t.push_str(" Write-Combined Memory Writes are Enabled");
    }
    t.push_str("   Transfer Size (Bytes)\tBandwidth(GB/s)\n");
    for (size, bw) in sizes.iter().zip(gbs) {
        let pad = if *size < 10_000 { "\t" } else { "" };
        t.push_str(&format!("   {size}\t\t\t{pad}{bw:.1}\n"));
    }
    t.push('\n');
    t
}

/// The CSV lines of a series, one per size: its bandwidth, the time one
/// copy of that size takes at it, the size and the GPUs summed.
fn csv(series: Series, devices: usize, sizes: &[u32], gbs: &[f64]) -> String {
    let name = series.csv_name();
    sizes
        .iter()
        .zip(gbs)
        .map(|(&size, &bw)| {
            let secs = f64::from(size) / (bw * 1e9);
            format!(
                "bandwidthTest-{name}, Bandwidth = {bw:.1} GB/s, Time = {secs:.5} s, Size = {size} bytes, NumDevsUsed = {devices}\n"
            )
        })
        .collect()
}

/// Our help: the sample's options, in our words.
fn help() -> String {
    [
        "Usage:  bandwidthTest [OPTION]...",
        "Copy bandwidth between host and GPU memory and within a GPU (commbench's drop-in for CUDA's sample).",
        "",
        "Example: device-to-host copies from pinned memory, 1024 to 102400 bytes by 1024:",
        "./bandwidthTest --memory=pinned --mode=range --start=1024 --end=102400 --increment=1024 --dtoh",
        "",
        "Options:",
        "--help\tThis text",
        "--csv\tOne CSV line per size instead of tables",
        "--device=[deviceno]\tThe GPU to measure",
        "  all - every GPU, their bandwidths summed",
        "  0,1,2,...,n - that GPU (an unknown number: GPU 0)",
        "--memory=[MEMMODE]\tHost memory of host<->GPU copies",
        "  pageable - ordinary memory",
        "  pinned   - page-locked memory (the default)",
        "--mode=[MODE]\tSizes",
        "  quick - 32000000 bytes (the default)",
        "  range - --start to --end by --increment",
        "  shmoo - 81 sizes from 1000 to 68000000 bytes",
        "--htod\tHost-to-GPU copies",
        "--dtoh\tGPU-to-host copies",
        "--dtod\tCopies within the GPU (none of the three: all three)",
        "--wc\tWrite-combined pinned memory",
        "--cputiming\tTime every series on the host's clock",
        "Range mode options",
        "--start=[SIZE]\tFirst size in bytes",
        "--end=[SIZE]\tLast size in bytes",
        "--increment=[SIZE]\tStep in bytes",
        "",
    ]
    .join("\n")
}

/// The settings read from the command line, checked.
struct Settings {
    csv: bool,
    host: HostSide,
    wc: bool,
    mode: Mode,
    series: Vec<Direction>,
    host_clock: bool,
}

/// The CUDA runtime's number and text for the driver's failure to start
/// (none: no driver library), as the sample prints them before it exits.
fn runtime_error(e: Option<&CudaError>) -> (i32, &'static str) {
    match e.map(|e| e.name.as_str()) {
        None | Some("CUDA_ERROR_INSUFFICIENT_DRIVER" | "CUDA_ERROR_NOT_INITIALIZED") => {
            (35, "CUDA driver version is insufficient for CUDA runtime version")
        }
        Some("CUDA_ERROR_NO_DEVICE") => (100, "no CUDA-capable device is detected"),
        Some(_) => (999, "unknown error"),
    }
}

/// Starts the driver and counts the GPUs; where it cannot, the sample's
/// two lines after `asked` ("cudaGetDeviceCount") and our one line.
fn gpu_count(asked: &str) -> Result<usize, Stop> {
    driver::start(&crate::topo::hostname()).map_err(|f| {
        let (code, text) = runtime_error(f.error.as_ref());
        out(&format!("{asked} returned {code}\n-> {text}\n"));
        Stop::Died(f.line)
    })
}

/// Everything from `Running on...` to the last table; `Ok` is a pass.
fn run_test(argv: &[String]) -> Result<(), Stop> {
    let a = Args::new(argv);
    if a.flag("help") {
        out(&help());
        return Ok(());
    }
    let given = a.flag("min-efficiency").then(|| a.string("min-efficiency").unwrap_or_default());
    let min_pct = cells::min_efficiency_arg(given).map_err(Stop::Died)?;
    let csv = a.flag("csv");
    let pageable = match a.string("memory").as_deref() {
        None | Some("pinned") => false,
        Some("pageable") => true,
        Some(_) => {
            out("Invalid memory mode - valid modes are pageable or pinned\nSee --help for more information\n");
            return Err(Stop::Refused);
        }
    };
    let mut gpus = 0..=0;
    if let Some(device) = a.string("device") {
        let count = gpu_count("cudaGetDeviceCount")?;
        if count == 0 {
            out("!!!!!No devices found!!!!!\n");
            return Err(Stop::Refused);
        }
        if device == "all" {
            out("\n!!!!!Cumulative Bandwidth to be computed from all the devices !!!!!!\n\n");
            gpus = 0..=count - 1;
        } else {
            let n = crate::c_num::atoi(&device);
            if n < 0 || n as usize >= count {
                out(&format!("\n!!!!!Invalid GPU number {n} given hence default gpu 0 will be used !!!!!\n"));
            } else {
                gpus = n as usize..=n as usize;
            }
        }
    }
    out("Running on...\n\n");
    if gpu_count("cudaGetDeviceProperties")? == 0 {
        out("cudaGetDeviceProperties returned 100\n-> no CUDA-capable device is detected\n");
        return Err(Stop::Died(format!("no CUDA GPU on {}: the driver shows none", crate::topo::hostname())));
    }
    let mut devices = Vec::new();
    for g in gpus {
        let dev = Device::open(g).map_err(|e| Stop::Died(e.to_string()))?;
        out(&format!(" Device {g}: {}\n", dev.name()));
        devices.push(dev);
    }
    let mode = match a.string("mode").as_deref() {
        None | Some("quick") => {
            out(" Quick Mode\n\n");
            Mode::Quick
        }
        Some("shmoo") => {
            out(" Shmoo Mode\n\n");
            Mode::Shmoo
        }
        Some("range") => {
            out(" Range Mode\n\n");
            range(&a)?
        }
        Some(_) => {
            out("Invalid mode - valid modes are quick, range, or shmoo\nSee --help for more information\n");
            return Err(Stop::Refused);
        }
    };
    let wc = a.flag("wc");
    let mut series: Vec<Direction> =
        [("htod", Direction::HostToDevice), ("dtoh", Direction::DeviceToHost), ("dtod", Direction::DeviceToDevice)]
            .into_iter()
            .filter(|(f, _)| a.flag(f))
            .map(|(_, d)| d)
            .collect();
    if series.is_empty() {
        series = vec![Direction::HostToDevice, Direction::DeviceToHost, Direction::DeviceToDevice];
    }
    let host = if pageable { HostSide::Pageable } else { HostSide::Pinned { write_combined: wc } };
    let settings = Settings { csv, host, wc, mode, series, host_clock: a.flag("cputiming") };
    let record_settings = serde_json::json!({
        "mode": match settings.mode {
            Mode::Quick => "quick",
            Mode::Range { .. } => "range",
            Mode::Shmoo => "shmoo",
        },
        "sizes": settings.mode.sizes(),
        "memory": if pageable { "pageable" } else { "pinned" },
        "write_combined": wc,
        "series": settings.series.iter().map(|&d| Series { dir: d, host, wc }.csv_name()).collect::<Vec<_>>(),
        "gpus": devices.iter().map(|d| d.ordinal).collect::<Vec<_>>(),
        "host_clock": settings.host_clock,
        "copies_per_timing": REPS,
        "min_efficiency_pct": min_pct,
    });
    let command_line = std::iter::once(NAME.to_string()).chain(argv.iter().cloned()).collect();
    let mut rec = CopyRecord::running(NAME, FOLLOWS, record_settings, crate::topo::hostname(), command_line);
    rec.conventions = conventions();
    rec.cuda_driver_version = driver::driver_version_code().unwrap_or(0);
    let mut res = Outputs::open(NAME, rec, Survey::of(&devices, None)).map_err(Stop::Said)?;
    let subtitle = format!("{REPS} copies per timing");
    match measure_and_print(&settings, &devices, &mut res) {
        Ok(()) => match res.end(RunStatus::Complete, None, 0, min_pct, &subtitle) {
            (_, 0) => Ok(()),
            _ => Err(Stop::Below),
        },
        Err(Stop::Died(line)) => {
            res.end(RunStatus::Error, Some(line.clone()), 1, min_pct, &subtitle);
            Err(Stop::Died(line))
        }
        Err(other) => Err(other),
    }
}

/// The sample this follows.
const FOLLOWS: &str = "CUDA samples' bandwidthTest (12.x)";

/// How the figures are counted, in words.
fn conventions() -> std::collections::BTreeMap<&'static str, &'static str> {
    [
        ("bandwidth", "GB/s = size x 100 copies / seconds / 1e9 (within one GPU the bytes count twice: read and written); CUDA events around the copies, or the host's clock with --cputiming and for pageable memory"),
        ("pageable", "pageable copies are synchronous; a 256 MiB buffer is written before each so that the host's caches hold none of the copied data"),
        ("device_all", "with --device=all stdout sums the GPUs' bandwidths per size; the CSV keeps each GPU's"),
        ("judged", "each series' largest size is judged against its path: host and GPU through the GPU's PCIe link"),
    ]
    .into_iter()
    .collect()
}

/// Range mode's sizes, or the sample's refusal of them.
fn range(a: &Args) -> Result<Mode, Stop> {
    fn refuse<T>(lines: &str) -> Result<T, Stop> {
        out(lines);
        Err(Stop::Refused)
    }
    // Each must be given (as a flag) and above zero, start not above end.
    let positive = |name: &str, missing: &str, illegal: &str| {
        if !a.flag(name) {
            return refuse(missing);
        }
        match a.int(name) {
            v if v <= 0 => refuse(illegal),
            v => Ok(v),
        }
    };
    let start = positive(
        "start",
        "Must specify a starting size in range mode\nSee --help for more information\n",
        "Illegal argument - start must be greater than zero\n",
    )?;
    let end = positive(
        "end",
        "Must specify an end size in range mode.\nSee --help for more information\n",
        "Illegal argument - end must be greater than zero\n",
    )?;
    if start > end {
        return refuse("Illegal argument - start is greater than end\n");
    }
    let increment = positive(
        "increment",
        "Must specify an increment in user mode\nSee --help for more information\n",
        "Illegal argument - increment must be greater than zero\n",
    )?;
    Ok(Mode::Range { start: start as u32, end: end as u32, increment: increment as u32 })
}

/// Each asked series over every size and GPU (the GPUs' bandwidths
/// summed per size), printed as it ends; each GPU's figures kept as
/// cells.
fn measure_and_print(s: &Settings, devices: &[Device], res: &mut Outputs<CopyRecord>) -> Result<(), Stop> {
    let sizes = s.mode.sizes();
    let largest = sizes.iter().copied().max();
    let mut flush = Flush::default();
    for &dir in &s.series {
        let series = Series { dir, host: s.host, wc: s.wc };
        let mut gbs = vec![0.0f64; sizes.len()];
        let mut cells = Vec::new();
        for dev in devices {
            let lane = Lane::new(dev).map_err(|e| Stop::Died(e.to_string()))?;
            for (i, &size) in sizes.iter().enumerate() {
                let ms = series_ms(&lane, dir, s.host, size as usize, REPS, s.host_clock, &mut flush)
                    .map_err(|e| Stop::Died(e.to_string()))?;
                let bw = f64::from(gb_per_s(dir, size, REPS, ms));
                gbs[i] += bw;
                cells.push(series.cell(dev.ordinal, size, bw, Some(size) == largest));
                if s.mode == Mode::Shmoo {
                    out(".");
                }
            }
        }
        res.add(cells);
        if s.mode == Mode::Shmoo {
            out("\n");
        }
        let text = if s.csv {
            csv(series, devices.len(), &sizes, &gbs)
        } else {
            readable(series, devices.len(), &sizes, &gbs)
        };
        out(&text);
    }
    Ok(())
}

/// The arguments in `argv` the sample reads nothing from (it ignores
/// them): none of its flags, and not starting with a name it reads a
/// value of. For checking a documented command line, since the program
/// itself refuses nothing.
pub fn unread_arguments(argv: &[String]) -> Vec<String> {
    argv.iter().filter(|a| !Args::new(std::slice::from_ref(a)).reads_something()).cloned().collect()
}

/// Entry point of the `bandwidthTest` binary: the arguments after its
/// name; returns the exit status.
pub fn main(argv: &[String]) -> i32 {
    crate::job::install_panic_hook(NAME);
    out("[CUDA Bandwidth Test] - Starting...\n");
    let ended = run_test(argv);
    let passed = match ended {
        Ok(()) => true,
        Err(Stop::Refused | Stop::Below) => false,
        Err(Stop::Died(line)) => {
            say(&format!("{NAME}: {line}"));
            return 1;
        }
        Err(Stop::Said(line)) => {
            say(&line);
            return 1;
        }
    };
    out(if passed { "Result = PASS\n" } else { "Result = FAIL\n" });
    out("\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n");
    if passed {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests;
