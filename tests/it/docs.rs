//! The documentation against the real binaries: every command shown in
//! README.md and docs/*.md, and every relative link and anchor.
//!
//! What the docs follow, and this test reads:
//! - A fenced block marked `sh` or `bash` holds commands, one a line (a
//!   trailing `\` continues it, a word starting with `#` starts a comment,
//!   a leading `$ ` is dropped). A block marked `console` is a session:
//!   its lines starting with `$ ` are commands, the others their output.
//!   Output alone is fenced `text` (or has no language) and is not read.
//! - A command is ours when one of its words names `commbench`, a
//!   nccl-tests program (`all_reduce_perf`) or an `osu_*` binary (any directory: `target/release/osu_bw`,
//!   `target/mpich/release/osu_bw` and `osu_bw` all mean the one built for
//!   this test). Words before it are the environment (`VAR=value`, passed
//!   on) and the launcher (`mpirun ...`, `srun ...`), read only for the job
//!   size (`-np N`, `-n N`).
//!
//! What each command gets, the strongest check that starts nothing:
//! - `osu_*`: the binary itself with `--dry-run=NP` before the options
//!   shown (NP from the launcher, else 2) must exit 0. The dry run parses
//!   every option and value with the run's own parser and plans the job at
//!   that size, and starts no MPI.
//! - a nccl-tests program (`all_reduce_perf`): its words through its own
//!   reader and the check of what the core offers (the library functions
//!   its `main` calls first), with the environment shown; they must run.
//! - `commbench <command>`: every option word shown (up to a `--`, after
//!   which the words are the launcher's) must be one that `commbench
//!   <command> --help` of the real binary names; then the values: suite,
//!   pairs, locate and gpu-bw through the command's own parser (the
//!   library function its `main` calls first; none starts MPI, and the
//!   files locate's `--hostfile` and `--from` name are replaced by a
//!   hostfile and a run directory of four hosts the test writes), compare and plot through the real binary in an empty
//!   directory (clap rejects a bad option or value with its `see ...
//!   --help` hint before any file is read; the files shown are then simply
//!   absent), list and topo by running them (they only read this node).
//!   Any other command (`ab`, which would run the commands it is given) gets
//!   the `--help` check only: `HELP_ONLY` says so.
//! - `nvbandwidth`: its words through its own reader (the option
//!   library's rules), and every case `-t` or `-p` names must be one of
//!   its cases.
//! - A command that is not ours but runs one of our scripts (`scripts/...`,
//!   `sbatch scripts/slurm/...`): the script must exist, and be executable
//!   when it is run directly.
//! - Anything else must be in `NOT_CHECKED`, word for word with why; an
//!   entry the docs no longer show fails the test too.
//!
//! About a second: some 40 dry runs, a few `--help`s, run a few at a time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::*;

/// Command lines the test cannot check, word for word as the docs show
/// them (continuations joined, comment dropped), with why.
const NOT_CHECKED: &[(&str, &str)] = &[
    ("module load openmpi/4.1.6", "a site's environment modules; not a program of ours"),
    ("cargo build --release", "a build (minutes); the binaries this test runs were built so"),
    (
        "MPICC=/opt/mpi/bin/mpicc cargo build --release",
        "a build against a site's MPI wrapper, which this machine lacks",
    ),
    (
        "MPI_PKG_CONFIG=mpich CARGO_TARGET_DIR=target/mpich cargo build --release",
        "the MPICH build; tests that need it build it (common::bin(Mpi::Mpich, ..))",
    ),
    (
        "tar xJf gpu-bundle.tar.xz -C /tmp && /tmp/gpu-bundle/gpu-check.sh",
        "runs on the GPU machine, on what scripts/gpu-bundle.sh packed; tests/it/gpu_check.rs runs it on the stand-in",
    ),
];

/// Commands whose values no cheap path checks: their option names are
/// checked against `--help` only.
const HELP_ONLY: &[(&str, &str)] = &[("ab", "it runs the commands it is given")];

/// Links to pages written on another branch, not here yet: allowed to be
/// missing; checked like any other once present.
const PENDING_PAGES: &[&str] = &[];

/// A command line from the docs: where it is and its words.
#[derive(Debug, Clone)]
struct DocCommand {
    place: String,
    text: String,
    words: Vec<String>,
}

/// The markdown files checked: README.md and docs/*.md.
fn doc_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// Shell-like words: spaces split, quotes group, a word starting with `#`
/// ends the line.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None if c == '#' && !in_word => break,
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// The commands of the shell and console blocks of one markdown text.
fn commands(name: &str, text: &str) -> Vec<DocCommand> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            block = match block {
                None => Some(rest.trim().to_string()),
                Some(_) => None,
            };
            continue;
        }
        let Some(lang) = block.as_deref() else { continue };
        let command_line = match lang {
            "sh" | "bash" => Some(line.strip_prefix("$ ").unwrap_or(line)),
            "console" => line.strip_prefix("$ "),
            _ => None,
        };
        let (start, mut joined) = match (pending.take(), command_line) {
            (Some((start, so_far)), _) => (start, so_far + " " + line.trim()),
            (None, Some(l)) => (lineno, l.trim().to_string()),
            (None, None) => continue,
        };
        if let Some(head) = joined.strip_suffix('\\') {
            joined = head.trim_end().to_string();
            pending = Some((start, joined));
            continue;
        }
        let words = split_words(&joined);
        if words.is_empty() {
            continue;
        }
        out.push(DocCommand { place: format!("{name}:{start}"), text: words.join(" "), words });
    }
    out
}

fn file_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_ours(word: &str) -> bool {
    let n = file_name(word);
    n == "commbench"
        || (n.starts_with("osu_") && n.len() > 4)
        || is_perf(n)
        || n == "bandwidthTest"
        || n == "p2pBandwidthLatencyTest"
        || n == "nvbandwidth"
}

/// nvbandwidth's words through its own reader, and each case `-t` names
/// one it has.
fn check_nvbandwidth(p: &Parts) -> Result<Checked, String> {
    use commbench::gpu_bw::nvbandwidth::{args, cases};
    let a = args::parse(p.args).map_err(|e| format!("nvbandwidth refuses it: {e}"))?;
    for t in &a.testcases {
        cases::find(t).map_err(|e| format!("nvbandwidth: {e}"))?;
    }
    if !a.prefixes.is_empty() && cases::with_prefixes(&a.prefixes).is_empty() {
        return Err(format!("nvbandwidth: no case starts with {}", a.prefixes.join(" or ")));
    }
    Ok("nvbandwidth's options and cases")
}

/// A CUDA sample's words (bandwidthTest, p2pBandwidthLatencyTest): each
/// one the sample reads (it refuses none, so a misspelt option would pass
/// unseen).
fn check_cuda_sample(p: &Parts) -> Result<Checked, String> {
    let unread = match p.program {
        "bandwidthTest" => commbench::gpu_bw::bandwidth_test::unread_arguments(p.args),
        _ => commbench::gpu_bw::p2p_test::unread_arguments(p.args),
    };
    if unread.is_empty() {
        Ok("the CUDA sample's names")
    } else {
        Err(format!("{} reads nothing from {}", p.program, unread.join(" ")))
    }
}

/// One of the nccl-tests programs (`all_reduce_perf`).
fn is_perf(name: &str) -> bool {
    commbench::nccl_tests::run::PROGRAMS.iter().any(|(p, _)| *p == name)
}

/// A nccl-tests program's words, through its own reader and the settings
/// the core offers, with the environment shown and an NCCL of the
/// stand-in's version (2.21.5): what it would run, nothing started.
fn check_perf(p: &Parts) -> Result<Checked, String> {
    use commbench::nccl_tests::cli::NcclVersion;
    let env = |name: &str| p.env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    commbench::nccl_tests::run::accepts(p.program, p.args, NcclVersion::of(2, 21, 5), env)
        .map(|()| "nccl-tests settings")
        .map_err(|(said, status)| format!("{} would end with status {status}: {said:?}", p.program))
}

fn is_env(word: &str) -> bool {
    match word.split_once('=') {
        Some((k, _)) => {
            !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// A command's own program, split from what comes before it.
struct Parts<'a> {
    env: Vec<(String, String)>,
    np: usize,
    program: &'a str,
    args: &'a [String],
}

fn parts(words: &[String]) -> Option<Parts<'_>> {
    let at = words.iter().position(|w| is_ours(w))?;
    let mut env = Vec::new();
    let mut np = 2;
    let before = &words[..at];
    for (i, w) in before.iter().enumerate() {
        if is_env(w) && before[..i].iter().all(|p| is_env(p)) {
            let (k, v) = w.split_once('=').unwrap();
            env.push((k.to_string(), v.to_string()));
        }
        if matches!(w.as_str(), "-np" | "-n" | "--np") {
            if let Some(n) = before.get(i + 1).and_then(|n| n.parse().ok()) {
                np = n;
            }
        }
    }
    Some(Parts { env, np, program: file_name(&words[at]), args: &words[at + 1..] })
}

/// What checked a command, for the summary.
type Checked = &'static str;

fn say_run(what: &str, run: &Run) -> String {
    format!("{what}: exit {:?}\nstdout: {}\nstderr: {}", run.code, run.stdout.trim_end(), run.stderr.trim_end())
}

/// An OSU binary's options, through its own parser: `--dry-run=NP`.
fn check_osu(p: &Parts, bins: &Path, scratch: &Path) -> Result<Checked, String> {
    let exe = bins.join(p.program);
    if !exe.exists() {
        return Err(format!("no binary {} in {}", p.program, bins.display()));
    }
    let mut c = Command::new(&exe);
    c.arg(format!("--dry-run={}", p.np)).args(p.args).current_dir(scratch);
    c.envs(p.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let run = run_cmd(c, Duration::from_secs(30));
    if run.code == Some(0) {
        Ok("osu dry run")
    } else {
        Err(say_run(&format!("{} --dry-run={} {}", p.program, p.np, p.args.join(" ")), &run))
    }
}

/// The option words of a commbench command line: up to `--`, each word
/// that starts with `-` and a letter, without `=value`.
fn option_words(args: &[String]) -> Vec<String> {
    args.iter()
        .take_while(|w| *w != "--")
        .filter(|w| {
            w.starts_with('-')
                && w.chars().nth(w.starts_with("--") as usize + 1).is_some_and(|c| c.is_ascii_alphabetic())
        })
        .map(|w| w.split('=').next().unwrap().to_string())
        .collect()
}

/// Whether `--help` text names an option word (`--tolerance`, `-q`).
fn help_names(help: &str, option: &str) -> bool {
    help.match_indices(option).any(|(i, _)| {
        let before = help[..i].chars().next_back();
        let after = help[i + option.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

fn help_text(
    bins: &Path,
    sub: &str,
    cache: &Mutex<BTreeMap<String, Result<String, String>>>,
) -> Result<String, String> {
    if let Some(h) = cache.lock().unwrap().get(sub) {
        return h.clone();
    }
    let mut c = Command::new(bins.join("commbench"));
    c.args(sub.split(' ')).arg("--help");
    let run = run_cmd(c, Duration::from_secs(30));
    let h = if run.code == Some(0) {
        Ok(run.stdout.clone())
    } else {
        Err(say_run(&format!("commbench {sub} --help"), &run))
    };
    cache.lock().unwrap().insert(sub.to_string(), h.clone());
    h
}

/// A commbench command line: option names against `--help`, then the
/// values by the cheapest real parser the command has.
fn check_commbench(
    p: &Parts,
    bins: &Path,
    scratch: &Path,
    helps: &Mutex<BTreeMap<String, Result<String, String>>>,
) -> Result<Checked, String> {
    let Some((sub, args)) = p.args.split_first() else {
        return Err("commbench without a command".into());
    };
    // history's options belong to its own subcommands (`history check
    // --help` names --last); the option words after that word are checked.
    let (help_of, args) = match (sub.as_str(), args.split_first()) {
        ("history", Some((cmd, rest))) if !cmd.starts_with('-') => (format!("history {cmd}"), rest),
        _ => (sub.clone(), args),
    };
    let help = help_text(bins, &help_of, helps)?;
    let unknown: Vec<String> = option_words(args).into_iter().filter(|o| !help_names(&help, o)).collect();
    if !unknown.is_empty() {
        return Err(format!("commbench {sub} --help does not name {}", unknown.join(", ")));
    }
    let parsed = |r: Result<(), String>| r.map_err(|e| format!("commbench {sub} {}: {e}", args.join(" ")));
    match sub.as_str() {
        "suite" => parsed(commbench::suite::options::parse(args).map(drop).map_err(|e| e.to_string()))
            .map(|_| "--help and suite's parser"),
        "pairs" => parsed(commbench::pairs::options::parse(args).map(drop).map_err(|e| e.to_string()))
            .map(|_| "--help and pairs' parser"),
        "locate" => {
            // --hostfile and --from name the user's files, which its parser
            // reads: stand-ins of four hosts, written by check_all.
            let mut args = args.to_vec();
            for i in 1..args.len() {
                match args[i - 1].as_str() {
                    "--hostfile" => args[i] = scratch.join("hostfile").display().to_string(),
                    "--from" => args[i] = scratch.join("run").display().to_string(),
                    _ => {}
                }
            }
            parsed(commbench::locate::options::parse(&args).map(drop)).map(|_| "--help and locate's parser")
        }
        "gpu-bw" => parsed(commbench::gpu_bw::options::parse(args).map(drop).map_err(|e| e.to_string()))
            .map(|_| "--help and gpu-bw's parser"),
        "compare" | "plot" => {
            let mut c = Command::new(bins.join("commbench"));
            c.arg(sub).args(args).current_dir(scratch);
            let run = run_cmd(c, Duration::from_secs(30));
            if run.stderr.contains(&format!("(see 'commbench {sub} --help')")) {
                Err(say_run(&format!("commbench {sub} {}", args.join(" ")), &run))
            } else {
                Ok("--help and the real binary's parser (no files)")
            }
        }
        "list" | "topo" => {
            let mut c = Command::new(bins.join("commbench"));
            c.arg(sub).args(args).current_dir(scratch);
            let run = run_cmd(c, Duration::from_secs(30));
            if run.code == Some(0) {
                Ok("--help and a real run")
            } else {
                Err(say_run(&format!("commbench {sub} {}", args.join(" ")), &run))
            }
        }
        "history" => parsed(commbench::history::check_args(&p.args[1..])).map(|_| "--help and history's parser"),
        other if HELP_ONLY.iter().any(|(n, _)| *n == other) => Ok("--help only (HELP_ONLY)"),
        other => Err(format!("commbench {other}: no check for this command; add one, or add it to HELP_ONLY with why")),
    }
}

/// A command that is not ours: a script of ours that must exist, or an
/// entry of `NOT_CHECKED`.
fn check_other(cmd: &DocCommand, root: &Path) -> Result<Checked, String> {
    if NOT_CHECKED.iter().any(|(t, _)| *t == cmd.text) {
        return Ok("not checked (NOT_CHECKED)");
    }
    let scripts: Vec<&String> = cmd.words.iter().filter(|w| w.starts_with("scripts/")).collect();
    if scripts.is_empty() {
        return Err("not a command of ours, and not in NOT_CHECKED".into());
    }
    for s in scripts {
        let path = root.join(s);
        let direct = cmd.words.iter().find(|w| !is_env(w)) == Some(s);
        let meta = std::fs::metadata(&path).map_err(|e| format!("{s}: {e}"))?;
        if direct && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 == 0 {
            return Err(format!("{s} is run directly but is not executable"));
        }
    }
    Ok("our script exists")
}

/// Checks every command; the failures, each with its place, and what
/// checked each.
fn check_all(cmds: &[DocCommand], bins: &Path) -> (Vec<String>, BTreeMap<Checked, usize>) {
    let scratch = tempfile::tempdir().unwrap();
    let hosts = ["node01", "node02", "node03", "node04"];
    write_file(scratch.path(), "hostfile", &(hosts.join("\n") + "\n"));
    std::fs::create_dir(scratch.path().join("run")).unwrap();
    write_file(&scratch.path().join("run"), "suite.json", &format!("{{\"hosts\": {hosts:?}}}\n"));
    let helps = Mutex::new(BTreeMap::new());
    let root = repo_root();
    let results: Vec<Result<Checked, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = cmds
            .chunks(cmds.len().div_ceil(4).max(1))
            .map(|chunk| {
                let (scratch, helps, root) = (scratch.path(), &helps, &root);
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|cmd| match parts(&cmd.words) {
                            Some(p) if p.program == "commbench" => check_commbench(&p, bins, scratch, helps),
                            Some(p) if is_perf(p.program) => check_perf(&p),
                            Some(p) if matches!(p.program, "bandwidthTest" | "p2pBandwidthLatencyTest") => {
                                check_cuda_sample(&p)
                            }
                            Some(p) if p.program == "nvbandwidth" => check_nvbandwidth(&p),
                            Some(p) => check_osu(&p, bins, scratch),
                            None => check_other(cmd, root),
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut failures = Vec::new();
    let mut tally = BTreeMap::new();
    for (cmd, r) in cmds.iter().zip(results) {
        match r {
            Ok(how) => *tally.entry(how).or_insert(0) += 1,
            Err(why) => failures.push(format!("{}: `{}`\n  {}", cmd.place, cmd.text, why.replace('\n', "\n  "))),
        }
    }
    (failures, tally)
}

fn all_commands() -> Vec<DocCommand> {
    let root = repo_root();
    let mut cmds = Vec::new();
    for f in doc_files() {
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        cmds.extend(commands(&name, &std::fs::read_to_string(&f).unwrap()));
    }
    cmds
}

fn bin_dir() -> PathBuf {
    bin(Mpi::OpenMpi, "commbench").parent().unwrap().to_path_buf()
}

#[test]
fn docs_commands_parse_against_the_real_binaries() {
    let start = Instant::now();
    let cmds = all_commands();
    assert!(cmds.len() > 30, "too few commands found: {cmds:#?}");
    let texts: BTreeSet<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
    let stale: Vec<&str> = NOT_CHECKED.iter().map(|(t, _)| *t).filter(|t| !texts.contains(t)).collect();
    assert!(stale.is_empty(), "NOT_CHECKED names lines the docs no longer show: {stale:?}");
    let (failures, tally) = check_all(&cmds, &bin_dir());
    assert!(failures.is_empty(), "{} of {} doc commands fail:\n{}", failures.len(), cmds.len(), failures.join("\n"));
    eprintln!("{} doc commands checked in {:.1?}: {tally:?}", cmds.len(), start.elapsed());
}

/// The checker can fail: an unknown option, a bad value of a known one,
/// an unknown commbench option, a command of nobody's, and a bad link are
/// each caught.
#[test]
fn docs_check_catches_what_the_binaries_reject() {
    let fake = "\
```sh
mpirun -np 2 target/release/osu_latency --no-such-option     # unknown to the parser
mpirun -np 2 target/release/osu_latency -m 128:2             # minimum above maximum
osu_latency -m 1:64K \\
    -i 100
mpirun -np 4 commbench pairs --scheme half --bogus-flag
commbench pairs --scheme nosuch --min-bw 68GB/s
commbench compare ref.txt run.csv --tolerance ten
frobnicate --all
```

```text
osu_latency --also-bad    # output, not read
```

```console
$ commbench suite --np 0
output line --not-read
```
";
    let cmds = commands("fake.md", fake);
    let texts: Vec<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts.len(), 8, "{texts:?}");
    assert_eq!(texts[2], "osu_latency -m 1:64K -i 100");
    let (failures, _) = check_all(&cmds, &bin_dir());
    let failed = |place: &str| failures.iter().any(|f| f.starts_with(&format!("fake.md:{place}:")));
    for (line, what) in [
        (2, "unknown osu option"),
        (3, "bad osu value"),
        (6, "unknown pairs option"),
        (7, "bad pairs scheme"),
        (8, "bad compare value"),
        (9, "a command of nobody's"),
        (17, "suite --np 0"),
    ] {
        assert!(failed(&line.to_string()), "{what} (line {line}) not caught: {failures:#?}");
    }
    assert!(!failed("4"), "a good continued command failed: {failures:#?}");
    assert_eq!(failures.len(), 7, "{failures:#?}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    write_file(
        dir.path(),
        "README.md",
        "# Top\n\n[ok](docs/a.md#a-b) [gone](docs/b.md) [bad](docs/a.md#nope) [self](#top)\n",
    );
    write_file(&dir.path().join("docs"), "a.md", "# A: `b`\n\n```text\n# not a heading\n```\n[up](../README.md#top)\n");
    let bad = link_failures(dir.path(), &[dir.path().join("README.md"), dir.path().join("docs/a.md")]);
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(bad[0].contains("docs/b.md") && bad[1].contains("#nope"), "{bad:#?}");
}

/// GitHub's anchor for a heading: lower case, punctuation dropped but `-`
/// and `_`, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown text's headings (outside code blocks), with
/// GitHub's `-1`, `-2` for repeats.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else { continue };
        let title = rest.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let s = slug(title);
        let n = seen.entry(s.clone()).or_insert(0);
        out.insert(if *n == 0 { s.clone() } else { format!("{s}-{n}") });
        *n += 1;
    }
    out
}

/// Every relative link of the files, outside code: its file must exist,
/// and its anchor be a heading of that file.
fn link_failures(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let link = regex::Regex::new(r"\[[^\]]*\]\(([^)\s]+)\)").unwrap();
    let code = regex::Regex::new(r"`[^`]*`").unwrap();
    let mut failures = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(root).unwrap().display().to_string();
        let mut fenced = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            let line = code.replace_all(line, "``");
            for m in link.captures_iter(&line) {
                let target = &m[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').map_or((target, None), |(p, a)| (p, Some(a)));
                let file = if path.is_empty() { f.clone() } else { f.parent().unwrap().join(path) };
                let place = format!("{name}:{}: ({target})", i + 1);
                if !file.exists() {
                    // The pending pages are named from the root.
                    let from_root = Path::new(&name).parent().unwrap().join(path);
                    let pending = PENDING_PAGES.iter().any(|p| Path::new(p) == from_root);
                    if !pending {
                        failures.push(format!("{place}: no such file"));
                    }
                    continue;
                }
                if let Some(a) = anchor {
                    let target_text =
                        if file.is_file() { std::fs::read_to_string(&file).unwrap_or_default() } else { String::new() };
                    if !anchors(&target_text).contains(a) {
                        failures.push(format!("{place}: no heading with anchor #{a}"));
                    }
                }
            }
        }
    }
    failures
}

#[test]
fn docs_links_and_anchors_resolve() {
    let root = repo_root();
    let failures = link_failures(&root, &doc_files());
    assert!(failures.is_empty(), "broken links:\n{}", failures.join("\n"));
}
