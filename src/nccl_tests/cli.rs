//! nccl-tests' command line (v2.19.6), read as its binaries read it: the
//! getopt_long table (letters, long names, unique prefixes), each value
//! through C's number readers ([`crate::c_num`]), its defaults, the checks
//! made once every option is read, and every line printed on the way, in
//! order and on the stream nccl-tests uses (its environment is
//! [`super::env`]). Pure: [`parse`] gives the
//! settings to run with, or how the program ends and with what status.
//!
//! What a valid word means can depend on the NCCL library loaded (the
//! operations and types it has, options it lacks), so [`parse`] takes its
//! version, as nccl-tests asks the library before it reads its options.
//!
//! Where nccl-tests has undefined behaviour or cannot end, the drop-in
//! refuses in one line with nccl-tests' status for bad input (255): a size
//! of `inf`, `nan` or beyond 2^64 bytes, and a sweep that never reaches its
//! end (`-f` of 1 or less with a step of 0).

use crate::cli::getopt::{self, ArgKind, OptDef, OptId, SplitError};
use crate::options::{Sweep, SweepStep};

use crate::c_num::{int_strtol, scan_number_and_unit, strtol};

/// An NCCL version as `ncclGetVersion` gives it (2.19.3 is 21903).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NcclVersion(pub u32);

impl NcclVersion {
    /// The code of `major.minor.patch` (the 2.9 and later encoding).
    pub const fn of(major: u32, minor: u32, patch: u32) -> NcclVersion {
        NcclVersion(major * 10000 + minor * 100 + patch)
    }
}

/// The element types nccl-tests names, in its order (`-d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcclType {
    Int8,
    Uint8,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Half,
    Float,
    Double,
    Bfloat16,
    F8e4m3,
    F8e5m2,
}

impl NcclType {
    pub const ALL: [NcclType; 12] = [
        NcclType::Int8,
        NcclType::Uint8,
        NcclType::Int32,
        NcclType::Uint32,
        NcclType::Int64,
        NcclType::Uint64,
        NcclType::Half,
        NcclType::Float,
        NcclType::Double,
        NcclType::Bfloat16,
        NcclType::F8e4m3,
        NcclType::F8e5m2,
    ];

    /// The word `-d` takes and the `type` column prints.
    pub fn name(self) -> &'static str {
        match self {
            NcclType::Int8 => "int8",
            NcclType::Uint8 => "uint8",
            NcclType::Int32 => "int32",
            NcclType::Uint32 => "uint32",
            NcclType::Int64 => "int64",
            NcclType::Uint64 => "uint64",
            NcclType::Half => "half",
            NcclType::Float => "float",
            NcclType::Double => "double",
            NcclType::Bfloat16 => "bfloat16",
            NcclType::F8e4m3 => "f8e4m3",
            NcclType::F8e5m2 => "f8e5m2",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            NcclType::Int8 | NcclType::Uint8 | NcclType::F8e4m3 | NcclType::F8e5m2 => 1,
            NcclType::Half | NcclType::Bfloat16 => 2,
            NcclType::Int32 | NcclType::Uint32 | NcclType::Float => 4,
            NcclType::Int64 | NcclType::Uint64 | NcclType::Double => 8,
        }
    }

    /// Whether nccl-tests offers the type with `nccl` loaded: bfloat16
    /// from NCCL 2.10, the two 8-bit floats from 2.24.
    pub fn offered(self, nccl: NcclVersion) -> bool {
        match self {
            NcclType::Bfloat16 => nccl >= NcclVersion::of(2, 10, 0),
            NcclType::F8e4m3 | NcclType::F8e5m2 => nccl >= NcclVersion::of(2, 24, 0),
            _ => true,
        }
    }
}

/// The reduction operations nccl-tests names, in its order (`-o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    Sum,
    Prod,
    Max,
    Min,
    Avg,
    /// A pre-multiplied sum (`ncclRedOpCreatePreMulSum`), made per call.
    MulSum,
}

impl RedOp {
    pub const ALL: [RedOp; 6] = [RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min, RedOp::Avg, RedOp::MulSum];

    /// The word `-o` takes and the `redop` column prints.
    pub fn name(self) -> &'static str {
        match self {
            RedOp::Sum => "sum",
            RedOp::Prod => "prod",
            RedOp::Max => "max",
            RedOp::Min => "min",
            RedOp::Avg => "avg",
            RedOp::MulSum => "mulsum",
        }
    }

    /// Whether nccl-tests offers the operation with `nccl` loaded: avg
    /// from NCCL 2.10, mulsum from 2.11.
    pub fn offered(self, nccl: NcclVersion) -> bool {
        match self {
            RedOp::Avg => nccl >= NcclVersion::of(2, 10, 0),
            RedOp::MulSum => nccl >= NcclVersion::of(2, 11, 0),
            _ => true,
        }
    }
}

/// What `-o` and `-d` choose from: named words, each offered from some
/// NCCL version on, one of them the default.
trait Word: Copy + 'static {
    /// How nccl-tests calls the kind in its "invalid" line.
    const KIND: &'static str;
    const DEFAULT: Self;
    fn every() -> &'static [Self];
    fn word(self) -> &'static str;
    fn on_offer(self, nccl: NcclVersion) -> bool;
}

impl Word for NcclType {
    const KIND: &'static str = "type";
    const DEFAULT: NcclType = NcclType::Float;
    fn every() -> &'static [NcclType] {
        &NcclType::ALL
    }
    fn word(self) -> &'static str {
        self.name()
    }
    fn on_offer(self, nccl: NcclVersion) -> bool {
        self.offered(nccl)
    }
}

impl Word for RedOp {
    const KIND: &'static str = "op";
    const DEFAULT: RedOp = RedOp::Sum;
    fn every() -> &'static [RedOp] {
        &RedOp::ALL
    }
    fn word(self) -> &'static str {
        self.name()
    }
    fn on_offer(self, nccl: NcclVersion) -> bool {
        self.offered(nccl)
    }
}

/// `-o`'s or `-d`'s word as nccl-tests reads it: an offered name (exact
/// case), `all`, or anything else, said on stdout and read as the default.
fn choose<T: Word>(word: &str, nccl: NcclVersion, said: &mut Vec<Line>) -> Choice<T> {
    match T::every().iter().find(|t| t.on_offer(nccl) && t.word() == word) {
        Some(&t) => Choice::One(t),
        None if word == "all" => Choice::All,
        None => {
            said.push(Line::Out(format!("invalid {} {word}, defaulting to {} .. ", T::KIND, T::DEFAULT.word())));
            Choice::One(T::DEFAULT)
        }
    }
}

/// One of a kind, or every one the library offers (`all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice<T> {
    One(T),
    All,
}

/// Every setting of nccl-tests' command line, with nccl-tests' types (a C
/// `int` is an `i32`, its 64-bit sizes `u64`) and defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `-t`: threads per process.
    pub threads: i32,
    /// `-g`: GPUs per thread.
    pub gpus: i32,
    /// `-b`, `-e`: the first and the last size, bytes.
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// `-i`: the step between sizes when `-f` is 1 or less.
    pub step_bytes: u64,
    /// `-f`: the factor between sizes when above 1 (C `size_t`: a negative
    /// value wraps, as in nccl-tests).
    pub step_factor: u64,
    /// `-n`: timed calls per size.
    pub iters: i32,
    /// `-m`: calls aggregated into one group per timed call.
    pub agg_iters: i32,
    /// `-w`: warm-up calls.
    pub warmup_iters: i32,
    /// `-N`: how many times the whole sweep runs (0: until stopped).
    pub run_cycles: i32,
    /// `-p`: communicators made by each thread in parallel.
    pub parallel_init: i32,
    /// `-c`: check results (0: no, the columns print N/A).
    pub check: i32,
    /// `-o`.
    pub op: Choice<RedOp>,
    /// `-d`.
    pub datatype: Choice<NcclType>,
    /// `-r`: the root of rooted collectives (-1: every rank in turn).
    pub root: i32,
    /// `-z`: 0 asynchronous; 1 barrier after each inner call; 2 no barrier;
    /// 3 wait and barrier after each outer call.
    pub blocking: i32,
    /// `-y`: the default (NULL) stream instead of a stream per GPU.
    pub stream_null: i32,
    /// `-T`: seconds before a stuck collective ends the run (0: none).
    pub timeout_s: i32,
    /// `-G`: CUDA graph launches per timed call (0: no graph).
    pub graph_launches: i32,
    /// `-C`: report CPU time instead of wall time.
    pub report_cputime: i32,
    /// `-S`: a timestamp column.
    pub report_timestamps: i32,
    /// `-J`: the JSON output file.
    pub output_file: Option<String>,
    /// `-a`: which rank's time a row reports: 0 rank 0, 1 the average,
    /// 2 the least, 3 the most.
    pub average: i32,
    /// `-R`: 1 local, 2 symmetric buffer registration.
    pub local_register: i32,
    /// `-x`: the CTA policy (-1: not set).
    pub cta_policy: i32,
    /// `-D`: the device-side implementation (0: NCCL's own).
    pub device_impl: i32,
    /// `-V`: CTAs of the device-side implementation.
    pub device_cta_count: i32,
    /// `-M`: the memory report.
    pub memory_report: i32,
    /// `-u`: elements by which buffers are misaligned.
    pub unalign: i32,
    /// `-I`: per-iteration CUDA event timing.
    pub per_iter_timing: i32,
    /// `-K`: leading per-iteration samples left out of the summary.
    pub per_iter_skip: i32,
    /// commbench's own long options, in the order given, each with its
    /// value ([`crate::cli::options::SHARED`]: nccl-tests has none of
    /// them).
    pub commbench: Vec<(&'static str, Option<String>)>,
}

impl Default for Settings {
    /// nccl-tests' defaults: one thread, one GPU, 32 MiB only, 20 timed
    /// calls after one warm-up, float sum checked, asynchronous, the
    /// average time over ranks.
    fn default() -> Settings {
        Settings {
            threads: 1,
            gpus: 1,
            min_bytes: 32 << 20,
            max_bytes: 32 << 20,
            step_bytes: 1 << 20,
            step_factor: 1,
            iters: 20,
            agg_iters: 1,
            warmup_iters: 1,
            run_cycles: 1,
            parallel_init: 0,
            check: 1,
            op: Choice::One(<RedOp as Word>::DEFAULT),
            datatype: Choice::One(<NcclType as Word>::DEFAULT),
            root: 0,
            blocking: 0,
            stream_null: 0,
            timeout_s: 0,
            graph_launches: 0,
            report_cputime: 0,
            report_timestamps: 0,
            output_file: None,
            average: 1,
            local_register: 0,
            cta_policy: -1,
            device_impl: 0,
            device_cta_count: 16,
            memory_report: 0,
            unalign: 0,
            per_iter_timing: 0,
            per_iter_skip: 0,
            commbench: Vec::new(),
        }
    }
}

impl Settings {
    /// The sweep of `-b`, `-e`, `-f`, `-i` and `-N`: times `-f` when it is
    /// above 1, else plus `-i`, `-N` times (a count below 1, which
    /// nccl-tests runs until stopped, is 1 here: the front end refuses it).
    pub fn sweep(&self) -> Sweep {
        let step =
            if self.step_factor > 1 { SweepStep::Factor(self.step_factor) } else { SweepStep::Bytes(self.step_bytes) };
        // nccl-tests counts -N down to zero after each pass: from 0 (or
        // below) it never gets there, and the sweep repeats until stopped.
        let cycles = u32::try_from(self.run_cycles).unwrap_or(0);
        Sweep { min: self.min_bytes, max: self.max_bytes, step, cycles }
    }
}

/// A line (without its newline) and the stream it goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    Out(String),
    Err(String),
}

/// What reading the command line comes to.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Run with these settings, after printing `said` (warnings nccl-tests
    /// prints while reading its options).
    Run { settings: Box<Settings>, said: Vec<Line> },
    /// Print `said` and exit with `status` before anything starts: the
    /// usage (`-h`, or after an option getopt refused: status 0, as in
    /// nccl-tests) or a refused value (status 255, nccl-tests' `return -1`
    /// from main).
    Exit { said: Vec<Line>, status: i32 },
}

/// The status of a value nccl-tests refuses (`return -1` from main).
pub const BAD_VALUE: i32 = 255;

/// nccl-tests' options, in its table's order: letter, long name, and the
/// text of its usage line.
const TABLE: &[(char, &str, &str)] = &[
    ('t', "nthreads", "<num threads>"),
    ('g', "ngpus", "<gpus per thread>"),
    ('b', "minbytes", "<min size in bytes>"),
    ('e', "maxbytes", "<max size in bytes>"),
    ('i', "stepbytes", "<increment size>"),
    ('f', "stepfactor", "<increment factor>"),
    ('n', "iters", "<iteration count>"),
    ('m', "agg_iters", "<aggregated iteration count>"),
    ('w', "warmup_iters", "<warmup iteration count>"),
    ('N', "run_cycles", "<cycle count> run & print each cycle (default: 1; 0=infinite)"),
    ('p', "parallel_init", "<0/1>"),
    ('c', "check", "<check iteration count>"),
    ('o', "op", ""),
    ('d', "datatype", "<nccltype/all>"),
    ('r', "root", "<root>"),
    ('z', "blocking", "<0/1/2/3> 1=barrier after each inner iter (-m), 2=no barrier, 3=wait and barrier after each outer iter (-n)"),
    ('y', "stream_null", "<0/1>"),
    ('T', "timeout", "<time in seconds>"),
    ('G', "cudagraph", "<num graph launches>"),
    ('C', "report_cputime", "<0/1>"),
    ('S', "report_timestamps", "<0/1> report timestamps (default 0)"),
    ('J', "output_file", "<file> write output to filepath, if accessible. Infer type from suffix (only json supported presently.)"),
    ('a', "average", "<0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>"),
    ('R', "local_register", "<0/1/2> enable local (1) or symmetric (2) buffer registration on send/recv buffers (default: disable (0))"),
    ('x', "cta_policy", "<0/1/2> set CTA policy (NCCL_CTA_POLICY_DEFAULT (0), NCCL_CTA_POLICY_EFFICIENCY (1), NCCL_CTA_POLICY_ZERO (2)) (default: do not set)"),
    ('D', "device_implementation", "<implementation number> enable device implementation (default: 0, use NCCL implementation; requires -R 2 if > 0)"),
    ('V', "device_cta_count", "<number> set number of CTAs for device implementation (default: 16)"),
    ('M', "memory", "<0/1> enable memory usage report (default: 0)"),
    ('u', "unalign", "<index of first element> Misalign source and destination buffers (default: 0)"),
    ('I', "per_iter_timing", "<0/1> per-iteration CUDA event timing\n\t    (best with -z 0, -z 2, or -z 3; with -z 1 includes barrier wait;\n\t    i_p99 uses nearest-rank percentile and may equal i_max\n\t    with <100 samples) (default: 0)"),
    ('K', "per_iter_skip", "<count> exclude leading samples from -I summary stats (default: 0)"),
];

/// The getopt_long table: every option takes a value but `-h`, which ends
/// the reading. Then commbench's own options that make sense here
/// ([`crate::cli::options::SHARED`]), read only when typed whole: every
/// abbreviation of nccl-tests' names reads as in nccl-tests, and none of
/// ours can be mistaken for one of its.
fn option_defs() -> Vec<OptDef> {
    let mut defs: Vec<OptDef> = TABLE
        .iter()
        .map(|&(c, long, _)| OptDef { id: OptId::Short(c), long, arg: ArgKind::Required, stops: false, exact: false })
        .collect();
    defs.push(OptDef { id: OptId::Short('h'), long: "help", arg: ArgKind::None, stops: true, exact: false });
    defs.extend(ours().map(|(long, arg, ..)| OptDef { id: OptId::Long(long), long, arg, stops: false, exact: true }));
    defs
}

/// commbench's options a `*_perf` binary takes: name, value, what its
/// value is and what it does (as the OSU binaries' `-h` says).
pub(crate) fn ours() -> impl Iterator<Item = (&'static str, ArgKind, &'static str, &'static str)> {
    crate::cli::EXTENSIONS.iter().copied().filter(|(name, ..)| crate::cli::options::SHARED.contains(name))
}

/// The usage nccl-tests prints on stdout for `-h` and after a refused
/// option (lines joined, without the last newline); `program` is argv[0]
/// without its directory. The `-o` line lists the operations `nccl`
/// offers.
pub fn usage(program: &str, nccl: NcclVersion) -> String {
    // The usage's own order, which is not the operations' (min before max).
    let order = [RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max, RedOp::Avg, RedOp::MulSum];
    let ops: Vec<&str> = order.iter().filter(|o| o.offered(nccl)).map(|o| o.name()).collect();
    let op_text = format!("<{}/all>", ops.join("/"));
    let mut text = format!("USAGE: {program} \n\t");
    for &(c, long, what) in TABLE {
        let what = if c == 'o' { op_text.as_str() } else { what };
        text.push_str(&format!("[-{c},--{long} {what}] \n\t"));
    }
    text.push_str("[-h,--help]");
    text
}

/// The word a long option `shown` (`--name`, without its value) was typed
/// as: glibc shows it whole, `=value` included. The first such word is the
/// one refused, since getopt stops at it.
fn typed<'a>(args: &'a [String], shown: &'a str) -> &'a str {
    let with_value = format!("{shown}=");
    args.iter().find(|a| *a == shown || a.starts_with(&with_value)).map_or(shown, String::as_str)
}

/// The lines glibc's getopt_long prints on stderr for `err` (nccl-tests
/// leaves getopt's own messages on); `argv0` as given, `args` the words
/// after it.
fn getopt_message(argv0: &str, args: &[String], err: &SplitError) -> String {
    match err {
        SplitError::Unknown { shown } if shown.starts_with("--") => {
            // glibc shows the word whole, value included; an empty name is
            // a prefix of every name.
            let word = typed(args, shown);
            if shown == "--" {
                let all: Vec<String> =
                    option_defs().iter().filter(|d| !d.exact).map(|d| format!("'--{}'", d.long)).collect();
                format!("{argv0}: option '{word}' is ambiguous; possibilities: {}", all.join(" "))
            } else {
                format!("{argv0}: unrecognized option '{word}'")
            }
        }
        SplitError::Unknown { shown } => format!("{argv0}: invalid option -- '{}'", &shown[1..]),
        SplitError::MissingArgument { shown } if shown.starts_with("--") => {
            format!("{argv0}: option '{shown}' requires an argument")
        }
        SplitError::MissingArgument { shown } => {
            // Only the last word can lack its value; glibc names a long
            // option by its whole name.
            let letter = shown.chars().nth(1).unwrap_or('?');
            match TABLE.iter().find(|t| t.0 == letter) {
                Some((_, long, _)) if args.last().is_some_and(|w| w.starts_with("--")) => {
                    format!("{argv0}: option '--{long}' requires an argument")
                }
                _ => format!("{argv0}: option requires an argument -- '{letter}'"),
            }
        }
        SplitError::Ambiguous { shown, candidates } => {
            let word = typed(args, shown);
            let quoted: Vec<String> = candidates.iter().map(|c| format!("'{c}'")).collect();
            format!("{argv0}: option '{word}' is ambiguous; possibilities: {}", quoted.join(" "))
        }
        SplitError::UnexpectedValue { shown } => format!("{argv0}: option '{shown}' doesn't allow an argument"),
    }
}

/// nccl-tests' size reader: a number, then optionally K, M or G (powers of
/// 1024, either case) as the first character that is not white space;
/// anything after that character is ignored. `None` for what nccl-tests
/// refuses (no number, another unit, a negative size), and, where its
/// behaviour is undefined, for sizes that are not a number or pass 2^64.
pub fn parse_size(word: &str) -> Option<u64> {
    let (value, unit) = scan_number_and_unit(word)?;
    let scale: f64 = match unit {
        None => 1.0,
        Some('K' | 'k') => 1024.0,
        Some('M' | 'm') => 1024.0 * 1024.0,
        Some('G' | 'g') => 1024.0 * 1024.0 * 1024.0,
        Some(_) => return None,
    };
    let bytes = value * scale;
    // C's (size_t) conversion truncates; it is undefined from 2^64 on.
    (0.0..18_446_744_073_709_551_616.0).contains(&bytes).then_some(bytes as u64)
}

/// Reads argv as nccl-tests 2.19.6 does with NCCL `nccl` loaded. `argv0`
/// is the program as started (getopt's messages name it so); `args` the
/// words after it.
pub fn parse(argv0: &str, args: &[String], nccl: NcclVersion) -> Parsed {
    let program = argv0.rsplit(['/', '\\']).next().unwrap_or(argv0);
    let (split, error) = getopt::split_until_error(args, &option_defs());
    let mut s = Settings::default();
    let mut said = Vec::new();
    let out = |said: &mut Vec<Line>, text: String| said.push(Line::Out(text));
    let err = |said: &mut Vec<Line>, text: String| said.push(Line::Err(text));
    let refuse = |mut said: Vec<Line>, text: &str| {
        said.push(Line::Err(text.to_string()));
        Parsed::Exit { said, status: BAD_VALUE }
    };
    for token in &split.tokens {
        let letter = match token.id {
            OptId::Short(letter) => letter,
            OptId::Long(name) => {
                s.commbench.push((name, token.value.clone()));
                continue;
            }
        };
        let v = token.value.as_deref().unwrap_or("");
        let int = || int_strtol(v);
        match letter {
            't' => s.threads = int(),
            'g' => s.gpus = int(),
            'b' | 'e' | 'i' => {
                let Some(bytes) = parse_size(v) else {
                    let name = match letter {
                        'b' => "minbytes",
                        'e' => "maxbytes",
                        _ => "stepBytes",
                    };
                    return refuse(said, &format!("invalid size specified for '{name}'"));
                };
                match letter {
                    'b' => s.min_bytes = bytes,
                    'e' => s.max_bytes = bytes,
                    _ => s.step_bytes = bytes,
                }
            }
            'f' => s.step_factor = strtol(v, 0) as u64,
            'n' => s.iters = int(),
            'm' => s.agg_iters = int(),
            'w' => s.warmup_iters = int(),
            'N' => s.run_cycles = int(),
            'c' => s.check = int(),
            'p' => s.parallel_init = int(),
            'o' => s.op = choose(v, nccl, &mut said),
            'd' => s.datatype = choose(v, nccl, &mut said),
            'r' => s.root = int(),
            'z' => s.blocking = int(),
            'y' => s.stream_null = int(),
            'T' => s.timeout_s = int(),
            'G' => {
                if nccl >= NcclVersion::of(2, 9, 0) {
                    s.graph_launches = int();
                } else {
                    out(&mut said, "Option -G (CUDA graph) not supported before NCCL 2.9 + CUDA 11.3. Ignoring".into());
                }
            }
            'C' => s.report_cputime = int(),
            'J' => s.output_file = Some(v.to_string()),
            'S' => s.report_timestamps = int(),
            'a' => s.average = int(),
            'R' => {
                if nccl < NcclVersion::of(2, 19, 0) {
                    out(&mut said, "Option -R (register) is not supported before NCCL 2.19. Ignoring".into());
                } else {
                    s.local_register = int();
                    if s.local_register == 2 && nccl < NcclVersion::of(2, 27, 0) {
                        out(
                            &mut said,
                            "Option -R 2 (symmetric) is not supported before NCCL 2.27. Defaulting to local \
                             registration"
                                .into(),
                        );
                        s.local_register = 1;
                    }
                }
            }
            'M' => s.memory_report = int(),
            'I' => s.per_iter_timing = int(),
            'K' => s.per_iter_skip = int(),
            'x' => {
                if nccl < NcclVersion::of(2, 27, 0) {
                    out(&mut said, "Option -x (cta_policy) is not supported before NCCL 2.27. Ignoring".into());
                } else {
                    s.cta_policy = int();
                    if s.cta_policy > 1 && nccl < NcclVersion::of(2, 28, 0) {
                        out(
                            &mut said,
                            format!(
                                "Option -x (cta_policy) {} is not supported before NCCL 2.28. Ignoring",
                                s.cta_policy
                            ),
                        );
                        s.cta_policy = -1;
                    }
                }
            }
            'D' => {
                if nccl < NcclVersion::of(2, 28, 0) {
                    return refuse(said, "Option -D (device implementation) requires NCCL >= 2.28.0");
                }
                s.device_impl = int();
            }
            'V' => {
                if nccl < NcclVersion::of(2, 28, 0) {
                    return refuse(said, "Option -V (device CTA count) requires NCCL >= 2.28.0");
                }
                s.device_cta_count = int();
                if s.device_cta_count <= 0 || s.device_cta_count > 128 {
                    err(
                        &mut said,
                        format!(
                            "device_cta_count (-V) must be positive and less than 128, got {}. Using default value 16.",
                            s.device_cta_count
                        ),
                    );
                    s.device_cta_count = 16;
                }
            }
            'u' => s.unalign = int(),
            'h' => {
                out(&mut said, usage(program, nccl));
                return Parsed::Exit { said, status: 0 };
            }
            other => unreachable!("-{other} is not in the table"),
        }
    }
    if let Some(e) = error {
        err(&mut said, getopt_message(argv0, args, &e));
        out(&mut said, "invalid option '?'".into());
        out(&mut said, usage(program, nccl));
        return Parsed::Exit { said, status: 0 };
    }
    if s.min_bytes > s.max_bytes {
        let text = format!("invalid sizes for 'minbytes' and 'maxbytes': {} > {}", s.min_bytes, s.max_bytes);
        return refuse(said, &text);
    }
    if s.device_impl > 0 && s.local_register != 2 {
        return refuse(said, "device implementation (-D > 0) requires enabling symmetric memory registration (-R 2)");
    }
    if s.per_iter_timing != 0 && s.per_iter_timing != 1 {
        err(&mut said, "per-iteration timing (-I) only supports 0=off or 1=on. Disabling.".into());
        s.per_iter_timing = 0;
    }
    if s.per_iter_timing != 0 && s.graph_launches >= 1 {
        err(&mut said, "per-iteration timing (-I) is incompatible with CUDA graph mode (-G). Disabling.".into());
        s.per_iter_timing = 0;
    }
    if s.blocking == 3 && s.graph_launches >= 1 {
        err(&mut said, "blocking mode (-z 3) is incompatible with CUDA graph mode (-G). Disabling.".into());
        s.blocking = 0;
    }
    if s.per_iter_skip < 0 || s.per_iter_skip >= s.iters {
        err(
            &mut said,
            format!("per-iteration skip (-K) must be between 0 and {}. Disabling.", s.iters.wrapping_sub(1)),
        );
        s.per_iter_skip = 0;
    }
    if s.per_iter_skip != 0 && s.per_iter_timing == 0 {
        err(&mut said, "per-iteration skip (-K) requires per-iteration timing (-I 1). Disabling.".into());
        s.per_iter_skip = 0;
    }
    // Sweeps on which nccl-tests' loop never ends.
    if s.step_factor <= 1 && s.step_bytes == 0 {
        return refuse(said, "-i 0 with -f 1 or less repeats one size for ever: give a step (-i) or a factor (-f)");
    }
    if s.step_factor > 1 && s.min_bytes == 0 && s.max_bytes > 0 {
        return refuse(said, "-b 0 with a factor (-f) never grows: start at 1 byte or more, or step with -i");
    }
    Parsed::Run { settings: Box::new(s), said }
}

#[cfg(test)]
mod tests;
