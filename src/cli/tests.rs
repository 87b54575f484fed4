//! Option grammar over the real benchmark specs: defaults, OSU's accepted
//! forms, and the exact error line for each bad input.

use super::options::*;
use super::*;
use crate::bench::collective::allgather::SPEC as ALLGATHER;
use crate::bench::collective::allreduce::SPEC as ALLREDUCE;
use crate::bench::collective::alltoall::SPEC as ALLTOALL;
use crate::bench::collective::barrier::SPEC as BARRIER;
use crate::bench::collective::bcast::SPEC as BCAST;
use crate::bench::collective::reduce::SPEC as REDUCE;
use crate::bench::collective::reduce_scatter::SPEC as REDUCE_SCATTER;
use crate::bench::pt2pt::bibw::SPEC as BIBW;
use crate::bench::pt2pt::bw::SPEC as BW;
use crate::bench::pt2pt::latency::SPEC as LATENCY;
use crate::bench::pt2pt::mbw_mr::SPEC as MBW_MR;
use crate::bench::pt2pt::multi_lat::SPEC as MULTI_LAT;
use crate::datatype::Datatype;
use options::RootRank;
use std::path::PathBuf;
use std::time::Duration;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn run(spec: &BenchSpec, a: &[&str]) -> Options {
    test_options(spec, a)
}

fn err(spec: &BenchSpec, a: &[&str]) -> String {
    match parse(spec, &args(a)) {
        Err(CliError::Usage(m)) => m,
        other => panic!("{a:?} should fail: {other:?}"),
    }
}

#[test]
fn defaults() {
    let o = run(&LATENCY, &[]);
    assert_eq!((o.min_size, o.max_size), (0, 4194304));
    assert_eq!(o.datatypes, vec![Datatype::Char]);
    assert_eq!(o.window, 64);
    assert_eq!(o.validation_warmup, 0, "no -c means no validation repetitions");
    assert_eq!(o.buffers, BufferMode::Single);
    assert!(o.tails.is_none() && o.validation.is_none());
    assert_eq!(o.timeout, Some(Duration::from_secs(600)), "a watchdog unless --timeout 0");
    let o = run(&BW, &[]);
    assert_eq!((o.min_size, o.max_size), (1, 4194304));
    let o = run(&BW, &["-c"]);
    assert_eq!(o.validation_warmup, 5);
}

#[test]
fn help_and_version() {
    assert!(matches!(parse(&LATENCY, &args(&["-h"])), Ok(Parsed::Help)));
    assert!(matches!(parse(&LATENCY, &args(&["--help", "-q"])), Ok(Parsed::Help)));
    assert!(matches!(parse(&LATENCY, &args(&["-v"])), Ok(Parsed::Version(None))));
    assert!(matches!(parse(&LATENCY, &args(&["--vers"])), Ok(Parsed::Version(None))));
    assert!(matches!(parse(&LATENCY, &args(&["-d", "CUDA", "-v"])), Ok(Parsed::Version(Some(Accel::Cuda)))));
    assert!(matches!(parse(&LATENCY, &args(&["-v", "-d", "cuda"])), Ok(Parsed::Version(None))));
    assert_eq!(err(&LATENCY, &["-q", "-h"]), "Invalid option [-q]");
    assert_eq!(err(&LATENCY, &["-i", "0", "-h"]), "Invalid Number of Iterations [-i 0]");
}

#[test]
fn message_sizes() {
    let o = run(&LATENCY, &["-m", "64"]);
    assert_eq!((o.min_size, o.max_size), (0, 64));
    let o = run(&BW, &["-m", "2:128"]);
    assert_eq!((o.min_size, o.max_size), (2, 128));
    let o = run(&BW, &["-m", "1024:"]);
    assert_eq!((o.min_size, o.max_size), (1024, 4194304));
    let o = run(&BW, &["--message-size=:8"]);
    assert_eq!((o.min_size, o.max_size), (1, 8));
    let o = run(&BW, &["-m", "0:8"]);
    assert_eq!((o.min_size, o.max_size), (1, 8), "a minimum of 0 keeps the smallest size");
    let o = run(&BW, &["-m", "4K:1M"]);
    assert_eq!((o.min_size, o.max_size), (4096, 1 << 20));
}

#[test]
fn bad_message_sizes() {
    for (a, why) in [
        ("1:2:3", "more than one ':'"),
        (":", "give MIN:MAX, MIN: or :MAX"),
        ("abc", "not a size in bytes"),
        ("-5", "not a size in bytes"),
        ("12abc", "not a size in bytes"),
        ("0", "the maximum must be at least 1 byte"),
        ("128:2", "minimum is larger than maximum"),
        ("8:x", "not a size in bytes"),
    ] {
        assert_eq!(err(&LATENCY, &["-m", a]), format!("Invalid Message Size [-m {a}] ({why})"));
    }
    assert_eq!(err(&BW, &["-m", "8M:"]), "Invalid Message Size [-m 8M:] (minimum is larger than maximum)");
    assert_eq!(
        err(&BW, &["-m", "2G"]),
        "Invalid Message Size [-m 2G] (MPI counts stop at 2147483647; the largest size is 2G - 1)"
    );
    assert_eq!(run(&BW, &["-m", "1G"]).max_size, 1 << 30);
}

#[test]
fn counts() {
    let o = run(&LATENCY, &["-i", "5", "-x", "0"]);
    assert_eq!((o.iterations, o.warmup), (Some(5), Some(0)));
    assert_eq!(err(&LATENCY, &["-i", "0"]), "Invalid Number of Iterations [-i 0]");
    assert_eq!(err(&LATENCY, &["-i", "abc"]), "Invalid Number of Iterations [-i abc]");
    assert_eq!(err(&LATENCY, &["-x", "-1"]), "Invalid Number of Warmup Iterations [-x -1]");
    // Counts OSU keeps in a C int are bounded, so none can abort an allocation.
    assert_eq!(run(&BW, &["-i", "2147483647", "-W", "2147483647"]).window, 2147483647);
    for (letter, value) in [("-i", "4294967296"), ("-i", "18446744073709551615"), ("-W", "4G"), ("-x", "2G")] {
        assert!(err(&BW, &[letter, value]).ends_with("(give 1 to 2147483647)") || letter == "-x", "{letter} {value}");
    }
    assert_eq!(err(&BW, &["-x", "2G"]), "Invalid Number of Warmup Iterations [-x 2G] (give 0 to 2147483647)");
    assert!(err(&BW, &["--timeout", "1e20"]).starts_with("Invalid timeout [--timeout 1e20]"));
    assert!(err(&BW, &["--timeout", "1e-12"]).starts_with("Invalid timeout"));
    assert_eq!(err(&LATENCY, &["-x", "abc"]), "Invalid Number of Warmup Iterations [-x abc]");
    assert_eq!(err(&BW, &["-W", "0"]), "Invalid Window Size [-W 0]");
    assert_eq!(run(&BW, &["-W", "16"]).window, 16);
}

#[test]
fn buffers_types_tails() {
    assert_eq!(run(&BW, &["-b", "Multiple"]).buffers, BufferMode::Multiple);
    assert_eq!(err(&BW, &["-b", "foo"]), "Please use 'single' or 'multiple' for buffer type [-b foo]");
    assert_eq!(run(&LATENCY, &["-T", "all"]).datatypes, Datatype::ALL.to_vec());
    assert_eq!(
        run(&LATENCY, &["-T", "mpi_float", "-T", "all"]).datatypes,
        vec![Datatype::Float, Datatype::Char, Datatype::Int]
    );
    assert_eq!(
        err(&LATENCY, &["-T", "mpi_double"]),
        "Invalid datatype [-T mpi_double] (use mpi_char, mpi_int, mpi_float or all)"
    );
    assert_eq!(run(&LATENCY, &["-z"]).tails, Some(vec![50, 90, 99]));
    assert_eq!(run(&LATENCY, &["-z5,95"]).tails, Some(vec![5, 95]));
    assert_eq!(run(&LATENCY, &["--tail-lat=1,10,100"]).tails, Some(vec![1, 10, 100]));
    assert_eq!(err(&LATENCY, &["-z101,5"]), "Percentile range must be in between 0 and 100 [-z 101,5]");
    assert_eq!(err(&LATENCY, &["-z-1"]), "Percentile range must be in between 0 and 100 [-z -1]");
    assert_eq!(err(&LATENCY, &["-zx"]), "Percentile range must be in between 0 and 100 [-z x]");
    assert_eq!(err(&LATENCY, &["-z1,2,3,4,5,6"]), "Too many percentiles [-z 1,2,3,4,5,6] (at most 5 can be printed)");
}

#[test]
fn validation_options() {
    let o = run(&LATENCY, &["-c", "-u", "2"]);
    assert_eq!(o.validation, Some(Validation { log_dir: None }));
    assert_eq!(o.validation_warmup, 2);
    let d = tempfile::tempdir().unwrap();
    let fresh = d.path().join("logs");
    let o = run(&LATENCY, &[&format!("-clog:{}", fresh.display())]);
    assert_eq!(o.validation, Some(Validation { log_dir: Some(fresh) }));
    let e = err(&LATENCY, &[&format!("-clog:{}", d.path().display())]);
    assert!(e.starts_with("Directory already exists. [-c log]"), "{e}");
    assert_eq!(err(&LATENCY, &["-cfoo"]), "Invalid validation option [-c foo] (use -c, -clog or -clog:DIR)");
    assert_eq!(err(&LATENCY, &["-u", "11"]), "Number of Validation Warmup Iterationsmust be less than 10 [-u 11]");
    assert_eq!(err(&LATENCY, &["-u", "-1"]), "Invalid Number of Validation Warmup  Iterations [-u -1]");
}

#[test]
fn letters_per_benchmark() {
    assert_eq!(err(&LATENCY, &["-W", "4"]), "Invalid option [-W]");
    assert_eq!(err(&LATENCY, &["-f"]), "Invalid option [-f]");
    assert_eq!(err(&BW, &["-p", "1"]), "Invalid option [-p]");
    assert_eq!(err(&MULTI_LAT, &["-p", "1"]), "Invalid option [-p]");
    assert_eq!(err(&LATENCY, &["-q"]), "Invalid option [-q]");
    assert_eq!(err(&LATENCY, &["--bogus"]), "Invalid option [--bogus]");
    assert_eq!(err(&LATENCY, &["-m"]), "Option Missing Required Argument [-m]");
    assert_eq!(err(&MBW_MR, &["-m"]), "Option Missing Required Argument [-m]");
    assert_eq!(err(&BW, &["--window-size"]), "Option Missing Required Argument [-W]");
    // bw/bibw accept -t and ignore it, as OSU does
    run(&BIBW, &["-t", "4"]);
}

#[test]
fn unsupported_osu_features_are_refused() {
    assert!(err(&LATENCY, &["-G", "png"]).starts_with("Graph output is not supported by commbench [-G png]"));
    assert_eq!(err(&LATENCY, &["-D", "cont"]), "Derived datatypes are not supported by commbench [-D cont]");
    assert_eq!(err(&LATENCY, &["-P", "x:y"]), "PAPI counters are not supported by commbench [-P x:y]");
    assert_eq!(err(&LATENCY, &["-I"]), "MPI-4 session initialisation is not supported by commbench [-I]");
}

#[test]
fn mbw_mr_options() {
    let o = run(&MBW_MR, &["-p", "2", "-R", "0", "-V"]);
    assert_eq!((o.pairs, o.print_rate, o.vary_window), (Some(2), false, true));
    assert_eq!(err(&MBW_MR, &["-R", "2"]), "Invalid message rate option [-R 2] (use 0 or 1)");
    assert_eq!(err(&MBW_MR, &["-p", "0"]), "Invalid Number of Pairs [-p 0]");
    assert_eq!(err(&MBW_MR, &["-V", "-W", "8"]), "Window size (-W) cannot be combined with a varied window (-V)");
}

#[test]
fn stray_words_and_buffer_locations() {
    assert_eq!(err(&LATENCY, &["-m", "4", "foo", "-m", "8"]), "Unexpected argument [foo]");
    assert_eq!(err(&LATENCY, &["-z", "50,99"]), "Unexpected argument [50,99]");
    let words = |o: Options| o.buffer_locations.map(|b| (b.words(), b.asks_for_device()));
    assert_eq!(words(run(&LATENCY, &["H", "H"])), Some(("H H".into(), false)));
    assert_eq!(words(run(&BW, &["-m", "8", "D", "D"])), Some(("D D".into(), true)));
    assert_eq!(words(run(&BW, &["H", "D", "-i", "5"])), Some(("H D".into(), true)));
    assert_eq!(words(run(&MBW_MR, &["MD", "MH"])), Some(("MD MH".into(), true)));
    // OSU reads the first letter only; so do we.
    assert_eq!(words(run(&ALLREDUCE, &["Device", "Host"])), Some(("Device Host".into(), true)));
    assert_eq!(words(run(&LATENCY, &[])), None);
    assert_eq!(err(&LATENCY, &["D"]), "Buffer locations come in pairs [D] (give SRC DST, e.g. H H or D D)");
    assert_eq!(err(&LATENCY, &["D", "D", "H"]), "Too many buffer locations [D D H] (give SRC DST, e.g. H H or D D)");
    assert_eq!(err(&LATENCY, &["D", "X"]), "Unexpected argument [X]");
}

#[test]
fn verbose_and_chosen_results() {
    assert!(run(&BW, &["--verbose"]).verbose);
    assert!(!run(&BW, &[]).verbose);
    if std::env::var_os("COMMBENCH_RESULTS_DIR").is_none() {
        assert!(!run(&BW, &[]).results_chosen);
    }
    for args in [&["--results-dir", "x"][..], &["--csv", "x.csv"], &["--no-results"]] {
        assert!(run(&BW, args).results_chosen, "{args:?}");
    }
}

#[test]
fn commbench_extensions() {
    let o = run(&BW, &["--results-dir", "out", "--timeout", "30"]);
    assert_eq!(o.results, ResultsDest::Dir(PathBuf::from("out")));
    assert_eq!(o.timeout, Some(Duration::from_secs(30)));
    assert_eq!(run(&BW, &["--csv=x.csv"]).results, ResultsDest::Csv(PathBuf::from("x.csv")));
    assert_eq!(run(&BW, &["--no-results"]).results, ResultsDest::Off);
    assert_eq!(err(&BW, &["--no-results", "--csv", "x"]), "--no-results cannot be combined with --csv");
    assert_eq!(err(&BW, &["--results-dir", "x", "--no-results"]), "--no-results cannot be combined with --results-dir");
    assert_eq!(err(&BW, &["--csv", "x", "--no-results"]), "--no-results cannot be combined with --csv");
    assert_eq!(run(&BW, &["--timeout", "0"]).timeout, None, "no watchdog: wait forever");
    assert_eq!(run(&BW, &["--timeout", "0s"]).timeout, None);
    assert_eq!(
        err(&BW, &["--timeout", "0.5"]),
        "Invalid timeout [--timeout 0.5] (give 1 to 2592000 seconds, e.g. 60 or 5m, or 0 for no watchdog)"
    );
    assert_eq!(err(&BW, &["--no-results=1"]), "Option takes no argument [--no-results]");
    let e = err(&BW, &["--t", "1"]);
    assert!(e.starts_with("Ambiguous option [--t] (could be "), "{e}");
}

#[test]
fn help_text_lists_letters_in_osu_order() {
    for spec in [
        &LATENCY,
        &BW,
        &BIBW,
        &MBW_MR,
        &MULTI_LAT,
        &BARRIER,
        &ALLREDUCE,
        &ALLGATHER,
        &ALLTOALL,
        &REDUCE_SCATTER,
        &BCAST,
        &REDUCE,
    ] {
        let text = help::text(spec);
        assert!(text.starts_with(&format!("Usage: {} [options]\nOptions:\n", spec.name)));
        let letters: String =
            text.lines().filter_map(|l| l.strip_prefix("  -")).filter_map(|l| l.chars().next()).collect();
        // OSU's letters in OSU's order, then -d, which OSU's GPU builds take.
        assert_eq!(letters, format!("{}d", spec.letters), "{}", spec.name);
        for l in text.lines().filter(|l| l.starts_with("  -")) {
            assert_eq!(&l[2..4], &format!("-{}", &l[3..4]));
            assert_eq!(&l[4..8], ", --");
        }
        assert!(text.contains("--results-dir DIR"));
        // Every --format word, one line each, from the formats themselves.
        for f in Format::ALL {
            assert!(text.contains(&format!("{:30}{:<12}{}\n", "", f.word(), f.about())), "{}", f.word());
        }
        // And every --backend word.
        for b in crate::options::Backend::ALL {
            assert!(text.contains(&format!("{:30}{:<12}{}\n", "", b.word(), b.about())), "{}", b.word());
        }
    }
}

#[test]
fn collective_options() {
    let o = run(&ALLREDUCE, &[]);
    assert_eq!((o.min_size, o.max_size, o.full, o.in_place), (1, 1 << 20, false, false));
    let o = run(&ALLREDUCE, &["-f", "-l", "-M", "64M", "-a", "4"]);
    assert_eq!((o.full, o.in_place, o.mem_limit), (true, true, Some(64 << 20)));
    assert_eq!(run(&REDUCE, &["-k", "rotate"]).root, RootRank::Rotate);
    assert_eq!(run(&REDUCE, &["-k", "FIXED:3"]).root, RootRank::Fixed(3));
    assert_eq!(run(&REDUCE, &[]).root, RootRank::Fixed(0));
    assert_eq!(err(&REDUCE, &["-k", "fixed"]), "Please pass root node rank. E.g: -k fixed:1 [-k fixed]");
    assert_eq!(err(&REDUCE, &["-k", "fixed:-1"]), "Invalid root rank [-k fixed:-1] (give a rank from 0 to np-1)");
    assert_eq!(err(&REDUCE, &["-k", "spin"]), "Invalid root rank rotate type. Valid types[fixed, rotate] [-k spin]");
    assert_eq!(err(&ALLREDUCE, &["-k", "rotate"]), "Invalid option [-k]");
    assert_eq!(err(&BCAST, &["-l"]), "Invalid option [-l] (osu_bcast has no in-place form)");
    assert_eq!(err(&BARRIER, &["-l"]), "Invalid option [-l] (osu_barrier has no in-place form)");
    assert_eq!(err(&BARRIER, &["-c"]), "Invalid option [-c]");
    assert_eq!(err(&BARRIER, &["-T", "all"]), "Invalid option [-T]");
    assert_eq!(err(&ALLREDUCE, &["-M", "0"]), "Invalid memory limit [-M 0]");
    assert_eq!(err(&ALLREDUCE, &["-a", "0"]), "Invalid Device Array Size [-a 0]");
    assert_eq!(err(&ALLGATHER, &["-W", "4"]), "Invalid option [-W]");
    // -m is accepted by osu_barrier, as in OSU
    run(&BARRIER, &["-m", "64"]);
}

#[test]
fn placement_options() {
    use crate::topo::request::{BindPolicy, NicSpec};
    let o = run(&LATENCY, &["--bind", "nic", "--nic", "mlx5_2:1", "--cpu-list", "80"]);
    assert_eq!(o.placement.policy(), BindPolicy::Nic);
    assert_eq!(o.placement.nic, Some(vec![NicSpec { device: "mlx5_2".into(), port: Some(1) }]));
    assert_eq!(o.placement.cpu_list, Some(vec![80]));
    assert_eq!(run(&ALLREDUCE, &["--gpu=0,1"]).placement.gpu, Some(vec![0, 1]));
    assert_eq!(err(&LATENCY, &["--bind", "socket"]), "Invalid value [--bind socket] (use none, core, nic or gpu)");
    assert_eq!(err(&BW, &["--cpu-list", "3-1"]), "Invalid value [--cpu-list 3-1] (range '3-1' runs backwards)");
    assert_eq!(
        err(&BW, &["--cpu-list", "0", "--bind", "core"]),
        "--cpu-list already says where each rank runs; drop --bind core"
    );
    assert_eq!(err(&BW, &["--bind"]), "Option Missing Required Argument [--bind]");
}

#[test]
fn accelerator_option() {
    for spec in [&LATENCY, &BW, &MBW_MR, &ALLREDUCE, &BARRIER, &REDUCE] {
        assert_eq!(test_options(spec, &["-d", "cuda"]).accel, Some(Accel::Cuda), "{}", spec.name);
        assert_eq!(test_options(spec, &["--accelerator=Managed"]).accel, Some(Accel::Managed));
        assert_eq!(test_options(spec, &[]).accel, None);
    }
    assert_eq!(err(&LATENCY, &["-d", "gpu"]), "Invalid Accel Type Specified [-d gpu]");
    assert_eq!(err(&LATENCY, &["-d"]), "Option Missing Required Argument [-d]");
    let rocm = err(&ALLREDUCE, &["-d", "rocm"]);
    assert!(rocm.starts_with("Invalid Accel Type Specified [-d rocm] (") && rocm.contains("ROCm is not supported"));
    assert!(err(&BW, &["-d", "openacc"]).contains("OpenACC is not supported"));
    let ucx = err(&LATENCY, &["-d", "cuda", "--backend", "ucx", "D", "D"]);
    assert!(ucx.starts_with("-d cuda cannot be combined with --backend ucx"), "{ucx}");
    assert_eq!(
        err(&LATENCY, &["--backend=ucx", "-d", "managed"]).split(" (").next().unwrap(),
        "-d managed cannot be combined with --backend ucx"
    );
    assert!(err(&ALLTOALL, &["--backend", "nccl", "-l"]).starts_with("Invalid option [-l] (NCCL's all-to-all"));
    assert!(test_options(&ALLTOALL, &["-l"]).in_place);
    let o = test_options(&LATENCY, &["-d", "cuda", "D", "H"]);
    assert_eq!(o.buffer_locations.map(|b| b.words()), Some("D H".to_string()));
}

#[test]
fn nccl_tests_format_and_min_busbw() {
    let o = run(&ALLREDUCE, &["--backend", "nccl", "--format", "nccl-tests"]);
    assert_eq!(o.format, Format::NcclTests);
    // nccl-tests checks by default, in floats, without validation repeats.
    assert_eq!((o.validation.is_some(), o.validation_warmup, o.datatypes.clone()), (true, 0, vec![Datatype::Float]));
    let o = run(&ALLTOALL, &["--backend=nccl", "--format=nccl-tests", "-T", "mpi_int", "-c"]);
    assert_eq!((o.datatypes, o.validation.is_some()), (vec![Datatype::Int], true));
    assert_eq!(run(&ALLREDUCE, &[]).format, Format::Osu);
    assert_eq!(run(&ALLREDUCE, &["--format", "osu"]).format, Format::Osu);
    assert_eq!(run(&ALLREDUCE, &["--format", "json"]).format, Format::Json);
    assert_eq!(run(&LATENCY, &["--backend", "ucx", "--format", "json", "-z"]).format, Format::Json);
    assert_eq!(run(&LATENCY, &["--format", "csv"]).format, Format::Csv);
    assert_eq!(err(&LATENCY, &["--backend", "verbs"]), "Invalid value [--backend verbs] (give mpi, ucx or nccl)");
    assert_eq!(
        err(&ALLREDUCE, &["--format", "yaml"]),
        "Invalid value [--format yaml] (give osu, nccl-tests, json or csv)"
    );
    assert_eq!(
        err(&ALLREDUCE, &["--format", "nccl-tests"]),
        "Invalid value [--format nccl-tests] (nccl-tests' table is for NCCL's collectives: add --backend nccl)"
    );
    assert!(err(&LATENCY, &["--backend", "nccl", "--format", "nccl-tests"]).contains("osu_latency is not one of"));
    assert!(err(&BARRIER, &["--format", "nccl-tests"]).contains("osu_barrier is not one of"));
    assert!(err(&ALLREDUCE, &["--backend", "nccl", "--format", "nccl-tests", "-l"]).ends_with("drop -l)"));
    assert!(err(&REDUCE, &["--backend", "nccl", "--format", "nccl-tests", "-k", "rotate"]).contains("fixed:R"));

    assert_eq!(run(&ALLGATHER, &["--min-busbw", "150.5"]).min_busbw, Some(150.5));
    assert_eq!(run(&BCAST, &["--min-busbw=2"]).min_busbw, Some(2.0));
    for bad in ["0", "-3", "fast", "inf", "NaN", ""] {
        assert_eq!(
            err(&ALLREDUCE, &["--min-busbw", bad]),
            format!("Invalid value [--min-busbw {bad}] (give a bus bandwidth in GB/s, e.g. 150)")
        );
    }
    assert!(err(&BW, &["--min-busbw", "10"]).starts_with("Invalid option [--min-busbw] (osu_bw reports no bus"));
    assert!(err(&BARRIER, &["--min-busbw", "10"]).contains("osu_barrier reports no bus bandwidth"));
}

#[test]
fn precision_options() {
    let o = run(&LATENCY, &[]);
    assert_eq!((o.precision, o.min_iterations, o.max_time_per_size), (None, None, None));
    let o = run(&LATENCY, &["--precision", "1%", "--min-iterations", "50", "--max-time-per-size=500ms"]);
    assert_eq!(o.precision.map(|p| p.percent()), Some(1.0));
    assert_eq!((o.min_iterations, o.max_time_per_size), (Some(50), Some(std::time::Duration::from_millis(500))));
    assert_eq!(run(&ALLREDUCE, &["--precision=0.5%", "-c"]).precision.map(|p| p.fraction()), Some(0.005));
    assert!(err(&LATENCY, &["--precision", "1"]).starts_with("--precision '1': give a percentage"));
    assert!(err(&LATENCY, &["--precision", "1%", "--min-iterations", "0"]).starts_with("--min-iterations '0'"));
    assert!(err(&LATENCY, &["--precision", "1%", "--max-time-per-size", "-2"]).starts_with("--max-time-per-size '-2'"));
    assert_eq!(
        err(&LATENCY, &["--min-iterations", "10"]),
        "Invalid option [--min-iterations] (it only applies with --precision)"
    );
    assert_eq!(
        err(&BW, &["--max-time-per-size", "2"]),
        "Invalid option [--max-time-per-size] (it only applies with --precision)"
    );
    let nccl = err(&ALLREDUCE, &["--backend", "nccl", "--precision", "1%"]);
    assert!(nccl.starts_with("Invalid option [--precision] (NCCL is timed in batches"), "{nccl}");
    // Benchmarks without one timed pass to judge refuse it rather than
    // ignore it.
    for (spec, why) in [
        (&crate::bench::startup::init::INIT, "osu_init cannot use it: it times MPI_Init once"),
        (
            &crate::bench::nonblocking::iallreduce::SPEC,
            "osu_iallreduce cannot use it: its overlap figures come from two passes",
        ),
    ] {
        let e = err(spec, &["--precision", "1%"]);
        assert!(e.starts_with(&format!("Invalid option [--precision] ({why}")), "{e}");
    }
    // The record keeps them.
    let v = serde_json::to_value(run(&LATENCY, &["--precision", "2%", "--max-time-per-size", "2"])).unwrap();
    assert_eq!((v["precision"].as_f64(), v["max_time_per_size_s"].as_f64()), (Some(0.02), Some(2.0)));
}

#[test]
fn one_sided_atomics_help() {
    use crate::bench::{
        rma::acc_latency::SPEC as ACC, rma::fop_latency::SPEC as FOP, rma::get_acc_latency::SPEC as GET_ACC,
    };
    for spec in [&ACC, &FOP, &GET_ACC] {
        let text = help::text(spec);
        let letters: String =
            text.lines().filter_map(|l| l.strip_prefix("  -")).filter_map(|l| l.chars().next()).collect();
        assert_eq!(letters, format!("{}d", spec.letters), "{}", spec.name);
    }
    assert!(help::text(&FOP).contains("-m, --message-size        [MIN:]MAX - bounds the buffers only"));
    assert!(help::text(&ACC).contains("with -s lock, sizes above 8192 bytes warm up as often as they are timed"));
    assert!(help::text(&ACC).contains("-c, --validation          not supported"));
    assert!(help::text(&GET_ACC).contains("(default lock)"));
}

/// osu_init and osu_hello accept OSU's other letters (with their values)
/// and ignore them, as OSU's osu_init warns and runs; a letter OSU has not
/// is still refused, and their own options still apply.
#[test]
fn startup_programs_ignore_osus_other_options() {
    use crate::bench::{startup::hello::HELLO, startup::init::INIT};
    let o = run(&INIT, &["-x", "10", "-i", "100", "--no-results", "-fc", "-d", "cuda"]);
    assert_eq!(o.ignored, ["-x 10", "-i 100", "-f", "-c", "-d cuda"]);
    assert_eq!((o.iterations, o.warmup, o.accel, o.results), (None, None, None, ResultsDest::Off));
    assert_eq!(run(&HELLO, &["-m", "8", "-I"]).ignored, ["-m 8", "-I"]);
    assert!(run(&INIT, &[]).ignored.is_empty());
    assert_eq!(err(&INIT, &["-x", "10", "-q"]), "Invalid option [-q]");
    assert_eq!(err(&INIT, &["-I"]), "MPI-4 session initialisation is not supported by commbench [-I]");
    assert!(help::text(&INIT).contains("OSU's other options (-m, -x, -i, ...) are accepted and ignored"));
    // Other programs still refuse letters that are not theirs.
    assert_eq!(err(&LATENCY, &["-f"]), "Invalid option [-f]");
}
