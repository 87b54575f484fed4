//! A mutation fuzzer for every parser and reader of user input, on stable
//! Rust (cargo fuzz needs nightly and a sanitizer build of every
//! dependency): seeds from the repository's own test data and the
//! published OSU outputs, mutated bytes (files) or tokens (command lines),
//! each input run under `catch_unwind` with a per-run time and memory
//! check. Findings (panics, runs over 1 s, memory over 512 MiB) are saved
//! under the output folder; an abort (an allocation that fails under the
//! address-space cap) leaves the input in `last-input`.
//!
//!   cargo run --example fuzz -- TARGET SECONDS [OUT_DIR] [RNG_SEED]
//!   TARGET: osu-args suite-args pairs-args topo-args compare-args gpu-bw-args
//!           osu-text csv hostfile machine (or `all`, SECONDS each)
//!
//! Run by scripts/fuzz.sh, not in CI. Not part of the shipped binaries.

use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use commbench::bench::BENCHMARKS;

const TARGETS: &[&str] = &[
    "osu-args",
    "suite-args",
    "pairs-args",
    "topo-args",
    "compare-args",
    "gpu-bw-args",
    "osu-text",
    "csv",
    "hostfile",
    "machine",
];

/// Tokens that break parsers: limits, signs, separators, odd floats.
const INTERESTING: &[&str] = &[
    "0",
    "-1",
    "1",
    "2147483647",
    "2147483648",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "1e20",
    "1e-12",
    "NaN",
    "inf",
    "-0",
    "4G",
    "2G",
    "1K",
    ":",
    "::",
    ",",
    "%",
    "=",
    "",
    " ",
    "\n",
    "\0",
    "-",
    "--",
    "\u{00e9}",
    "0x10",
    "1.5",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// One byte-level mutation (a few stacked).
fn mutate_bytes(rng: &mut Rng, data: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    for _ in 0..=rng.below(4) {
        let n = data.len();
        match rng.below(8) {
            0 if n > 0 => {
                let i = rng.below(n);
                data[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(n + 1);
                data.insert(i, rng.next() as u8);
            }
            2 if n > 0 => {
                let i = rng.below(n);
                let len = rng.below((n - i).min(64) + 1);
                data.drain(i..i + len);
            }
            3 if n > 0 => {
                let i = rng.below(n);
                let len = rng.below((n - i).min(256) + 1);
                let chunk = data[i..i + len].to_vec();
                let at = rng.below(n + 1);
                data.splice(at..at, chunk);
            }
            4 => {
                let tok = INTERESTING[rng.below(INTERESTING.len())].as_bytes();
                let i = rng.below(n + 1);
                data.splice(i..i, tok.iter().copied());
            }
            5 if n > 0 => {
                // Replace a run of digits by an interesting number.
                let i = rng.below(n);
                if data[i].is_ascii_digit() {
                    let mut j = i;
                    while j < n && data[j].is_ascii_digit() {
                        j += 1;
                    }
                    let tok = INTERESTING[rng.below(10)].as_bytes();
                    data.splice(i..j, tok.iter().copied());
                }
            }
            6 if !seeds.is_empty() => {
                // Splice in a piece of another seed.
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() {
                    let i = rng.below(other.len());
                    let len = rng.below((other.len() - i).min(512) + 1);
                    let at = rng.below(n + 1);
                    data.splice(at..at, other[i..i + len].iter().copied());
                }
            }
            7 if n > 0 => {
                // Repeat a line many times (growth and quadratic paths).
                let i = rng.below(n);
                let start = data[..i].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
                let end = data[i..].iter().position(|&b| b == b'\n').map_or(n, |p| i + p + 1);
                let line = data[start..end].to_vec();
                for _ in 0..rng.below(200) {
                    data.splice(end..end, line.iter().copied());
                }
            }
            _ => {}
        }
    }
    data.truncate(1 << 20);
}

/// One token-level mutation of a command line.
fn mutate_args(rng: &mut Rng, args: &mut Vec<String>, pool: &[String]) {
    for _ in 0..=rng.below(3) {
        let n = args.len();
        match rng.below(6) {
            0 if n > 0 => {
                let i = rng.below(n);
                args[i] = INTERESTING[rng.below(INTERESTING.len())].to_string();
            }
            1 => {
                let i = rng.below(n + 1);
                args.insert(i, pool[rng.below(pool.len())].clone());
            }
            2 if n > 0 => {
                args.remove(rng.below(n));
            }
            3 if n > 0 => {
                let i = rng.below(n);
                let mut b = args[i].clone().into_bytes();
                mutate_bytes(rng, &mut b, &[]);
                args[i] = String::from_utf8_lossy(&b).into_owned();
            }
            4 if n > 1 => {
                let (i, j) = (rng.below(n), rng.below(n));
                args.swap(i, j);
            }
            5 if n > 0 => {
                // Glue a value to its option (`-m1:2`, `--timeout=5`).
                let i = rng.below(n);
                let tok = INTERESTING[rng.below(INTERESTING.len())];
                args[i] =
                    if args[i].starts_with("--") { format!("{}={tok}", args[i]) } else { format!("{}{tok}", args[i]) };
            }
            _ => {}
        }
    }
    args.truncate(64);
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_under(&p, keep, out);
        } else if keep(&p) {
            if let Ok(b) = std::fs::read(&p) {
                out.push(b);
            }
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn file_seeds(target: &str) -> Vec<Vec<u8>> {
    let r = root();
    let mut out = Vec::new();
    let ext = |e: &'static str| move |p: &Path| p.extension().is_some_and(|x| x == e);
    match target {
        "osu-text" => {
            files_under(&r.join("tests/data"), &ext("txt"), &mut out);
            files_under(&r.join("tests/golden"), &|_| true, &mut out);
            files_under(Path::new("/work/shared/reference/osu-published-outputs"), &ext("txt"), &mut out);
        }
        "csv" => files_under(&r.join("fuzz/seeds/csv"), &ext("csv"), &mut out),
        "hostfile" => {
            files_under(&r.join("hostfiles"), &|p| p.extension().is_none_or(|x| x != "md"), &mut out);
            out.push(b"node1 slots=4\nnode2 slots=4 max_slots=8\n# comment\nnode3:2\n".to_vec());
        }
        "machine" => files_under(&r.join("tests/machines"), &ext("json"), &mut out),
        _ => {}
    }
    out
}

fn arg_seeds(target: &str) -> Vec<Vec<String>> {
    let m = root().join("tests/machines/epyc-hdr.json").display().to_string();
    let d = root().join("tests/data/compare/seed_osu_bw.txt").display().to_string();
    let lines: Vec<String> = match target {
        "osu-args" => vec![
            "-m 1:4M -i 100 -x 10".into(),
            "-W 64 -b multiple -m 8K: -T mpi_char,mpi_int -z 50,99".into(),
            "--timeout 60 -c -u 5 -f -k fixed:1 -p 2".into(),
            "-V -R 1 -M 1G -a 4 -l -x 0 H H".into(),
            "--bind core --cpu-list 0-3 --nic mlx5_0 --results-dir x --csv y.csv --no-results".into(),
        ],
        "suite-args" => vec![
            "--np 4 --ppn 2 --nodes 2 --timeout 60 --max-time 600 --dry-run".into(),
            "latency bw --args -i_10 --tag t --launcher mpirun --dry-run".into(),
            "--bench-args osu_bw:-W_32 --dry-run --quiet".into(),
        ],
        "pairs-args" => vec![
            "--size 64MB -W 64 -i 10 -x 2 --scheme all".into(),
            "--latency --latency-size 8 --latency-iterations 1000 --latency-warmup 100".into(),
            "--min-bw 10GB/s --max-lat 5us --min-fraction-of-median 0.5 --rounds 3 --scheme random --seed 3".into(),
            "--timeout 60 --no-results".into(),
        ],
        "topo-args" => vec![
            format!("--machine {m} --ranks-per-node 8 --format json"),
            format!("--machine {m} --ranks-per-node 4 --bind numa --cpu-list 0-3,8"),
            format!("--machine {m} --ranks-per-node 2 --nic mlx5_0 --gpu 0"),
        ],
        "compare-args" => vec![
            format!("{d} {d} --tolerance 10% --allowed-failures 2"),
            format!("{d} {d} --min-bw 1K:100 --max-lat :8:5 --min-rate 1M --format csv"),
            format!("{d} {d} --require-all --allow-memory-mismatch --quiet"),
        ],
        "gpu-bw-args" => vec![
            "--tests h2d,d2h,p2p --gpus 0-3,5 --size 32M --reps 5 --no-results".into(),
            "--latency-size 16 --latency-reps 100 --min-bw 300 --results-dir r".into(),
            "--tests all --min-bw 2400Gbit/s --gpus 1".into(),
        ],
        _ => vec![],
    };
    // `_` in a seed word stands for a space inside one argument.
    let word = |w: String| if w.contains('/') { w } else { w.replace('_', " ") };
    lines.iter().map(|l| words(l).into_iter().map(word).collect()).collect()
}

/// Runs one input; Err(what) on a finding other than a panic.
fn exec(target: &str, bytes: &[u8], args: &[String], bench: usize) {
    let text = String::from_utf8_lossy(bytes);
    match target {
        "osu-text" => {
            let _ = commbench::compare::osu_text::parse(&text, "fuzz", "fuzz");
        }
        "csv" => {
            let _ = commbench::compare::csv_input::parse(&text, "fuzz", "fuzz");
            let _ = commbench::compare::gpu_csv::parse(&text, "fuzz", "fuzz");
        }
        "hostfile" => {
            let _ = commbench::launch::hostfile::parse(&text);
        }
        "machine" => {
            if let Ok(m) = commbench::topo::describe::from_json(&text, "fuzz") {
                let _ = serde_json::to_string(&m);
            }
        }
        "osu-args" => {
            let _ = commbench::cli::parse(BENCHMARKS[bench % BENCHMARKS.len()].spec, args);
        }
        "suite-args" => {
            let _ = commbench::suite::options::parse(args);
        }
        "pairs-args" => {
            let _ = commbench::pairs::options::parse(args);
        }
        "gpu-bw-args" => {
            let _ = commbench::gpu_bw::options::parse(args);
        }
        "topo-args" => {
            let _ = commbench::topo::command::main(args);
        }
        "compare-args" => {
            let _ = commbench::compare::main(args);
        }
        _ => unreachable!(),
    }
}

fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
        * 1024
}

struct Findings {
    dir: PathBuf,
    count: usize,
}

impl Findings {
    fn save(&mut self, target: &str, kind: &str, detail: &str, input: &[u8]) {
        self.count += 1;
        let p = self.dir.join(format!("{target}-{kind}-{}.txt", self.count));
        let _ = std::fs::write(&p, input);
        println!("FINDING {target} {kind}: {detail} (input in {})", p.display());
    }
}

fn run_target(target: &str, secs: f64, rng: &mut Rng, findings: &mut Findings) -> u64 {
    let files = file_seeds(target);
    let argvs = arg_seeds(target);
    let pool: Vec<String> = argvs.iter().flatten().cloned().collect();
    let last = findings.dir.join("last-input");
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut execs = 0u64;
    while Instant::now() < deadline {
        let (bytes, args) = if argvs.is_empty() {
            let mut b = if files.is_empty() { Vec::new() } else { files[rng.below(files.len())].clone() };
            mutate_bytes(rng, &mut b, &files);
            (b, Vec::new())
        } else {
            let mut a = argvs[rng.below(argvs.len())].clone();
            mutate_args(rng, &mut a, &pool);
            (format!("{a:?}").into_bytes(), a)
        };
        let _ = std::fs::write(&last, &bytes);
        let bench = rng.below(64);
        let before = rss();
        let t = Instant::now();
        let r = panic::catch_unwind(AssertUnwindSafe(|| exec(target, &bytes, &args, bench)));
        let took = t.elapsed();
        execs += 1;
        if let Err(e) = r {
            let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            findings.save(target, "panic", &msg.unwrap_or_default(), &bytes);
        }
        if took > Duration::from_secs(1) {
            findings.save(target, "slow", &format!("{took:?}"), &bytes);
        }
        let grew = rss().saturating_sub(before);
        if grew > 512 << 20 {
            findings.save(target, "memory", &format!("{} MiB", grew >> 20), &bytes);
        }
    }
    execs
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let (Some(which), Some(secs)) = (argv.first(), argv.get(1).and_then(|s| s.parse::<f64>().ok())) else {
        commbench::say!("usage: fuzz TARGET|all SECONDS [OUT_DIR] [RNG_SEED]; targets: {}", TARGETS.join(" "));
        std::process::exit(2);
    };
    let dir = PathBuf::from(argv.get(2).map_or("target/fuzz-findings", String::as_str));
    std::fs::create_dir_all(&dir).expect("output folder");
    let seed = argv.get(3).and_then(|s| s.parse().ok()).unwrap_or(0x9e37_79b9_7f4a_7c15u64) | 1;
    // Cap the address space so a runaway allocation aborts (and leaves
    // last-input) instead of taking the machine's memory.
    let cap = libc::rlimit { rlim_cur: 4 << 30, rlim_max: 4 << 30 };
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &cap) };
    // Panics are findings, reported once by the loop, not by the hook.
    panic::set_hook(Box::new(|_| {}));
    // Subcommands print; keep the report readable.
    let mut findings = Findings { dir, count: 0 };
    let mut rng = Rng(seed);
    let targets: Vec<&str> = if which == "all" { TARGETS.to_vec() } else { vec![which.as_str()] };
    for t in targets {
        if !TARGETS.contains(&t) {
            commbench::say!("unknown target {t}; targets: {}", TARGETS.join(" "));
            std::process::exit(2);
        }
        let n = run_target(t, secs, &mut rng, &mut findings);
        println!("TARGET {t} executions {n} findings-so-far {}", findings.count);
        let _ = std::io::stdout().flush();
    }
    std::process::exit(if findings.count == 0 { 0 } else { 1 });
}
