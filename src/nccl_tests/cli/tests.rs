use super::*;

const V2_19: NcclVersion = NcclVersion::of(2, 19, 3);
const ARGV0: &str = "./build/all_reduce_perf";

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn parse_at(args: &[&str], nccl: NcclVersion) -> Parsed {
    parse(ARGV0, &words(args), nccl)
}

/// The settings and lines of a command line that runs.
fn run(args: &[&str], nccl: NcclVersion) -> (Settings, Vec<Line>) {
    match parse_at(args, nccl) {
        Parsed::Run { settings, said } => (*settings, said),
        other => panic!("{args:?}: {other:?}"),
    }
}

fn settings(args: &[&str]) -> Settings {
    let (s, said) = run(args, V2_19);
    assert_eq!(said, vec![], "{args:?}");
    s
}

fn exit(args: &[&str], nccl: NcclVersion) -> (Vec<Line>, i32) {
    match parse_at(args, nccl) {
        Parsed::Exit { said, status } => (said, status),
        other => panic!("{args:?}: {other:?}"),
    }
}

fn refused(args: &[&str], line: &str) {
    assert_eq!(exit(args, V2_19), (vec![Line::Err(line.into())], BAD_VALUE), "{args:?}");
}

fn out(s: &str) -> Line {
    Line::Out(s.into())
}

fn err(s: &str) -> Line {
    Line::Err(s.into())
}

#[test]
fn no_options_are_nccl_tests_defaults() {
    let s = settings(&[]);
    assert_eq!(s, Settings::default());
    assert_eq!((s.min_bytes, s.max_bytes, s.step_bytes, s.step_factor), (32 << 20, 32 << 20, 1 << 20, 1));
    assert_eq!((s.iters, s.warmup_iters, s.agg_iters, s.check, s.average), (20, 1, 1, 1, 1));
    assert_eq!(
        (s.op, s.datatype, s.cta_policy, s.device_cta_count),
        (Choice::One(RedOp::Sum), Choice::One(NcclType::Float), -1, 16)
    );
    assert_eq!(s.sweep().pass().collect::<Vec<_>>(), vec![32 << 20]);
}

#[test]
fn every_option_by_letter_long_name_and_prefix() {
    let s = settings(&[
        "-t",
        "2",
        "-g8",
        "--minbytes",
        "8",
        "--maxbytes=8G",
        "--stepb",
        "4K",
        "-f",
        "2",
        "--iters=5",
        "--agg",
        "3",
        "-w0",
        "-N",
        "4",
        "-p",
        "1",
        "-c",
        "0",
        "-o",
        "max",
        "--datatype",
        "bfloat16",
        "--ro",
        "-1",
        "-z",
        "2",
        "-y1",
        "--ti",
        "30",
        "-G",
        "3",
        "-C",
        "1",
        "-S",
        "1",
        "-J",
        "out.json",
        "--av=3",
        "-R",
        "1",
        "-M",
        "1",
        "-u",
        "3",
        "-I",
        "0",
        "-K",
        "0",
        "--unalign",
        "1",
    ]);
    let want = Settings {
        threads: 2,
        gpus: 8,
        min_bytes: 8,
        max_bytes: 8 << 30,
        step_bytes: 4096,
        step_factor: 2,
        iters: 5,
        agg_iters: 3,
        warmup_iters: 0,
        run_cycles: 4,
        parallel_init: 1,
        check: 0,
        op: Choice::One(RedOp::Max),
        datatype: Choice::One(NcclType::Bfloat16),
        root: -1,
        blocking: 2,
        stream_null: 1,
        timeout_s: 30,
        graph_launches: 3,
        report_cputime: 1,
        report_timestamps: 1,
        output_file: Some("out.json".into()),
        average: 3,
        local_register: 1,
        cta_policy: -1,
        device_impl: 0,
        device_cta_count: 16,
        memory_report: 1,
        // Later occurrences win.
        unalign: 1,
        per_iter_timing: 0,
        per_iter_skip: 0,
        commbench: Vec::new(),
    };
    assert_eq!(s, want);
    // Words that are not options are passed over, before and after.
    assert_eq!(settings(&["x", "-n", "7", "y"]).iters, 7);
    assert_eq!(settings(&["--", "-n", "7"]).iters, 20);
}

#[test]
fn numbers_read_as_c_reads_them() {
    assert_eq!(settings(&["-n", "0x10"]).iters, 16);
    assert_eq!(settings(&["-n", "010"]).iters, 8);
    assert_eq!(settings(&["-c", "1x"]).check, 1);
    assert_eq!(settings(&["-T", " 5"]).timeout_s, 5);
    assert_eq!(settings(&["-n", "4294967297"]).iters, 1, "a long truncated to an int");
    assert_eq!(settings(&["-f", "-1", "-b", "1", "-e", "1"]).step_factor, u64::MAX, "a size_t");
    assert_eq!(settings(&["-g", "many"]).gpus, 0);
}

#[test]
fn sizes_take_units_and_reach_sixteen_gib() {
    let s = settings(&["-b", "8", "-e", "16G", "-f", "2"]);
    let sizes: Vec<u64> = s.sweep().pass().collect();
    assert_eq!(sizes.len(), 32);
    assert_eq!((sizes[0], sizes[31]), (8, 16 << 30));
    let s = settings(&["-b", "1K", "-e", "4k", "-i", "1K"]);
    assert_eq!(s.sweep().pass().collect::<Vec<_>>(), vec![1024, 2048, 3072, 4096]);
    assert_eq!(settings(&["-b", "1.5M", "-e", "1.5M"]).min_bytes, 3 << 19);
    assert_eq!(settings(&["-b", "8 G", "-e", "8GB"]).min_bytes, 8 << 30);
    assert_eq!(settings(&["-e", "0x1p4K", "-b", "0"]).max_bytes, 16384);
    // The last step is where the next size would pass -e.
    let s = settings(&["-b", "3", "-e", "100", "-f", "3"]);
    assert_eq!(s.sweep().pass().collect::<Vec<_>>(), vec![3, 9, 27, 81]);
    // One past 2^64 ends the sweep (nccl-tests' loop would wrap).
    let s = settings(&["-b", "1G", "-e", "16000000000G", "-f", "1024"]);
    assert_eq!(s.sweep().pass().count(), 4);
}

#[test]
fn bad_sizes_are_refused_with_nccl_tests_words() {
    refused(&["-b", "x"], "invalid size specified for 'minbytes'");
    refused(&["-e", "8B"], "invalid size specified for 'maxbytes'");
    refused(&["-i", "-1"], "invalid size specified for 'stepBytes'");
    // Undefined in nccl-tests; refused the same way here.
    refused(&["-e", "inf"], "invalid size specified for 'maxbytes'");
    refused(&["-e", "nan"], "invalid size specified for 'maxbytes'");
    refused(&["-e", "20000000000G"], "invalid size specified for 'maxbytes'");
    refused(&["-b", "2G", "-e", "1G"], "invalid sizes for 'minbytes' and 'maxbytes': 2147483648 > 1073741824");
    // The first refused value ends the reading, before a later bad word.
    refused(&["-b", "x", "-q"], "invalid size specified for 'minbytes'");
    // Sweeps nccl-tests never finishes.
    refused(&["-i", "0"], "-i 0 with -f 1 or less repeats one size for ever: give a step (-i) or a factor (-f)");
    refused(
        &["-b", "0", "-e", "8", "-f", "2"],
        "-b 0 with a factor (-f) never grows: start at 1 byte or more, or step with -i",
    );
    assert_eq!(settings(&["-b", "0", "-e", "0", "-f", "2"]).sweep().pass().collect::<Vec<_>>(), vec![0]);
}

/// glibc's own messages (captured from a C program with nccl-tests'
/// option table), then nccl-tests' line and its usage, status 0.
#[test]
fn words_getopt_refuses_print_glibc_s_line_and_the_usage() {
    let usage = usage("all_reduce_perf", V2_19);
    for (args, glibc) in [
        (vec!["-q"], "./build/all_reduce_perf: invalid option -- 'q'"),
        (vec!["-n", "5", "-b"], "./build/all_reduce_perf: option requires an argument -- 'b'"),
        (vec!["--foo=1"], "./build/all_reduce_perf: unrecognized option '--foo=1'"),
        (
            vec!["--report=1"],
            "./build/all_reduce_perf: option '--report=1' is ambiguous; possibilities: '--report_cputime' \
             '--report_timestamps'",
        ),
        (
            vec!["--r", "1"],
            "./build/all_reduce_perf: option '--r' is ambiguous; possibilities: '--run_cycles' '--root' \
             '--report_cputime' '--report_timestamps'",
        ),
        (
            vec!["--dev", "3"],
            "./build/all_reduce_perf: option '--dev' is ambiguous; possibilities: '--device_implementation' \
             '--device_cta_count'",
        ),
        (vec!["--help=2"], "./build/all_reduce_perf: option '--help' doesn't allow an argument"),
        (vec!["--minbytes"], "./build/all_reduce_perf: option '--minbytes' requires an argument"),
        (vec!["--minb"], "./build/all_reduce_perf: option '--minbytes' requires an argument"),
        (vec!["-qh"], "./build/all_reduce_perf: invalid option -- 'q'"),
    ] {
        let want = vec![err(glibc), out("invalid option '?'"), out(&usage)];
        assert_eq!(exit(&args, V2_19), (want, 0), "{args:?}");
    }
    let (said, status) = exit(&["--=3"], V2_19);
    assert_eq!(status, 0);
    let Line::Err(first) = &said[0] else { panic!("{said:?}") };
    assert!(
        first.starts_with("./build/all_reduce_perf: option '--=3' is ambiguous; possibilities: '--nthreads' '--ngpus'")
    );
    assert!(first.ends_with("'--per_iter_timing' '--per_iter_skip' '--help'"), "{first}");
    // What came before the refused word was read, and said, first.
    let (said, _) = exit(&["-d", "foo", "-q"], V2_19);
    assert_eq!(
        said[..2],
        [out("invalid type foo, defaulting to float .. "), err("./build/all_reduce_perf: invalid option -- 'q'")]
    );
}

#[test]
fn help_prints_the_usage_and_ends_the_reading() {
    let text = usage("all_reduce_perf", V2_19);
    for args in
        [vec!["-h"], vec!["--help"], vec!["--he"], vec!["-h", "-q"], vec!["-hq"], vec!["-n", "5", "-h", "-b", "x"]]
    {
        assert_eq!(exit(&args, V2_19), (vec![out(&text)], 0), "{args:?}");
    }
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[0], "USAGE: all_reduce_perf ");
    assert_eq!(lines[1], "\t[-t,--nthreads <num threads>] ");
    assert_eq!(lines[13], "\t[-o,--op <sum/prod/min/max/avg/mulsum/all>] ");
    assert_eq!(lines[30], "\t[-I,--per_iter_timing <0/1> per-iteration CUDA event timing");
    assert_eq!(lines[31], "\t    (best with -z 0, -z 2, or -z 3; with -z 1 includes barrier wait;");
    assert_eq!(lines.last(), Some(&"\t[-h,--help]"));
    assert_eq!(lines.len(), 36);
    // The operations line follows the library.
    assert!(usage("p", NcclVersion::of(2, 10, 3)).contains("[-o,--op <sum/prod/min/max/avg/all>] "));
    assert!(usage("p", NcclVersion::of(2, 9, 9)).contains("[-o,--op <sum/prod/min/max/all>] "));
}

#[test]
fn types_and_operations_follow_the_library() {
    let v = NcclVersion::of;
    let said = |args: &[&str], nccl| run(args, nccl).1;
    assert_eq!(run(&["-d", "f8e4m3"], v(2, 24, 3)).0.datatype, Choice::One(NcclType::F8e4m3));
    assert_eq!(said(&["-d", "f8e4m3"], v(2, 23, 4)), vec![out("invalid type f8e4m3, defaulting to float .. ")]);
    assert_eq!(said(&["-d", "bfloat16"], v(2, 9, 9)), vec![out("invalid type bfloat16, defaulting to float .. ")]);
    assert_eq!(said(&["-d", "Float"], V2_19), vec![out("invalid type Float, defaulting to float .. ")]);
    assert_eq!(run(&["-d", "all"], V2_19).0.datatype, Choice::All);
    assert_eq!(run(&["-o", "mulsum"], v(2, 11, 4)).0.op, Choice::One(RedOp::MulSum));
    assert_eq!(said(&["-o", "mulsum"], v(2, 10, 3)), vec![out("invalid op mulsum, defaulting to sum .. ")]);
    assert_eq!(said(&["-o", "avg"], v(2, 9, 9)), vec![out("invalid op avg, defaulting to sum .. ")]);
    assert_eq!(run(&["-o", "all"], V2_19).0.op, Choice::All);
    let sizes: Vec<usize> = NcclType::ALL.iter().map(|t| t.size()).collect();
    assert_eq!(sizes, [1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1]);
}

#[test]
fn options_newer_than_the_library_say_so() {
    let v = NcclVersion::of;
    let (s, said) = run(&["-R", "2"], v(2, 26, 2));
    assert_eq!(
        (s.local_register, said),
        (1, vec![out("Option -R 2 (symmetric) is not supported before NCCL 2.27. Defaulting to local registration")])
    );
    let (s, said) = run(&["-R", "1"], v(2, 18, 5));
    assert_eq!(
        (s.local_register, said),
        (0, vec![out("Option -R (register) is not supported before NCCL 2.19. Ignoring")])
    );
    let (s, said) = run(&["-x", "1"], v(2, 26, 2));
    assert_eq!(
        (s.cta_policy, said),
        (-1, vec![out("Option -x (cta_policy) is not supported before NCCL 2.27. Ignoring")])
    );
    let (s, said) = run(&["-x", "2"], v(2, 27, 3));
    assert_eq!(
        (s.cta_policy, said),
        (-1, vec![out("Option -x (cta_policy) 2 is not supported before NCCL 2.28. Ignoring")])
    );
    assert_eq!(run(&["-x", "2"], v(2, 28, 3)).0.cta_policy, 2);
    let (s, said) = run(&["-G", "2"], v(2, 8, 4));
    assert_eq!(
        (s.graph_launches, said),
        (0, vec![out("Option -G (CUDA graph) not supported before NCCL 2.9 + CUDA 11.3. Ignoring")])
    );
    assert_eq!(
        exit(&["-D", "1"], v(2, 27, 3)),
        (vec![err("Option -D (device implementation) requires NCCL >= 2.28.0")], BAD_VALUE)
    );
    assert_eq!(
        exit(&["-V", "8"], v(2, 27, 3)),
        (vec![err("Option -V (device CTA count) requires NCCL >= 2.28.0")], BAD_VALUE)
    );
    assert_eq!(
        exit(&["-D", "1"], v(2, 28, 3)),
        (vec![err("device implementation (-D > 0) requires enabling symmetric memory registration (-R 2)")], BAD_VALUE)
    );
    assert_eq!(run(&["-D", "1", "-R", "2"], v(2, 28, 3)).0.device_impl, 1);
    let (s, said) = run(&["-V", "200"], v(2, 28, 3));
    assert_eq!(
        (s.device_cta_count, said),
        (16, vec![err("device_cta_count (-V) must be positive and less than 128, got 200. Using default value 16.")])
    );
}

#[test]
fn settings_that_do_not_go_together_are_turned_off_with_a_line() {
    let (s, said) = run(&["-I", "2"], V2_19);
    assert_eq!(
        (s.per_iter_timing, said),
        (0, vec![err("per-iteration timing (-I) only supports 0=off or 1=on. Disabling.")])
    );
    let (s, said) = run(&["-I", "1", "-G", "1"], V2_19);
    assert_eq!(
        (s.per_iter_timing, said),
        (0, vec![err("per-iteration timing (-I) is incompatible with CUDA graph mode (-G). Disabling.")])
    );
    let (s, said) = run(&["-z", "3", "-G", "1"], V2_19);
    assert_eq!(
        (s.blocking, said),
        (0, vec![err("blocking mode (-z 3) is incompatible with CUDA graph mode (-G). Disabling.")])
    );
    // -n 0 makes even the default -K 0 out of range, as in nccl-tests.
    let (_, said) = run(&["-n", "0"], V2_19);
    assert_eq!(said, vec![err("per-iteration skip (-K) must be between 0 and -1. Disabling.")]);
    let (s, said) = run(&["-K", "5"], V2_19);
    assert_eq!(
        (s.per_iter_skip, said),
        (0, vec![err("per-iteration skip (-K) requires per-iteration timing (-I 1). Disabling.")])
    );
    assert_eq!(settings(&["-K", "5", "-I", "1"]).per_iter_skip, 5);
}

#[test]
fn commbench_s_own_options_are_read_whole_and_only_whole() {
    let s = settings(&["-b", "8", "--dry-run=16", "--results-dir", "out", "--verbose", "-e", "16G", "--gpu=3"]);
    assert_eq!((s.min_bytes, s.max_bytes), (8, 16 << 30));
    assert_eq!(
        s.commbench,
        vec![
            ("dry-run", Some("16".to_string())),
            ("results-dir", Some("out".to_string())),
            ("verbose", None),
            ("gpu", Some("3".to_string())),
        ]
    );
    // nccl-tests' abbreviations read as they did before ours were added:
    // "--min" is --minbytes alone, "--dr" and "--verb" are nobody's.
    assert_eq!(settings(&["--min", "1K"]).min_bytes, 1024);
    assert_eq!(settings(&["--mi", "2K"]).min_bytes, 2048);
    let usage = usage("all_reduce_perf", V2_19);
    for (args, glibc) in [
        (vec!["--dr"], "./build/all_reduce_perf: unrecognized option '--dr'"),
        (vec!["--verb"], "./build/all_reduce_perf: unrecognized option '--verb'"),
        (vec!["--results-dir"], "./build/all_reduce_perf: option '--results-dir' requires an argument"),
        (vec!["--verbose=1"], "./build/all_reduce_perf: option '--verbose' doesn't allow an argument"),
        (
            vec!["--m", "1"],
            "./build/all_reduce_perf: option '--m' is ambiguous; possibilities: '--minbytes' '--maxbytes' \
             '--memory'",
        ),
    ] {
        let want = vec![err(glibc), out("invalid option '?'"), out(&usage)];
        assert_eq!(exit(&args, V2_19), (want, 0), "{args:?}");
    }
    // nccl-tests' usage is its own, without ours.
    assert!(!usage.contains("dry-run"));
}
