//! `commbench`: the tool beside the OSU binaries. Each subcommand lives in
//! the library and takes the arguments after its name; this file only
//! dispatches and turns the result into the exit status.

const USAGE: &str = "\
usage: commbench <command> [options]

commands:
";

/// Subcommands: name, one-line description, entry point.
type Entry = fn(&[String]) -> i32;
const COMMANDS: &[(&str, &str, Entry)] = &[
    ("suite", "run a set of benchmarks through an MPI launcher, with a summary", commbench::suite::main),
    (
        "topo",
        "show this node's cpus, NUMA nodes, NICs and GPUs, and where ranks would go",
        commbench::topo::command::main,
    ),
    ("compare", "judge results against a reference (OSU text or CSV) with tolerances", commbench::compare::main),
    ("history", "keep results in a SQLite history and judge new runs against it", commbench::history::main),
    ("plot", "draw SVG charts of latency and bandwidth against message size", commbench::plot::main),
    ("pairs", "bandwidth between pairs of ranks (bisection, all pairs) with PASS criteria", commbench::pairs::main),
    (
        "locate",
        "find the hosts and links that hang, fail or are slow, with few short pairs jobs",
        commbench::locate::main,
    ),
    ("gpu-bw", "CUDA copy bandwidth and latency: host<->GPU, within and between GPUs", commbench::gpu_bw::main),
    ("list", "the OSU benchmarks this build has (--long: what each measures)", commbench::list::list_main),
    (
        "suite-worker",
        "(started by `suite --one-launch` on every rank: several benchmarks on one MPI job)",
        commbench::runner::sequence::main,
    ),
    ("ab", "run two commands in alternating rounds and compare their OSU tables size by size", commbench::ab::main),
];

fn usage() -> String {
    let mut s = USAGE.to_string();
    for (name, what, _) in COMMANDS {
        s.push_str(&format!("  {name:<10}{what}\n"));
    }
    s.push_str("\n`commbench <command> --help` describes each command.\n");
    s
}

fn main() {
    commbench::topo::hwloc::skip_unused_plugins();
    let args: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let code = match args.first().map(String::as_str) {
        None | Some("-h" | "--help" | "help") => {
            print!("{}", usage());
            if args.is_empty() {
                2
            } else {
                0
            }
        }
        Some("-V" | "--version") => {
            println!("commbench {} (OSU {} compatible)", commbench::VERSION, commbench::OSU_VERSION);
            0
        }
        Some(name) => match COMMANDS.iter().find(|(n, _, _)| *n == name) {
            Some((_, _, run)) => run(&args[1..]),
            None => {
                commbench::say!("commbench: unknown command '{name}' (commands: {})", names());
                2
            }
        },
    };
    commbench::job::exit(code)
}

fn names() -> String {
    COMMANDS.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
}
