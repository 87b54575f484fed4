//! `-h` text: the same letters and meanings as OSU 7.4, in OSU's order and
//! column layout, described in commbench's own words, followed by the
//! long-only commbench options.

use super::{long_name, ACCEL_LETTER, EXTENSIONS};
use crate::options::{Backend, Format};
use crate::spec::{BenchSpec, ProcRule, Workers, DEFAULT_MEM_LIMIT, DEFAULT_WINDOW, LARGE_MESSAGE_SIZE};

fn describe(letter: char, spec: &BenchSpec) -> Vec<String> {
    let d = &spec.defaults;
    let counts = if spec.large_switch {
        format!("{} up to {} bytes, {} above", d.small_iterations, LARGE_MESSAGE_SIZE, d.large_iterations)
    } else {
        format!("{}", d.small_iterations)
    };
    let warm = if spec.large_switch {
        format!("{} up to {} bytes, {} above", d.small_warmup, LARGE_MESSAGE_SIZE, d.large_warmup)
    } else {
        format!("{}", d.small_warmup)
    };
    let lines: Vec<String> = match letter {
        'h' => vec!["show this help and exit".into()],
        'v' => vec!["show the benchmark title and commbench version, then exit".into()],
        'm' if !spec.typed() => vec!["accepted for compatibility and ignored (a barrier moves no message)".into()],
        'm' if spec.one_sided.is_some_and(|r| r.one_element) => vec![
            format!(
                "[MIN:]MAX - bounds the buffers only (default {}:{}); the one row is",
                spec.min_size, spec.max_size
            ),
            "one element of each -T type, as in OSU".into(),
        ],
        'm' => vec![
            format!(
                "[MIN:]MAX - message sizes in bytes, doubling from MIN to MAX (default {}:{})",
                spec.min_size, spec.max_size
            ),
            "-m 128     only MAX; -m 2:128 both; -m 2: only MIN; K/M/G suffixes allowed".into(),
        ],
        'x' if spec.one_sided.is_some_and(|r| r.lock_warms_up_as_timed) => vec![
            format!("N - untimed warm-up iterations per size, up to 2147483647 (default {warm});"),
            "with -s lock, sizes above 8192 bytes warm up as often as they are timed, as in OSU".into(),
        ],
        'x' => vec![format!("N - untimed warm-up iterations per size, up to 2147483647 (default {warm})")],
        'i' => vec![format!("N - timed iterations per size, 1 to 2147483647 (default {counts})")],
        't' if spec.is_overlap() => {
            vec!["N - MPI_Test calls spread over the dummy computation (default 0: none)".into()]
        }
        't' if spec.workers == Some(Workers::Threads) => vec![
            "[S:]R - sender and receiver threads, each 1 to 127 (default 1:2);".into(),
            "-t R sets only the receiver's".into(),
        ],
        't' if spec.workers.is_some() => vec![
            "[S:]R - processes the sender and the receiver fork, each 1 to 127".into(),
            "(default 2:2); -t R sets the receiver's and the sender forks none".into(),
        ],
        't' => vec!["N - accepted for compatibility and ignored".into()],
        'W' => vec![format!(
            "N - messages in flight before each synchronisation, 1 to 2147483647 (default {DEFAULT_WINDOW})"
        )],
        'b' => vec![
            "single|multiple - reuse one buffer, or give every message in flight".into(),
            "its own buffer (default single)".into(),
        ],
        'c' if spec.one_sided.is_some() => vec!["not supported: the atomics' results are not checked (refused)".into()],
        'c' => vec![
            "[log[:DIR]] - check every received message and add a Validation column;".into(),
            "with log, write the mismatches of failing ranks under DIR (default validation_output)".into(),
        ],
        'u' => vec!["N - with -c, untimed repetitions before each timed one (default 5, at most 10)".into()],
        'G' => vec!["not supported: the CSV results carry per-size percentiles instead".into()],
        'D' => vec!["not supported: derived datatypes".into()],
        'N' => vec![
            "cart:D:R|graph:FILE - the ranks' topology: a periodic grid of D dimensions, each".into(),
            "rank's neighbours those within R steps (default cart:1:1); or one from,to edge a line".into(),
            format!("(a graph file lists at most {} edges)", crate::bench::neighborhood::MAX_GRAPH_EDGES),
        ],
        'P' => vec!["not supported: PAPI counters".into()],
        'T' => vec!["mpi_char|mpi_int|mpi_float|all - element type; may be repeated (default mpi_char)".into()],
        'I' => vec!["not supported: MPI-4 session initialisation".into()],
        'z' => vec![
            "[P1,P2,...] - add per-iteration percentile columns, at most 5, each 0..100".into(),
            "(attach the list: -z50,99; a bare -z means 50,90,99)".into(),
        ],
        'p' => vec!["N - number of sending ranks, each paired with rank + np/2 (default np/2)".into()],
        'R' => vec!["0|1 - print the Messages/s column (default 1)".into()],
        'V' => vec!["run each size with windows 1, 2, 4 ... 128 (not together with -W)".into()],
        'f' if spec.is_overlap() => vec![
            "add the start, MPI_Test and MPI_Wait times and the fastest and slowest".into(),
            "rank's pure communication time".into(),
        ],
        'f' => vec!["add Min and Max latency over ranks and the Iterations column".into()],
        'M' => vec![
            format!("BYTES - most memory one message buffer may take (default {DEFAULT_MEM_LIMIT});"),
            "a larger -m with this given is an error; without it the largest size is lowered".into(),
        ],
        'a' => vec!["N - accepted for compatibility (device arrays of non-blocking tests) and ignored".into()],
        'l' => vec!["use MPI_IN_PLACE: the receive buffer is also the input".into()],
        'd' if spec.is_point_to_point() => vec![
            "TYPE - cuda or managed: the GPU (chosen by placement or --gpu) for".into(),
            "buffers the SRC DST words put on the device (D, M); needs a CUDA-aware MPI".into(),
        ],
        'd' => vec![
            "TYPE - cuda or managed: every buffer on the GPU (chosen by placement or".into(),
            "--gpu); needs a CUDA-aware MPI".into(),
        ],
        'k' => vec![
            "fixed:R|rotate - root of the reduction: rank R (default fixed:0), or".into(),
            "iteration i mod np".into(),
        ],
        'w' => match spec.one_sided {
            Some(r) => vec![format!(
                "create|allocate|dynamic - how each size's window is made: MPI_Win_create, MPI_Win_allocate or \
                 MPI_Win_create_dynamic (default {})",
                r.default_win.word()
            )],
            None => vec![String::new()],
        },
        's' => match spec.one_sided {
            Some(r) => {
                let words: Vec<&str> = r.syncs.iter().map(|s| s.word()).collect();
                vec![format!(
                    "{} - how each access epoch is synchronised (default {})",
                    words.join("|"),
                    r.default_sync.word()
                )]
            }
            None => vec![String::new()],
        },
        _ => vec![String::new()],
    };
    lines
}

/// The full help text.
pub fn text(spec: &BenchSpec) -> String {
    let mut out = format!("Usage: {} [options]\nOptions:\n", spec.name);
    for letter in spec.letters.chars() {
        let long = long_name(letter).unwrap_or("");
        let lines = describe(letter, spec);
        out.push_str(&format!("  -{letter}, --{long:<20}{}\n", lines[0]));
        for l in &lines[1..] {
            out.push_str(&format!("{:28}{l}\n", ""));
        }
    }
    if !spec.is_startup() {
        out.push_str(&format!("  -{ACCEL_LETTER}, --{:<20}{}\n", "accelerator", describe(ACCEL_LETTER, spec)[0]));
        for l in &describe(ACCEL_LETTER, spec)[1..] {
            out.push_str(&format!("{:28}{l}\n", ""));
        }
    }
    out.push_str("commbench options (long form only):\n");
    for (long, _, arg, what) in EXTENSIONS {
        let name = match *arg {
            "" => long.to_string(),
            // An optional value is attached (`--dry-run=512`).
            _ if arg.starts_with('[') => format!("{long}{arg}"),
            _ => format!("{long} {arg}"),
        };
        out.push_str(&format!("      --{name:<20}{what}\n"));
        // One line per backend and per format, from the choices themselves.
        if *long == "backend" {
            for b in Backend::ALL {
                out.push_str(&format!("{:30}{:<12}{}\n", "", b.word(), b.about()));
            }
        }
        if *long == "format" {
            for f in Format::ALL {
                out.push_str(&format!("{:30}{:<12}{}\n", "", f.word(), f.about()));
            }
        }
    }
    if spec.is_startup() {
        out.push_str("OSU's other options (-m, -x, -i, ...) are accepted and ignored, with one warning.\n");
    }
    match spec.procs {
        ProcRule::ExactlyTwo => out.push_str("Run with exactly two processes, e.g. mpirun -np 2.\n"),
        ProcRule::Pairs => out.push_str(
            "Run with an even number of processes; rank i is paired with rank i + np/2,\n\
             so place ranks in blocks (all senders on one node, receivers on the other).\n",
        ),
        ProcRule::AtLeastTwo => out.push_str("Run with at least two processes.\n"),
        ProcRule::Any => out.push_str("Run with any number of processes.\n"),
        ProcRule::Nodes => out.push_str(
            "Run on two or more nodes with the same number of processes on each; the first node (by host name) \
             exchanges with every other.\n",
        ),
    }
    out
}
