//! The nccl-tests drop-ins (`all_reduce_perf` and its siblings) end to end
//! on the GPU stand-in (tests/it/common/standin.rs): real mpirun, or no
//! launcher at all, the real binaries, and the stand-in's libcuda.so.1 and
//! libnccl.so.2 in place of the driver and NCCL. Checked: nccl-tests'
//! layout line by line (digits masked), its sweep, its exit statuses, and
//! the same values in the table, the CSV and the run record. The stand-in's
//! times are a model; nothing here judges a time.

use crate::common;

use common::standin::{self, StandIn};
use common::*;
use std::path::Path;
use std::time::Duration;

/// A run of `program` with `args` on `np` ranks under mpirun (none: no
/// launcher, one process), results in `dir/res`.
fn perf(gpu: &StandIn, np: Option<usize>, program: &str, args: &[&str], extra: &[(&str, &str)], dir: &Path) -> Run {
    let mut env = gpu.env();
    env.push(("COMMBENCH_RESULTS_DIR".into(), dir.join("res").display().to_string()));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let o = Launch { cwd: Some(dir.to_path_buf()), env, timeout: Some(Duration::from_secs(60)), ..Launch::default() };
    match np {
        Some(np) => launch(Mpi::OpenMpi, np, program, args, &o),
        None => {
            // No launcher: the binary alone, as `./all_reduce_perf -g 1`.
            let mut cmd = std::process::Command::new(bin(Mpi::OpenMpi, program));
            cmd.args(args).current_dir(dir);
            for (k, v) in &o.env {
                cmd.env(k, v);
            }
            run_cmd(cmd, Duration::from_secs(60))
        }
    }
}

/// all_reduce_perf `args` on two ranks with the stand-in's trace on: the
/// run, and the NCCL work units the stand-in ran (one per call, or per
/// group of calls, on each rank).
fn traced_perf(gpu: &StandIn, args: &[&str], dir: &Path) -> (Run, usize) {
    let trace = dir.join("trace");
    let r = perf(gpu, Some(2), "all_reduce_perf", args, &[("COMMBENCH_STANDIN_TRACE", trace.to_str().unwrap())], dir);
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let units = text.lines().filter(|l| l.contains(" custom ")).count();
    (r, units)
}

/// Every digit run as `9`, so a layout compares whatever the values.
fn masked(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('9');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// The data rows of nccl-tests' table: (size, count, type, redop, root,
/// out-of-place #wrong, in-place #wrong).
fn rows(stdout: &str) -> Vec<(u64, u64, String, String, i64, String, String)> {
    nccl_tests_rows(stdout)
        .into_iter()
        .map(|t| {
            let (size, count, root) = (t[0].parse().unwrap(), t[1].parse().unwrap(), t[4].parse().unwrap());
            (size, count, t[2].clone(), t[3].clone(), root, t[8].clone(), t[12].clone())
        })
        .collect()
}

/// all_reduce_perf as a site runs it (`-b 8 -e 1M -f 4`, under mpirun):
/// exit 0, nccl-tests' lines in its order and layout (digits masked,
/// written from its format strings), the version line naming the loaded
/// NCCL, the sweep's nine sizes with their counts, every cell checked,
/// and the same sizes in the CSV and the run record.
#[test]
fn all_reduce_perf_sweeps_as_nccl_tests_and_prints_its_layout() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let r = perf(
        &gpu,
        Some(2),
        "all_reduce_perf",
        &["-b", "8", "-e", "1M", "-f", "4", "-n", "5", "-w", "1"],
        &[],
        dir.path(),
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let want_head = [
        "# nccl-tests version 9.9.9 nccl-headers=9 nccl-library=9",
        "# Collective test starting: all_reduce_perf",
        "# nThread 9 nGpus 9 minBytes 9 maxBytes 9 step: 9(factor) warmup iters: 9 iters: 9 agg iters: 9 \
         validation: 9 graph: 9 unalign: 9",
        "#",
        "# Using devices",
    ];
    let head: Vec<String> = lines.iter().take(5).map(|l| masked(l)).collect();
    assert_eq!(head, want_head, "{}", r.stdout);
    assert!(lines[0].starts_with("# nccl-tests version 2.19.6 nccl-headers="), "{}", lines[0]);
    assert_eq!(
        lines[2],
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 1 iters: 5 agg iters: 1 \
         validation: 1 graph: 0 unalign: 0"
    );
    let devices: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("#  Rank ")).collect();
    assert_eq!(devices.len(), 2, "{}", r.stdout);
    let sizes: Vec<u64> = (0..9).map(|k| 8 << (2 * k)).collect();
    let got = rows(&r.stdout);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), sizes, "{}", r.stdout);
    for (size, count, ty, redop, root, wrong_out, wrong_in) in &got {
        assert_eq!((*count, ty.as_str(), redop.as_str(), *root), (size / 4, "float", "sum", -1));
        assert_eq!((wrong_out.as_str(), wrong_in.as_str()), ("0", "0"), "{}", r.stdout);
    }
    // The footer, as nccl-tests' format strings print it (no verdict
    // without NCCL_TESTS_MIN_BW), then the empty line where no NCCL error
    // is left to report.
    let tail: Vec<&str> = lines.iter().rev().take(6).rev().copied().collect();
    assert_eq!(tail[0], "# Out of bounds values : 0 OK");
    assert!(tail[1].starts_with("# Avg bus bandwidth    : ") && tail[1].ends_with(' '), "{tail:?}");
    assert_eq!(&tail[2..], ["#", "# Collective test concluded: all_reduce_perf", "#", ""]);
    // The CSV and the record carry the same sweep.
    let (record, csv) = run_results(dir.path());
    let csv_sizes: std::collections::BTreeSet<u64> = csv.iter().map(|r| r["size_bytes"].parse().unwrap()).collect();
    assert_eq!(csv_sizes.into_iter().collect::<Vec<_>>(), sizes);
    assert_eq!(record["status"], "complete", "{record}");
    assert_eq!(record["options"]["sweep"]["step"]["factor"], 4, "{record}");

    // -N 2: the whole sweep twice, one footer over both.
    let dir = tempfile::tempdir().unwrap();
    let r = perf(
        &gpu,
        Some(2),
        "all_reduce_perf",
        &["-b", "1K", "-e", "4K", "-f", "2", "-N", "2", "-n", "2"],
        &[],
        dir.path(),
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let sizes: Vec<u64> = rows(&r.stdout).iter().map(|r| r.0).collect();
    assert_eq!(sizes, [1024, 2048, 4096, 1024, 2048, 4096], "{}", r.stdout);
    assert_eq!(r.stdout.matches("# Avg bus bandwidth").count(), 1, "{}", r.stdout);
}

/// Sizes far above OSU's 2 GiB - 1 and its 512 MiB default limit, with a
/// linear step: the sweep nccl-tests makes of `-b 2G -e 2G+8 -i 4` on one
/// process with no launcher, data unchecked (`-c 0`: `N/A`). One rank's
/// buffers are host memory in the stand-in (two of 2 GiB): about 10 s,
/// most of it the pages of those buffers, which is the point of the test.
#[test]
fn sizes_above_2_gib_run_on_one_process_without_a_launcher() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let args = ["-b", "2G", "-e", "2147483656", "-i", "4", "-n", "1", "-w", "0", "-c", "0"];
    let r = perf(&gpu, None, "broadcast_perf", &args, &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let got = rows(&r.stdout);
    let want: Vec<u64> = vec![2 << 30, (2 << 30) + 4, (2 << 30) + 8];
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), want, "{}", r.stdout);
    for row in &got {
        assert_eq!((row.4, row.5.as_str(), row.6.as_str()), (0, "N/A", "N/A"), "{}", r.stdout);
    }
    assert!(r.stdout.contains(" step: 4(bytes) "), "{}", r.stdout);
}

/// A process that drives several GPUs, a rank each (nccl-tests' `-g` GPUs
/// per thread times `-t` threads): eight GPUs from one process without a
/// launcher, and four processes of two under mpirun, each starting at its
/// local rank times two as nccl-tests does; every rank's line under
/// `# Using devices`, every rank's result checked (a wrong element on the
/// sixth GPU, inside a process, is found and fails the run with 7), the
/// CSV's np and the record's GPUs those of the ranks. A process whose GPUs
/// run past the node's last is refused before anything starts, in
/// nccl-tests' words and with its status (5). Seven launches of one to
/// three seconds each.
#[test]
fn several_gpus_per_process_with_and_without_a_launcher() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let quick = ["-b", "1K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1"];
    let devices = |stdout: &str| -> Vec<(usize, usize, u32)> {
        stdout
            .lines()
            .filter(|l| l.starts_with("#  Rank "))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                // #, Rank, r, Group, g, Pid, p, on, host, device, d, ...
                (w[2].parse().unwrap(), w[10].parse().unwrap(), w[6].parse().unwrap())
            })
            .collect()
    };
    let mut run_paths = Vec::new();
    for (np, args) in [(None, &["-g", "8"][..]), (Some(4), &["-g", "2"][..]), (Some(2), &["-t", "2", "-g", "2"][..])] {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<&str> = quick.iter().chain(args).copied().collect();
        let r = perf(&gpu, np, "all_reduce_perf", &all, &[], dir.path());
        assert_eq!(r.code, Some(0), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(r.stderr, "", "{args:?}");
        let (threads, gpus) = if args.len() == 4 { (2, 2) } else { (1, args[1].parse::<usize>().unwrap()) };
        let ranks = np.unwrap_or(1) * threads * gpus;
        assert!(
            r.stdout.contains(&format!("# nThread {threads} nGpus {gpus} minBytes 1024 ")),
            "{args:?}: {}",
            r.stdout
        );
        let d = devices(&r.stdout);
        // Rank i on device i; each process's ranks share its pid.
        assert_eq!(d.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(), (0..ranks).map(|i| (i, i)).collect::<Vec<_>>());
        let pids: std::collections::BTreeSet<u32> = d.iter().map(|x| x.2).collect();
        assert_eq!(pids.len(), np.unwrap_or(1), "{args:?}: {d:?}");
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 3, "{}", r.stdout);
        assert!(got.iter().all(|row| (row.5.as_str(), row.6.as_str()) == ("0", "0")), "{}", r.stdout);
        let (record, csv) = run_results(dir.path());
        assert_eq!(record["status"], "complete", "{record}");
        assert!(csv.iter().all(|row| row["np"] == ranks.to_string()), "{csv:?}");
        let gpus_seen: Vec<u64> = record["backend_details"]["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["gpu"]["index"].as_u64().unwrap())
            .collect();
        assert_eq!(gpus_seen, (0..ranks as u64).collect::<Vec<_>>(), "{record}");
        // Each GPU a rank of the paths too, a process's own GPUs included:
        // every row has its efficiency against the GPUs' path.
        let run = record["paths"]["run"].clone();
        assert_eq!(run["class"], "gpu", "{args:?}: {record}");
        assert!(run["peak_mbps"].as_f64().is_some_and(|p| p > 0.0), "{args:?}: {record}");
        assert!(csv.iter().all(|row| row["efficiency_pct"].parse::<f64>().is_ok()), "{csv:?}");
        let lanes = record["ranks"].as_array().unwrap().iter().map(|r| r["lane_ends"].as_array().map_or(0, Vec::len));
        assert!(lanes.into_iter().all(|n| n + 1 == threads * gpus), "{args:?}: {record}");
        run_paths.push(run);
    }
    // The same eight GPUs, driven by one process or by four: one path.
    assert_eq!(run_paths[0], run_paths[1]);
    // A corrupted output on rank 5, the second GPU of the third process.
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<&str> = quick.iter().chain(&["-g", "2"]).copied().collect();
    let r = perf(&gpu, Some(4), "all_reduce_perf", &all, &[("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=5")], dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("# Out of bounds values : "), "{}", r.stdout);
    assert!(r.stdout.contains(" FAILED"), "{}", r.stdout);
    assert!(r.stderr.contains("validation failed on rank 5"), "{}", r.stderr);
    // Two processes of eight GPUs on a node of eight: the second has none,
    // and says so in nccl-tests' words, with its status; so does one
    // process of nine, without a launcher.
    for (np, g, need) in [(Some(2), "8", 16), (None, "9", 9)] {
        let dir = tempfile::tempdir().unwrap();
        let all: Vec<&str> = quick.iter().chain(&["-g", g]).copied().collect();
        let r = perf(&gpu, np, "all_reduce_perf", &all, &[], dir.path());
        assert_eq!(r.code, Some(5), "{}\n{}", r.stdout, r.stderr);
        r.assert_no_panic();
        let lines = r.our_stderr_lines();
        assert_eq!(
            lines,
            [
                format!("Invalid number of GPUs: {need} requested but only 8 were found."),
                "Please check the number of processes and GPUs per process.".to_string()
            ],
            "{}",
            r.stderr
        );
        assert!(!dir.path().join("res").exists());
    }
}

/// `-S 1` ends the header's name and unit lines with the timestamp
/// column (nccl-tests' `%*s` of 19) and every row with the local time in
/// 21 characters; `-y 1` puts NCCL's work on the legacy default stream,
/// every cell still checked; `-C 1` names the time columns `cputime` and
/// shows the host's issue time there, never more than the time the
/// bandwidths come from (the host issues before the GPU finishes), on the
/// stand-in's modelled collectives made long against the host's work. Two
/// launches of about two seconds.
#[test]
fn timestamps_cputime_and_the_default_stream() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let args = ["-b", "1K", "-e", "16K", "-f", "4", "-n", "3", "-w", "1", "-S", "1", "-y", "1"];
    let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let names = lines.iter().find(|l| l.starts_with("#       size ")).unwrap();
    assert!(names.ends_with("  #wrong           timestamp"), "{names:?}");
    let units = lines.iter().find(|l| l.starts_with("#        (B) ")).unwrap();
    assert!(units.ends_with("(GB/s)           %Y-%m-%d %H:%M:%S"), "{units:?}");
    let data: Vec<&str> = lines.iter().copied().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert_eq!(data.len(), 3, "{}", r.stdout);
    for row in data {
        // The in-place #wrong, two spaces, then the local time.
        let (cells, stamp) = row.split_at(row.len() - 21);
        assert!(cells.ends_with("       0"), "{row:?}");
        assert_eq!(masked(stamp), "  9-9-9 9:9:9", "{row:?}");
    }
    let (record, _) = run_results(dir.path());
    assert_eq!(
        (record["options"]["timestamps"].as_bool(), record["options"]["default_stream"].as_bool()),
        (Some(true), Some(true))
    );

    let dir = tempfile::tempdir().unwrap();
    let args = ["-b", "1M", "-e", "4M", "-f", "4", "-n", "5", "-w", "1", "-C", "1", "-a", "0"];
    let slow = [("COMMBENCH_STANDIN_NCCL_TIME_SCALE", "50")];
    let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &slow, dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let names = r.stdout.lines().find(|l| l.starts_with("#       size ")).unwrap();
    assert_eq!(names.matches(" cputime ").count(), 2, "{names:?}");
    assert!(!names.contains(" time "), "{names:?}");
    let data = nccl_tests_rows(&r.stdout);
    assert_eq!(data.len(), 2, "{}", r.stdout);
    for cells in data {
        // The bandwidths still come from the time (-a 0: rank 0's); the
        // issue is a prefix of that span on the same clock, so the
        // cputime is at most the time the algbw implies (bytes / algbw;
        // the printed algbw's rounding allowed for).
        let (size, cpu_us, algbw): (f64, f64, f64) =
            (cells[0].parse().unwrap(), cells[5].parse().unwrap(), cells[6].parse().unwrap());
        let time_us = size / (algbw * 1e3);
        assert!(cpu_us <= time_us * 1.05, "cputime {cpu_us} us against time {time_us} us: {cells:?}");
    }
    let (record, _) = run_results(dir.path());
    assert_eq!(record["options"]["cputime"].as_bool(), Some(true), "{record}");
}

/// `-J FILE.json`: nccl-tests' JSON document beside the table, with the
/// table's values: the line that names the file first on stdout, the
/// configuration of the preamble, every rank's device, one result per row
/// (sizes, counts, types, times, bandwidths and #wrong as printed), the
/// footer's verdicts. A second run never overwrites the first file (it
/// takes `FILE.json.0`), a name without `.json` writes nothing, and
/// nccl-tests' own tools/analyze_perf_json.py (from the reference tarball,
/// in a venv of its own) reads the document. Three launches of about two
/// seconds, and a venv made in about one.
#[test]
fn json_output_holds_the_table_and_nccl_tests_tools_read_it() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = ["-b", "1K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "-g", "2", "-J", json.to_str().unwrap()];
    let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let first = r.stdout.lines().next().unwrap();
    assert_eq!(first, format!("# Writing JSON output to {}", json.display()));
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("# nccl-tests version "), "{}", r.stdout);
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(!text.contains(": ") && !text.contains('\n'), "nccl-tests writes no spaces or lines: {text}");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["version"], 3);
    assert_eq!(doc["args"].as_array().unwrap().len(), args.len() + 1, "{doc}");
    let cfg = &doc["config"];
    assert_eq!(
        (cfg["nthreads"].as_u64(), cfg["ngpus"].as_u64(), cfg["step_factor"].as_u64()),
        (Some(1), Some(2), Some(8))
    );
    assert_eq!((cfg["minimum_bytes"].as_u64(), cfg["maximum_bytes"].as_u64()), (Some(1024), Some(65536)));
    assert_eq!(
        (cfg["iterations"].as_u64(), cfg["warmup_iters"].as_u64(), cfg["validation"].as_u64()),
        (Some(3), Some(1), Some(1))
    );
    assert_eq!((cfg["blocking_collectives"].as_str(), cfg["parallel_init"].as_str()), (Some("false"), Some("false")));
    let devices = cfg["devices"].as_array().unwrap();
    assert_eq!(devices.iter().map(|d| d["rank"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(devices[3]["device_hex"], "0000:04:00", "{doc}");
    let table = nccl_tests_rows(&r.stdout);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), table.len());
    for (res, row) in results.iter().zip(&table) {
        assert_eq!(res["size"].as_u64().unwrap().to_string(), row[0]);
        assert_eq!(res["count"].as_u64().unwrap().to_string(), row[1]);
        assert_eq!(
            (res["type"].as_str(), res["redop"].as_str(), res["root"].as_str()),
            (Some("float"), Some("sum"), Some("    -1"))
        );
        assert_eq!(res["actual_iterations"], 3);
        for (key, at) in [("out_of_place", 5), ("in_place", 9)] {
            let cell = &res[key];
            // The table rounds what the document holds to its width.
            for (field, col) in [("time", at), ("alg_bw", at + 1), ("bus_bw", at + 2)] {
                let (doc_v, printed): (f64, f64) = (cell[field].as_f64().unwrap(), row[col].parse().unwrap());
                assert!(
                    (doc_v - printed).abs() <= 0.005 + printed.abs() * 0.001,
                    "{key}.{field}: {doc_v} vs {printed}"
                );
            }
            assert_eq!(cell["nwrong"].as_f64(), Some(0.0));
        }
    }
    assert_eq!(
        (doc["out_of_bounds"]["count"].as_u64(), doc["out_of_bounds"]["okay"].as_str()),
        (Some(0), Some("true"))
    );
    assert_eq!(doc["average_bus_bandwidth"]["okay"], "unchecked");
    let footer = r.stdout.lines().find(|l| l.starts_with("# Avg bus bandwidth")).unwrap();
    let printed: f64 = footer.split(':').nth(1).unwrap().trim().parse().unwrap();
    let bw = doc["average_bus_bandwidth"]["bandwidth"].as_f64().unwrap();
    assert!((bw - printed).abs() <= printed * 1e-4 + 1e-6, "{bw} vs {footer}");
    assert!(doc["end_time"].as_str().is_some_and(|t| t.len() == 19), "{doc}");

    // Again: the first file stays, the second takes the next free name.
    let r2 = perf(&gpu, None, "all_reduce_perf", &args, &[], dir.path());
    assert_eq!(r2.code, Some(0), "{}\n{}", r2.stdout, r2.stderr);
    assert_eq!(r2.stdout.lines().next().unwrap(), format!("# Writing JSON output to {}.0", json.display()));
    assert_eq!(std::fs::read_to_string(&json).unwrap(), text);
    // Not a .json name: ignored, as by nccl-tests.
    let other = dir.path().join("out.txt");
    let quiet: Vec<&str> = args[..12].iter().copied().chain(["-J", other.to_str().unwrap()]).collect();
    let r3 = perf(&gpu, None, "all_reduce_perf", &quiet, &[], dir.path());
    assert_eq!(r3.code, Some(0), "{}\n{}", r3.stdout, r3.stderr);
    assert!(r3.stdout.starts_with("# nccl-tests version "), "{}", r3.stdout);
    assert!(!other.exists());

    // nccl-tests' own reader, where its source is on this machine.
    let Some(said) = analyze_perf_json(&json, &[]) else { return };
    assert!(said.contains(&format!("Results:    {}", table.len())), "{said}");
    assert!(said.contains("Iterations: 3  (agg: 1)"), "{said}");
}

/// nccl-tests' own tools/analyze_perf_json.py (from the reference tarball,
/// in a venv of its own) on `json` with `args`: what it printed, after
/// checking it succeeded; None (having said so) where the tarball is not
/// on this machine.
fn analyze_perf_json(json: &Path, args: &[&str]) -> Option<String> {
    let Some(tarball) = gpu_anchors_tarball() else {
        eprintln!("SKIPPED: the GPU tools' source tarball is not here (set GPU_ANCHORS_SRC) for analyze_perf_json.py");
        return None;
    };
    let tools = tempfile::tempdir().unwrap();
    let untar = std::process::Command::new("tar")
        .args([
            "xzf",
            tarball.to_str().unwrap(),
            "-C",
            tools.path().to_str().unwrap(),
            "--wildcards",
            "*/tools/analyze_perf_json.py",
        ])
        .status()
        .unwrap();
    assert!(untar.success());
    let found =
        std::process::Command::new("find").arg(tools.path()).args(["-name", "analyze_perf_json.py"]).output().unwrap();
    let script = String::from_utf8_lossy(&found.stdout).lines().next().unwrap().to_string();
    let venv = tools.path().join("venv");
    let made = std::process::Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(&venv).status().unwrap();
    assert!(made.success());
    let out = std::process::Command::new(venv.join("bin/python")).arg(&script).arg(json).args(args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}\n{}", String::from_utf8_lossy(&out.stderr));
    Some(said)
}

/// `-I 1 -K 1`: each iteration timed by CUDA events besides the host's
/// clock. The preamble's line, the header's four more columns per
/// placement, each row's i_min <= i_p99 <= i_max; in `-J`'s document each
/// placement's `*_per_iter` object: every timed iteration (`-n`), each
/// process's own series (two processes of two GPUs), the run's series
/// their most, the summary over all but the first, as the table prints
/// it; and nccl-tests' analyze_perf_json.py reads its per-iteration and
/// per-process parts. One launch of about two seconds.
#[test]
fn per_iteration_timing_adds_its_columns_and_json() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("iter.json");
    let args =
        ["-b", "1K", "-e", "64K", "-f", "8", "-n", "6", "-w", "1", "-g", "2", "-I", "1", "-K", "1", "-z", "3", "-J"];
    let args: Vec<&str> = args.into_iter().chain([json.to_str().unwrap()]).collect();
    let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines.contains(
        &"# Per-Iteration Report: CUDA event timing; i_* uses max over process rows; summary skips first 1 iterations "
    ));
    let names = lines.iter().find(|l| l.starts_with("#       size ")).unwrap();
    assert_eq!(names.matches("  i_min    i_max    i_p99    i_cv%").count(), 2, "{names:?}");
    let table = nccl_tests_rows_of(&r.stdout, 21);
    assert_eq!(table.len(), 3, "{}", r.stdout);
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        (doc["config"]["per_iter_timing"].as_str(), doc["config"]["per_iter_skip"].as_u64()),
        (Some("true"), Some(1))
    );
    for (res, row) in doc["results"].as_array().unwrap().iter().zip(&table) {
        assert_eq!(row.len(), 21, "{row:?}");
        for (key, at) in [("out_of_place_per_iter", 9), ("in_place_per_iter", 17)] {
            let v = |c: usize| -> f64 { row[c].parse().unwrap() };
            assert!(v(at) <= v(at + 2) && v(at + 2) <= v(at + 1), "i_min <= i_p99 <= i_max: {row:?}");
            let p = &res[key];
            let list = |v: &serde_json::Value| -> Vec<f64> {
                v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
            };
            let times = list(&p["times_us"]);
            assert_eq!(times.len(), 6, "{p}");
            let processes: Vec<Vec<f64>> = p["per_process_max_times_us"].as_array().unwrap().iter().map(list).collect();
            assert_eq!(processes.len(), 2, "{p}");
            for (i, t) in times.iter().enumerate() {
                assert_eq!(*t, processes[0][i].max(processes[1][i]), "{p}");
            }
            let kept = &times[1..];
            let min = kept.iter().copied().fold(f64::INFINITY, f64::min);
            let max = kept.iter().copied().fold(0.0, f64::max);
            assert_eq!(
                (p["skipped_iterations"].as_u64(), p["min_us"].as_f64(), p["max_us"].as_f64()),
                (Some(1), Some(min), Some(max))
            );
            let near = |doc: f64, printed: f64| (doc - printed).abs() <= 0.005 + printed.abs() * 0.001;
            assert!(near(min, v(at)) && near(max, v(at + 1)), "{p} vs {row:?}");
            assert!(near(p["cv_pct"].as_f64().unwrap(), v(at + 3)), "{p} vs {row:?}");
        }
    }
    let Some(said) = analyze_perf_json(&json, &["--all"]) else { return };
    assert!(said.contains("Process rows: 2"), "{said}");
    assert!(said.contains("PER-ITERATION STATS (OOP)") && said.contains("PER-PROCESS STRAGGLER ANALYSIS"), "{said}");
    assert_eq!(said.lines().filter(|l| l.trim_start().starts_with("1024 ")).count(), 2, "{said}");
}

/// `-M 1`: nccl-tests' memory line after the one that says the test
/// concluded, each part the most over every GPU, read from the driver's
/// free memory: here the stand-in's, which counts every allocation, so
/// the buffers' part is exact (all_reduce: a send and a receive buffer of
/// the largest size; all_gather on four GPUs: a quarter of it and the
/// whole). Two launches of about a second.
#[test]
fn memory_report_follows_the_footer() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    for (np, program, gpus, buffers) in
        [(Some(2), "all_reduce_perf", "2", "2.00 MB"), (None, "all_gather_perf", "4", "1.25 MB")]
    {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "1K", "-e", "1M", "-f", "32", "-n", "3", "-w", "1", "-g", gpus, "-M", "1"];
        let r = perf(&gpu, np, program, &args, &[], dir.path());
        assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
        let lines: Vec<&str> = r.stdout.lines().collect();
        let n = lines.len();
        assert_eq!(lines[n - 4], format!("# Collective test concluded: {program}"), "{}", r.stdout);
        assert_eq!(
            masked(lines[n - 3]),
            "# GPU memory usage     : Initialization 9.9 B | User-Allocated 9.9 MB | Collective 9.9 B | Total  9.9 MB"
        );
        assert!(lines[n - 3].contains(&format!("| User-Allocated {buffers} |")), "{}", lines[n - 3]);
        assert!(lines[n - 3].ends_with(&format!("| Total  {buffers}")), "{}", lines[n - 3]);
        assert_eq!(lines[n - 2..], ["#", ""]);
    }
}

/// Seed 000's case: a launcher of another MPI (MPICH's, for this Open
/// MPI build) starts two copies and MPI sees each alone. As nccl-tests'
/// copies, each runs a test of its own (its table, exit 0), and each says
/// so in one line on stderr naming the launcher, the copies, its MPI and
/// the GPU it ran on; its run record keeps the same under
/// `launcher.world_of_one`. (The OSU binaries refuse this: bad_input.rs.)
/// One launch of about two seconds.
#[test]
fn copies_that_each_see_a_world_of_one_say_so_and_run() {
    require_mpich!();
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let mut c = launcher(Mpi::Mpich, 2);
    c.arg(bin(Mpi::OpenMpi, "all_reduce_perf")).args(["-b", "1K", "-e", "4K", "-f", "2", "-n", "2", "-w", "1"]);
    c.current_dir(dir.path()).env("TMPDIR", dir.path());
    for (k, v) in gpu.env() {
        c.env(k, v);
    }
    c.env("COMMBENCH_RESULTS_DIR", dir.path().join("res"));
    let r = run_cmd(c, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout.matches("# Collective test concluded: all_reduce_perf").count(), 2, "{}", r.stdout);
    let mut said: Vec<&str> = r.stderr.lines().collect();
    said.sort();
    assert_eq!(said.len(), 2, "{}", r.stderr);
    for (copy, line) in said.iter().enumerate() {
        assert_eq!(
            *line,
            format!(
                "all_reduce_perf: world of one: the launcher (hydra) started 2 copies but this binary's MPI (Open MPI \
                 v4.1.4) sees each alone, so each runs a test of its own on device {copy} [0000:0{}:00.0] (this is \
                 copy {copy}), not one test of 2 ranks; start it with Open MPI v4.1.4's launcher",
                copy + 1
            )
        );
    }
    let mut copies: Vec<serde_json::Value> = std::fs::read_dir(dir.path().join("res"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .map(|rec: serde_json::Value| rec["launcher"]["world_of_one"].clone())
        .collect();
    copies.sort_by_key(|w| w["copy"].as_u64());
    assert_eq!(copies.len(), 2, "{copies:?}");
    for (i, w) in copies.iter().enumerate() {
        assert_eq!(
            (w["copies"].as_u64(), w["copy"].as_u64(), w["device"].as_u64()),
            (Some(2), Some(i as u64), Some(i as u64)),
            "{w}"
        );
        assert_eq!(
            (w["launcher"].as_str(), w["mpi_library"].as_str()),
            (Some("hydra"), Some("Open MPI v4.1.4")),
            "{w}"
        );
    }
}

/// `-u 3`: every buffer starts three elements of the datatype past its
/// allocation (4096-aligned on the stand-in), for each type of `-d all`
/// in turn, as the stand-in's call log shows for every NCCL call of both
/// ranks; the preamble says `unalign: 3`, and every type still checks
/// (the fills and checks follow the buffers' starts). One launch of about
/// two seconds.
#[test]
fn unalign_offsets_every_buffer_by_its_type_s_elements() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let args = ["-b", "1K", "-e", "8K", "-f", "8", "-n", "2", "-w", "1", "-u", "3", "-d", "all"];
    let r = perf(
        &gpu,
        Some(2),
        "all_reduce_perf",
        &args,
        &[("COMMBENCH_STANDIN_NCCL_CALLS", calls.to_str().unwrap())],
        dir.path(),
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(" graph: 0 unalign: 3\n"), "{}", r.stdout);
    let table = nccl_tests_rows(&r.stdout);
    assert_eq!(table.len(), 2 * 10, "two sizes of each of ten types: {}", r.stdout);
    assert!(table.iter().all(|row| row[8] == "0" && row[12] == "0"), "{}", r.stdout);
    let size = |t: &str| match t {
        "int8" | "uint8" => 1,
        "float16" | "bfloat16" => 2,
        "int32" | "uint32" | "float32" => 4,
        _ => 8,
    };
    let log = std::fs::read_to_string(&calls).unwrap();
    let mut types = std::collections::BTreeSet::new();
    for line in log.lines().filter(|l| l.contains(" ncclAllReduce ")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let at = |key: &str| w[w.iter().position(|x| *x == key).unwrap() + 1];
        let addr = |key: &str| u64::from_str_radix(at(key).trim_start_matches("0x"), 16).unwrap();
        let t = w[w.iter().position(|x| *x == "ncclAllReduce").unwrap() + 1];
        types.insert(t);
        for key in ["send", "recv"] {
            assert_eq!(addr(key) % 4096, 3 * size(t), "{line}");
        }
    }
    assert_eq!(types.len(), 10, "{types:?}");
}

/// broadcast_perf's out-of-place cell broadcasts from the root's send
/// buffer into every rank's receive buffer, as nccl-tests' does (its
/// in-place cell from and into one): the stand-in's call log shows both
/// kinds of call, from root 1, and every cell checks.
#[test]
fn broadcast_out_of_place_reads_the_root_s_send_buffer() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let args = ["-b", "1K", "-e", "8K", "-f", "8", "-n", "2", "-w", "1", "-r", "1"];
    let log = [("COMMBENCH_STANDIN_NCCL_CALLS", calls.to_str().unwrap())];
    let r = perf(&gpu, Some(2), "broadcast_perf", &args, &log, dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let table = nccl_tests_rows(&r.stdout);
    assert_eq!(table.len(), 2, "{}", r.stdout);
    assert!(table.iter().all(|row| row[4] == "1" && row[8] == "0" && row[12] == "0"), "{}", r.stdout);
    let text = std::fs::read_to_string(&calls).unwrap();
    let (mut apart, mut together) = (0, 0);
    for line in text.lines().filter(|l| l.contains("ncclBroadcast")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let at = |key: &str| w[w.iter().position(|x| *x == key).unwrap() + 1];
        if at("send") == at("recv") {
            together += 1;
        } else {
            apart += 1;
        }
    }
    // As many of each in the cells (two timed and one checked per size and
    // rank), and the warm-up's out of place: one call at each of 1K, 2K,
    // 4K and 8K on each rank.
    assert_eq!((apart, together), (12 + 8, 12), "{text}");
}

/// From NCCL 2.28 on alltoall_perf, gather_perf and scatter_perf call
/// NCCL's own ncclAlltoAll, ncclGather and ncclScatter, as nccl-tests does;
/// before, grouped sends and receives. The stand-in's call log shows which
/// (its 2.28 collectives are its own sends and receives inside, not logged
/// as such), every cell checks (alltoall's in-place `N/A`, as nccl-tests),
/// and root 1 takes the rooted ones. Six launches of about a second.
#[test]
fn nccl_2_28_s_own_alltoall_gather_and_scatter_are_called() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let args = ["-b", "1K", "-e", "8K", "-f", "8", "-n", "2", "-w", "1", "-r", "1", "-g", "2"];
    for (program, native) in
        [("alltoall_perf", "ncclAlltoAll"), ("gather_perf", "ncclGather"), ("scatter_perf", "ncclScatter")]
    {
        for version in ["22803", "22705"] {
            let dir = tempfile::tempdir().unwrap();
            let calls = dir.path().join("calls");
            let env = [
                ("COMMBENCH_STANDIN_NCCL_VERSION", version),
                ("COMMBENCH_STANDIN_NCCL_CALLS", calls.to_str().unwrap()),
            ];
            let r = perf(&gpu, Some(2), program, &args, &env, dir.path());
            assert_eq!(r.code, Some(0), "{program} {version}: {}\n{}", r.stdout, r.stderr);
            let table = nccl_tests_rows(&r.stdout);
            assert_eq!(table.len(), 2, "{}", r.stdout);
            let in_place = if program == "alltoall_perf" { "N/A" } else { "0" };
            assert!(table.iter().all(|row| row[8] == "0" && row[12] == in_place), "{program} {version}: {}", r.stdout);
            let log = std::fs::read_to_string(&calls).unwrap();
            let (own, parts) = (log.matches(&format!(" {native} ")).count(), log.matches(" ncclSend ").count());
            if version == "22803" {
                assert!(own > 0 && parts == 0, "{program} {version}: {log}");
            } else {
                assert!(own == 0 && parts > 0, "{program} {version}: {log}");
            }
        }
    }
}

/// Buffers as nccl-tests makes them: from NCCL 2.19 on by `ncclMemAlloc`,
/// and with `-R` registered with each communicator, `-R 1` locally and
/// `-R 2` (NCCL 2.27 on) as symmetric windows, which need NCCL's own
/// memory; before 2.27, `-R 2` says so in nccl-tests' words and registers
/// locally. The stand-in's call log shows each rank's two registrations
/// (send and receive) and their undoing, and it complains on stderr
/// where one is left when its memory is freed or its communicator goes:
/// nothing is said here. Three launches of about a second.
#[test]
fn registered_buffers_follow_nccl_tests_r() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    for (r, version, kind) in [
        ("1", "22105", "ncclCommRegister"),
        ("2", "22705", "ncclCommWindowRegister"),
        ("2", "22105", "ncclCommRegister"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let calls = dir.path().join("calls");
        let args = ["-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "-g", "2", "-R", r];
        let env =
            [("COMMBENCH_STANDIN_NCCL_VERSION", version), ("COMMBENCH_STANDIN_NCCL_CALLS", calls.to_str().unwrap())];
        let run = perf(&gpu, Some(2), "all_reduce_perf", &args, &env, dir.path());
        let what = format!("-R {r} on {version}");
        assert_eq!(run.code, Some(0), "{what}: {}\n{}", run.stdout, run.stderr);
        assert_eq!(run.stderr, "", "{what}");
        let said = "Option -R 2 (symmetric) is not supported before NCCL 2.27. Defaulting to local registration";
        assert_eq!(
            run.stdout.matches(said).count(),
            if (r, version) == ("2", "22105") { 2 } else { 0 },
            "{what}: {}",
            run.stdout
        );
        let table = nccl_tests_rows(&run.stdout);
        assert_eq!(table.len(), 3, "{}", run.stdout);
        assert!(table.iter().all(|row| row[8] == "0" && row[12] == "0"), "{what}: {}", run.stdout);
        let log = std::fs::read_to_string(&calls).unwrap();
        let undo = kind.replace("Register", "Deregister");
        for rank in 0..4 {
            let mine = |call: &str| log.lines().filter(|l| l.contains(&format!(" rank {rank} {call} "))).count();
            assert_eq!((mine(kind), mine(&undo)), (2, 2), "{what}, rank {rank}: {log}");
        }
        assert!(log.matches(" ncclMemAlloc ").count() >= 8, "{what}: {log}");
        let (record, _) = run_results(dir.path());
        let want = if kind == "ncclCommRegister" { "local" } else { "symmetric" };
        assert_eq!(record["options"]["registration"], want, "{what}: {record}");
    }
}

/// A split run's table: the `Group` column of `# Using devices` as
/// `groups`, three rows whose float counts are a communicator of `ranks`'
/// share, every cell checked, and busbw `factor` times algbw.
fn split_rows_hold(stdout: &str, groups: &[i32], ranks: u64, factor: f64, rule: &str) {
    let seen: Vec<i32> = stdout
        .lines()
        .filter(|l| l.starts_with("#  Rank "))
        .map(|l| l.split_whitespace().nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(seen, groups, "{rule}: {stdout}");
    let table = nccl_tests_rows(stdout);
    assert_eq!(table.len(), 3, "{stdout}");
    for row in &table {
        let (size, count): (u64, u64) = (row[0].parse().unwrap(), row[1].parse().unwrap());
        assert_eq!(count, size / 4 / ranks, "{rule}: a communicator of {ranks}: {row:?}");
        assert_eq!((row[8].as_str(), row[12].as_str()), ("0", "0"), "{row:?}");
        let (algbw, busbw): (f64, f64) = (row[6].parse().unwrap(), row[7].parse().unwrap());
        assert!((busbw - algbw * factor).abs() <= 0.011, "{rule}: {row:?}");
    }
}

/// NCCL_TESTS_SPLIT and NCCL_TESTS_SPLIT_MASK: the processes split into
/// communicators by colour, every one timed at once (the world stays the
/// control plane: the barriers and the averages span all, as nccl-tests'
/// do). The `Group` column names each rank's colour, the counts and busbw
/// are a communicator's (two ranks: busbw = algbw / 2 for an allgather),
/// the record keeps the rule; a block corrupted on every communicator's
/// rank 1 fails the run with status 7; communicators of different sizes
/// run at once too, the table giving world rank 0's. Four launches of
/// about a second.
#[test]
fn split_communicators_run_at_once() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let args = ["-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1"];
    for (var, rule, groups, record_rule) in [
        ("NCCL_TESTS_SPLIT", "MOD 2", [0, 1, 0, 1], serde_json::json!({"mod": 2})),
        ("NCCL_TESTS_SPLIT_MASK", "0x2", [0, 0, 2, 2], serde_json::json!({"and": 2})),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let r = perf(&gpu, Some(4), "all_gather_perf", &args, &[(var, rule)], dir.path());
        assert_eq!(r.code, Some(0), "{rule}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(r.stderr, "", "{rule}");
        // A communicator of two: busbw = algbw / 2 for an allgather.
        split_rows_hold(&r.stdout, &groups, 2, 0.5, rule);
        let (record, csv) = run_results(dir.path());
        assert_eq!(record["options"]["split"], record_rule, "{record}");
        assert!(csv.iter().all(|row| row["np"] == "2"), "{csv:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let corrupt = [("NCCL_TESTS_SPLIT", "DIV 2"), ("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
    let r = perf(&gpu, Some(4), "all_gather_perf", &args, &corrupt, dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    r.assert_no_panic();
    assert!(r.stdout.contains(" FAILED\n"), "{}", r.stdout);
    // Communicators of different sizes (2, 1 and 1 processes of two GPUs
    // each) run at once too, as nccl-tests': the table and the CSV give
    // world rank 0's communicator's counts and bandwidths (four ranks),
    // the time averaged over every rank of the job.
    let dir = tempfile::tempdir().unwrap();
    let two = ["-g", "2"];
    let args: Vec<&str> = args.iter().chain(&two).copied().collect();
    let r = perf(&gpu, Some(4), "reduce_scatter_perf", &args, &[("NCCL_TESTS_SPLIT", "%3")], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    // A communicator of four: busbw = 3/4 algbw for a reduce-scatter.
    split_rows_hold(&r.stdout, &[0, 0, 1, 1, 2, 2, 0, 0], 4, 0.75, "MOD 3");
    let (record, csv) = run_results(dir.path());
    assert_eq!(record["options"]["split"], serde_json::json!({"mod": 3}), "{record}");
    assert!(csv.iter().all(|row| row["np"] == "4"), "{csv:?}");
}

/// `-x P`: with an NCCL of 2.27 or later every rank's communicator is
/// made by `ncclCommInitRankConfig` with CTA policy P (the stand-in's call
/// log says so, and the record keeps it); with an older NCCL nccl-tests'
/// line says the option is ignored and the communicators are made as
/// without it. Two launches of about a second.
#[test]
fn cta_policy_goes_into_every_communicator_s_config() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let args = ["-b", "1K", "-e", "1K", "-n", "2", "-w", "1", "-x", "1", "-g", "2"];
    for (version, configured) in [("22705", true), ("22105", false)] {
        let dir = tempfile::tempdir().unwrap();
        let calls = dir.path().join("calls");
        let env =
            [("COMMBENCH_STANDIN_NCCL_VERSION", version), ("COMMBENCH_STANDIN_NCCL_CALLS", calls.to_str().unwrap())];
        let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &env, dir.path());
        assert_eq!(r.code, Some(0), "{version}: {}\n{}", r.stdout, r.stderr);
        let log = std::fs::read_to_string(&calls).unwrap();
        let mut ranks: Vec<&str> = log
            .lines()
            .filter(|l| l.ends_with(" ncclCommInitRankConfig CTAPolicy 1"))
            .map(|l| l.split_whitespace().skip_while(|w| *w != "rank").nth(1).unwrap())
            .collect();
        ranks.sort();
        let ignored = "Option -x (cta_policy) is not supported before NCCL 2.27. Ignoring";
        let (record, _) = run_results(dir.path());
        if configured {
            assert_eq!(ranks, ["0", "1", "2", "3"], "{log}");
            assert!(!r.stdout.contains(ignored), "{}", r.stdout);
            assert_eq!(record["options"]["cta_policy"], 1, "{record}");
        } else {
            assert!(ranks.is_empty(), "{log}");
            assert_eq!(r.stdout.matches(ignored).count(), 2, "each process says it: {}", r.stdout);
            assert!(record["options"].get("cta_policy").is_none(), "{record}");
        }
    }
}

/// `-c N`: after each cell's timed calls, the checked call N times (the
/// preamble says `validation: N`), as the stand-in's trace counts: two
/// more NCCL calls per cell on each rank at -c 3 than at -c 1; where a
/// rank's result is wrong the checks of that cell end at the first, as
/// nccl-tests' do, and its wrong values are counted once. `-c 0` checks
/// nothing and prints `N/A`. Four launches of about a second.
#[test]
fn check_count_repeats_the_checked_call_until_one_is_wrong() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let base = ["-b", "1K", "-e", "8K", "-f", "8", "-n", "2", "-w", "0"];
    let with = |c: &'static str| base.iter().copied().chain(["-c", c]).collect::<Vec<&str>>();
    let sub = |name: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let (one, units_one) = traced_perf(&gpu, &with("1"), &sub("one"));
    let (three, units_three) = traced_perf(&gpu, &with("3"), &sub("three"));
    for r in [&one, &three] {
        assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    }
    assert!(three.stdout.contains(" validation: 3 graph: 0 "), "{}", three.stdout);
    // Two sizes, two cells each, two more checked calls per cell, on each
    // of two ranks.
    assert_eq!(units_three - units_one, 2 * 2 * 2 * 2, "{units_one} then {units_three}");
    let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
    let bad = perf(&gpu, Some(2), "all_reduce_perf", &with("3"), &corrupt, &sub("corrupt"));
    assert_eq!(bad.code, Some(7), "{}\n{}", bad.stdout, bad.stderr);
    let bad_once = perf(&gpu, Some(2), "all_reduce_perf", &with("1"), &corrupt, &sub("corrupt1"));
    assert_eq!(bad_once.code, Some(7), "{}\n{}", bad_once.stdout, bad_once.stderr);
    // The same wrong counts as one check finds: the first wrong round ends it.
    let wrong = |r: &Run| rows(&r.stdout).into_iter().map(|t| (t.5, t.6)).collect::<Vec<_>>();
    assert_eq!(wrong(&bad), wrong(&bad_once), "{}\n{}", bad.stdout, bad_once.stdout);
    assert!(wrong(&bad).iter().all(|(o, _)| o != "0"), "{}", bad.stdout);
    let none = perf(&gpu, Some(2), "all_reduce_perf", &with("0"), &[], &sub("none"));
    assert_eq!(none.code, Some(0), "{}\n{}", none.stdout, none.stderr);
    assert!(rows(&none.stdout).iter().all(|t| t.5 == "N/A" && t.6 == "N/A"), "{}", none.stdout);
}

/// `-N 0`: the sweep runs again and again, every pass in the table and the
/// CSV, until the job is stopped; SIGTERM then ends it as any run is ended
/// (the record says `interrupted`, the CSV is whole). The dry run says its
/// duration is per pass. One launch, stopped once three passes are in the
/// CSV (a couple of seconds).
#[test]
fn n_zero_repeats_the_sweep_until_stopped() {
    use common::jobs::{clean_up, csv_intact, read_json, signal, wait_for, wait_started};
    use std::process::Stdio;
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let (csv, record) = (dir.path().join("s.csv"), dir.path().join("s.json"));
    let args = ["-b", "1K", "-e", "4K", "-f", "2", "-n", "2", "-w", "1", "-N", "0", "--csv", csv.to_str().unwrap()];
    let mut cmd = std::process::Command::new(bin(Mpi::OpenMpi, "all_reduce_perf"));
    cmd.args(args).current_dir(dir.path()).stdout(Stdio::null()).stderr(Stdio::null()).own_session();
    gpu.apply(&mut cmd);
    let start = std::time::Instant::now();
    let mut child = cmd.spawn().unwrap();
    // Three sizes a pass, two cells a size: three passes are 18 rows.
    let pids = wait_started(&record, &csv, 1, 18, start);
    signal(child.id() as i32, libc::SIGTERM);
    let code = wait_for(&mut child, under_load(Duration::from_secs(20)));
    clean_up(child.id() as i32, &pids);
    assert!(code.is_some(), "the run did not end after SIGTERM");
    let v = read_json(&record).unwrap();
    assert_eq!(v["status"], "interrupted", "{v}");
    csv_intact(&csv);
    let sizes: Vec<String> = read_csv(&csv).iter().map(|r| r["size_bytes"].clone()).collect();
    assert!(sizes.len() >= 18, "{sizes:?}");
    let pass = ["1024", "1024", "2048", "2048", "4096", "4096"];
    for (i, s) in sizes.iter().enumerate() {
        assert_eq!(s, pass[i % 6], "row {i}: {sizes:?}");
    }
    let dry: Vec<&str> = args[..12].iter().copied().chain(["--dry-run"]).collect();
    let r = perf(&gpu, None, "all_reduce_perf", &dry, &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(" per pass (-N 0: passes until stopped) of timed "), "{}", r.stdout);
}

/// `-G N`: each cell's timed calls are captured into a CUDA graph once and
/// the graph is launched N times; the checked call goes through a graph
/// of its own, launched once. Two processes of two GPUs each (every GPU's
/// thread captures its own stream) with `-m 2`: the stand-in's call log
/// shows each NCCL call made as often as without `-G` (a captured call is
/// still called once), and each captured call replayed as the launches
/// say: per rank and cell, N x 3 x 2 timed calls and one checked. The
/// replayed results check; the table's layout is the one without `-G`;
/// the preamble, the JSON and the record say `graph: 4`. Two launches of
/// about a second.
#[test]
fn cuda_graphs_capture_the_timed_calls_once_and_launch_them_n_times() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let mut runs = Vec::new();
    for graph in ["0", "4"] {
        let dir = tempfile::tempdir().unwrap();
        let calls = dir.path().join("calls");
        let json = dir.path().join("out.json");
        let args = ["-b", "1K", "-e", "4K", "-f", "4", "-n", "3", "-m", "2", "-w", "1", "-g", "2", "-G", graph, "-J"];
        let args: Vec<&str> = args.into_iter().chain([json.to_str().unwrap()]).collect();
        let log = [("COMMBENCH_STANDIN_NCCL_CALLS", calls.to_str().unwrap())];
        let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &log, dir.path());
        assert_eq!(r.code, Some(0), "-G {graph}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(r.stderr, "", "-G {graph}");
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 2, "{}", r.stdout);
        assert!(got.iter().all(|row| (row.5.as_str(), row.6.as_str()) == ("0", "0")), "-G {graph}: {}", r.stdout);
        assert!(r.stdout.contains(&format!(" validation: 1 graph: {graph} unalign: 0\n")), "{}", r.stdout);
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(doc.to_string().matches(&format!("\"graph\":{graph}")).count(), 1, "{doc}");
        let (record, _) = run_results(dir.path());
        let said = record["options"].get("graph_launches").cloned().unwrap_or_default();
        assert_eq!(said, if graph == "0" { serde_json::Value::Null } else { serde_json::json!(4) }, "{record}");
        let text = std::fs::read_to_string(&calls).unwrap();
        let per_rank = |what: &str| {
            let mut n = [0usize; 4];
            for w in text.lines().filter(|l| l.contains(what) && l.contains(" ncclAllReduce ")) {
                let w: Vec<&str> = w.split_whitespace().collect();
                n[w[w.iter().position(|x| *x == "rank").unwrap() + 1].parse::<usize>().unwrap()] += 1;
            }
            n
        };
        // The layout, words masked (a value's width moves its column), less
        // the line naming the JSON file (its directory's name is random).
        let words = |l: &str| masked(l).split_whitespace().collect::<Vec<_>>().join(" ") + "\n";
        let layout: String =
            r.stdout.lines().filter(|l| !l.starts_with("# Writing JSON output to ")).map(words).collect();
        runs.push((layout, per_rank(" call: "), per_rank(" replay: ")));
    }
    let (plain, graphed) = (&runs[0], &runs[1]);
    assert_eq!(plain.0, graphed.0, "the same layout with and without -G");
    assert_eq!(plain.1, graphed.1, "every call made once, captured or not");
    assert_eq!(plain.2, [0; 4]);
    // Two sizes x two cells, each 4 launches of 3 x 2 calls and 1 checked.
    assert_eq!(graphed.2, [2 * 2 * (4 * 3 * 2 + 1); 4]);
}

/// What cannot run is refused before anything starts: one line on stderr
/// naming the setting, on every process, nothing written. What the core
/// does not offer (`-D`) gets nccl-tests' status for a test that does not
/// implement something (5); a CUDA graph (`-G`) over the legacy stream
/// (`-y 1`) or with a wait after each call (`-z 1`, `-z 2`), which CUDA
/// refuses inside a capture, its status for a CUDA failure (2). Bad
/// values keep nccl-tests' own words and status (255). Four launches of
/// about a second (each refusal on both ranks of a real mpirun).
#[test]
fn settings_not_offered_are_refused_in_one_line() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let d = [("COMMBENCH_STANDIN_NCCL_VERSION", "22803")];
    for (args, extra, status, want) in [
        (&["-D", "1", "-R", "2"][..], &d[..], 5, "all_reduce_perf: -D 1: nccl-tests' device-side implementations"),
        (&["-G", "2", "-y", "1"], &[], 2, "all_reduce_perf: -G 2 with -y 1: CUDA cannot capture work on the legacy"),
        (&["-G", "1", "-z", "2"], &[], 2, "all_reduce_perf: -G 1 with -z 2: a call inside a CUDA graph capture"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let r = perf(&gpu, Some(2), "all_reduce_perf", args, extra, dir.path());
        assert_eq!(r.code, Some(status), "{args:?}: {}\n{}", r.stdout, r.stderr);
        let lines = r.our_stderr_lines();
        assert_eq!(lines.len(), 2, "{args:?}: {lines:?}");
        assert!(lines.iter().all(|l| l.starts_with(want)), "{args:?}: {lines:?}");
        assert!(!dir.path().join("res").exists(), "{args:?} wrote results");
    }
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, None, "all_reduce_perf", &["-b", "1X"], &[], dir.path());
    assert_eq!(r.code, Some(255), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.trim_end(), "invalid size specified for 'minbytes'");
}

/// nccl-tests' verdicts and exit status 7: wrong elements (the stand-in
/// corrupts rank 1's outputs) counted in `#wrong` and failing the footer;
/// `NCCL_TESTS_MIN_BW` passing below the run's bus bandwidth (`OK`, exit 0)
/// and failing far above it (`FAILED`), on two ranks and on one process
/// alone, whose all-reduce moves nothing between GPUs (busbw 0: nccl-tests
/// fails it after the run, not before). Each failing process says so last.
#[test]
fn wrong_values_and_nccl_tests_min_bw_fail_with_status_7() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let quick = ["-b", "1K", "-e", "4K", "-f", "2", "-n", "3", "-w", "1"];
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, Some(2), "all_reduce_perf", &quick, &[("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")], dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    r.assert_no_panic();
    let got = rows(&r.stdout);
    assert_eq!(got.len(), 3, "{}", r.stdout);
    assert!(got.iter().all(|row| row.5 != "0" && row.6 != "0"), "{}", r.stdout);
    assert!(r.stdout.contains("# Out of bounds values : 6 FAILED\n"), "{}", r.stdout);
    let failures: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with(" .. ")).collect();
    assert_eq!(failures.len(), 2, "{}", r.stdout);
    assert!(failures.iter().all(|l| l.ends_with(": Test failure (out of bounds values)")), "{failures:?}");
    assert!(!r.stdout.contains("DATA VALIDATION ERROR"), "OSU's line is not nccl-tests'");
    // The wrong values said on stderr name the program, not its OSU twin.
    let said = r.our_stderr_lines();
    assert!(!said.is_empty() && said.iter().all(|l| l.starts_with("all_reduce_perf: ")), "{said:?}");
    assert!(said.iter().any(|l| l.starts_with("all_reduce_perf: validation failed on rank 1: ")), "{said:?}");
    let (record, _) = run_results(dir.path());
    assert_eq!(record["status"], "validation_failed");

    for (np, floor, code, verdict) in
        [(Some(2), "0.000001", 0, "OK"), (Some(2), "1000000", 7, "FAILED"), (None, "0.5", 7, "FAILED")]
    {
        let dir = tempfile::tempdir().unwrap();
        let r = perf(&gpu, np, "all_reduce_perf", &quick, &[("NCCL_TESTS_MIN_BW", floor)], dir.path());
        assert_eq!(r.code, Some(code), "{floor}: {}\n{}", r.stdout, r.stderr);
        let avg = r.stdout.lines().find(|l| l.starts_with("# Avg bus bandwidth")).unwrap_or_default();
        assert!(avg.ends_with(&format!(" {verdict}")), "{floor}: {avg}");
        let failures = r.stdout.lines().filter(|l| l.contains(": Test failure (average bus bandwidth")).count();
        assert_eq!(failures, if code == 0 { 0 } else { np.unwrap_or(1) }, "{floor}: {}", r.stdout);
        let (record, _) = run_results(dir.path());
        assert_eq!(record["status"], if code == 0 { "complete" } else { "failed" }, "{floor}");
    }
}

/// Each of the nine binaries whose collective the core has over NCCL, at
/// three ranks (which no power-of-two size divides): exit 0, every cell
/// checked and right, and the size and count columns nccl-tests prints
/// for each size of `-b 8 -e 64K -f 8` (its elements rounded to a whole
/// number per rank for the per-rank collectives), the redop and root
/// columns as nccl-tests fills them for that collective (sendrecv reduces
/// nothing but prints the operation it was given). Nine launches of
/// about a second each.
#[test]
fn every_binary_rounds_its_sizes_as_nccl_tests_does() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    // (program, per-rank count, reduces, rooted)
    let programs = [
        ("all_reduce_perf", false, true, false),
        ("all_gather_perf", true, false, false),
        ("broadcast_perf", false, false, true),
        ("reduce_scatter_perf", true, true, false),
        ("reduce_perf", false, true, true),
        ("alltoall_perf", true, false, false),
        ("gather_perf", true, false, true),
        ("scatter_perf", true, false, true),
        ("sendrecv_perf", false, true, false),
    ];
    let np = 3u64;
    for (program, per_rank, reduces, rooted) in programs {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "8", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "-r", "2"];
        let r = perf(&gpu, Some(np as usize), program, &args, &[], dir.path());
        assert_eq!(r.code, Some(0), "{program}: {}\n{}", r.stdout, r.stderr);
        let got = rows(&r.stdout);
        let sizes = [8u64, 64, 512, 4096, 32768];
        assert_eq!(got.len(), sizes.len(), "{program}: {}", r.stdout);
        for (row, bytes) in got.iter().zip(sizes) {
            let count = bytes / 4;
            let (size, column) = if per_rank { (count / np * np * 4, count / np) } else { (count * 4, count) };
            assert_eq!((row.0, row.1), (size, column), "{program} at {bytes}: {}", r.stdout);
            assert_eq!(row.3, if reduces { "sum" } else { "none" }, "{program}");
            assert_eq!(row.4, if rooted { 2 } else { -1 }, "{program}");
            assert_eq!(row.5, "0", "{program}: {}", r.stdout);
            let unchecked_in_place = matches!(program, "alltoall_perf" | "sendrecv_perf");
            assert_eq!(row.6, if unchecked_in_place { "N/A" } else { "0" }, "{program}: {}", r.stdout);
        }
        assert!(r.stdout.contains(&format!("# Collective test concluded: {program}\n")), "{}", r.stdout);
    }
}

/// Each (program, `-o`, `-d`, element bytes) at three ranks, sizes 24 B to
/// 3 KiB: three rows, counts as nccl-tests prints them (one rank's share
/// for the per-rank collectives), the type column, every cell checked
/// right; then `more(type, directory)` on the run's results.
fn typed_runs_check_right(
    gpu: &StandIn,
    env: &[(&str, &str)],
    cases: &[(&str, &str, &str, u64)],
    mut more: impl FnMut(&str, &Path),
) {
    for &(program, op, ty, width) in cases {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "24", "-e", "3K", "-f", "8", "-n", "2", "-w", "1", "-o", op, "-d", ty];
        let r = perf(gpu, Some(3), program, &args, env, dir.path());
        assert_eq!(r.code, Some(0), "{program} -d {ty}: {}\n{}", r.stdout, r.stderr);
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 3, "{program} -d {ty}: {}", r.stdout);
        for row in &got {
            let per_rank = if program == "all_reduce_perf" || program == "reduce_perf" { 1 } else { 3 };
            assert_eq!(row.1, row.0 / width / per_rank, "{program} -d {ty} count: {}", r.stdout);
            assert_eq!(row.2, ty, "{program}: {}", r.stdout);
            assert_eq!((row.5.as_str(), row.6.as_str()), ("0", "0"), "{program} -d {ty}: {}", r.stdout);
        }
        more(ty, dir.path());
    }
}

/// `-o` on the three collectives that reduce, at three ranks: each of
/// prod, max, min and avg with each type the core has, in the `redop`
/// column, computed by the stand-in's NCCL and every cell checked right
/// (each rank's inputs differ, so a result from one rank or another
/// operation is wrong); a corrupted result is counted; the record keeps the
/// operation. Twelve launches of about a second.
#[test]
fn each_reduction_operation_runs_and_is_checked() {
    // 12 + 6 + 3 + 1 launches of under a second each.
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    for program in ["all_reduce_perf", "reduce_perf", "reduce_scatter_perf"] {
        for (op, ty) in [("prod", "int32"), ("max", "int8"), ("min", "float"), ("avg", "int32")] {
            let dir = tempfile::tempdir().unwrap();
            let args = ["-b", "8", "-e", "4K", "-f", "8", "-n", "2", "-w", "1", "-o", op, "-d", ty];
            let r = perf(&gpu, Some(3), program, &args, &[], dir.path());
            assert_eq!(r.code, Some(0), "{program} -o {op}: {}\n{}", r.stdout, r.stderr);
            let got = rows(&r.stdout);
            assert_eq!(got.len(), 4, "{program} -o {op}: {}", r.stdout);
            for row in &got {
                assert_eq!((row.2.as_str(), row.3.as_str()), (ty, op), "{program}: {}", r.stdout);
                assert_eq!((row.5.as_str(), row.6.as_str()), ("0", "0"), "{program} -o {op}: {}", r.stdout);
            }
            let (record, _) = run_results(dir.path());
            assert_eq!(record["options"]["reduction"], op, "{record}");
        }
    }
    // nccl-tests' other exact types: each with an operation, counts and
    // the type column as nccl-tests prints them (eight-byte types halve
    // the count), checked.
    let cases = [
        ("all_reduce_perf", "sum", "uint8", 1),
        ("all_reduce_perf", "prod", "uint32", 4),
        ("all_reduce_perf", "max", "int64", 8),
        ("reduce_perf", "min", "uint64", 8),
        ("reduce_scatter_perf", "avg", "double", 8),
        ("all_gather_perf", "sum", "double", 8),
    ];
    typed_runs_check_right(&gpu, &[], &cases, |_, _| {});
    for ty in ["int32", "double", "uint64"] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "1K", "-e", "1K", "-n", "2", "-o", "max", "-d", ty];
        let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
        let r = perf(&gpu, Some(3), "all_reduce_perf", &args, &corrupt, dir.path());
        assert_eq!(r.code, Some(7), "-d {ty}: {}\n{}", r.stdout, r.stderr);
        assert!(rows(&r.stdout).iter().all(|row| row.5 != "0" && row.6 != "0"), "-d {ty}: {}", r.stdout);
    }
    // A sum's record says nothing of the operation, as before.
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, None, "all_reduce_perf", &["-b", "1K", "-e", "1K", "-n", "2"], &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let (record, _) = run_results(dir.path());
    assert!(record["options"].get("reduction").is_none(), "{record}");
}

/// The narrow floats: half, bfloat16 and NCCL 2.24's two fp8 formats, each
/// reduced by the stand-in's NCCL in its own arithmetic (an average as
/// NCCL makes it, each input multiplied by 1/ranks first) and every cell
/// checked right at three ranks, counts as nccl-tests prints them; a
/// corrupted half result is counted. fp8 needs NCCL 2.24 (the stand-in
/// plays 2.24.5 here; at its default 2.21.5, nccl-tests' own words read
/// the word as float) and, to reduce, a GPU of compute capability 9.0:
/// on the V100s of dgx1 a reducing fp8 run is refused in one line on
/// every rank, where NCCL would run empty kernels, and a copy runs.
/// Eleven launches of about a second.
#[test]
fn narrow_floats_reduce_in_their_own_arithmetic_and_check() {
    let _g = mpi_lock();
    let v2_24 = [("COMMBENCH_STANDIN_NCCL_VERSION", "22405")];
    let hopper = standin::stand_in("dgx-h100");
    let cases = [
        ("all_reduce_perf", "sum", "half", 2),
        ("all_reduce_perf", "avg", "bfloat16", 2),
        ("all_reduce_perf", "prod", "f8e4m3", 1),
        ("reduce_perf", "max", "f8e5m2", 1),
        ("reduce_scatter_perf", "avg", "f8e4m3", 1),
        ("reduce_scatter_perf", "min", "half", 2),
        ("all_gather_perf", "sum", "f8e5m2", 1),
    ];
    typed_runs_check_right(&hopper, &v2_24, &cases, |ty, dir| {
        // MPI has none of them: the CSV and the record use NCCL's names.
        let (record, csv) = run_results(dir);
        let name = record["options"]["datatypes"][0].as_str().unwrap_or_default().to_string();
        assert!(name.starts_with("nccl"), "{ty}: {record}");
        assert!(csv.iter().all(|row| row["datatype"] == name), "{ty}: {csv:?}");
    });
    let dir = tempfile::tempdir().unwrap();
    let corrupt = [v2_24[0], ("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
    let r = perf(
        &hopper,
        Some(3),
        "all_reduce_perf",
        &["-b", "1K", "-e", "1K", "-n", "2", "-d", "half"],
        &corrupt,
        dir.path(),
    );
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    assert!(rows(&r.stdout).iter().all(|row| row.5 != "0" && row.6 != "0"), "{}", r.stdout);
    // NCCL 2.21: no fp8, and nccl-tests' words for a type it does not know.
    let dir = tempfile::tempdir().unwrap();
    let r =
        perf(&hopper, None, "all_reduce_perf", &["-b", "1K", "-e", "1K", "-n", "2", "-d", "f8e4m3"], &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("invalid type f8e4m3, defaulting to float .. \n"), "{}", r.stdout);
    assert!(rows(&r.stdout).iter().all(|row| row.2 == "float"), "{}", r.stdout);
    // Volta: a reducing fp8 run is refused on every rank; a copy runs.
    let volta = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&volta, Some(2), "all_reduce_perf", &["-d", "f8e5m2", "-b", "8", "-e", "1K"], &v2_24, dir.path());
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let lines = r.our_stderr_lines();
    assert_eq!(
        lines,
        ["all_reduce_perf: f8e5m2 reductions need a GPU of compute capability 9.0 or later (NCCL has no fp8 \
          arithmetic below it): the Tesla V100-SXM2-16GB is 7.0"],
        "{}",
        r.stderr
    );
    assert!(rows(&r.stdout).is_empty(), "{}", r.stdout);
    let r = perf(&volta, Some(2), "all_gather_perf", &["-d", "f8e4m3", "-b", "8", "-e", "1K"], &v2_24, dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(rows(&r.stdout).iter().all(|row| row.5 == "0" && row.2 == "f8e4m3"), "{}", r.stdout);
}

/// `-d all`: one sweep per type the loaded NCCL has, in nccl-tests'
/// order, each warmed up before it, in one table whose footer averages
/// every row, every cell checked. The fp8 types need NCCL 2.24 (the
/// stand-in plays 2.24.5 here) and, as nccl-tests has it, a GPU of compute
/// capability 9.0 for any test: on dgx1's V100s they are left out. The CSV
/// and the record name each row's type. Three launches of about a second.
#[test]
fn every_type_in_turn_with_d_all() {
    let _g = mpi_lock();
    let v2_24 = [("COMMBENCH_STANDIN_NCCL_VERSION", "22405")];
    let all = "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2";
    for (machine, program, want) in [
        ("dgx-h100", "all_reduce_perf", all),
        ("dgx1", "all_reduce_perf", all.trim_end_matches(" f8e4m3 f8e5m2")),
        ("dgx1", "all_gather_perf", all.trim_end_matches(" f8e4m3 f8e5m2")),
    ] {
        let gpu = standin::stand_in(machine);
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "8", "-e", "64", "-f", "8", "-n", "2", "-w", "1", "-d", "all"];
        let r = perf(&gpu, Some(2), program, &args, &v2_24, dir.path());
        assert_eq!(r.code, Some(0), "{machine} {program}: {}\n{}", r.stdout, r.stderr);
        let got = rows(&r.stdout);
        let types: Vec<&str> = got.iter().step_by(2).map(|row| row.2.as_str()).collect();
        assert_eq!(types.join(" "), want, "{machine} {program}: {}", r.stdout);
        assert_eq!(got.len(), 2 * types.len(), "{}", r.stdout);
        for (row, size) in got.iter().zip([8, 64].into_iter().cycle()) {
            // (all_gather's sizes round to whole elements per rank.)
            if program == "all_reduce_perf" {
                assert_eq!(row.0, size, "{}", r.stdout);
            }
            assert_eq!((row.5.as_str(), row.6.as_str()), ("0", "0"), "{machine} {program}: {}", r.stdout);
        }
        assert_eq!(r.stdout.matches("# Avg bus bandwidth").count(), 1, "{}", r.stdout);
        let (record, csv) = run_results(dir.path());
        // What was asked (every type of NCCL 2.24); the plan, what ran.
        assert_eq!(record["options"]["datatypes"].as_array().map(Vec::len), Some(12), "{record}");
        assert_eq!(record["plan"]["spans"].as_array().map(Vec::len), Some(types.len()), "{record}");
        let csv_types: std::collections::BTreeSet<&str> = csv.iter().map(|row| row["datatype"].as_str()).collect();
        assert_eq!(csv_types.len(), types.len(), "{csv:?}");
    }
}

/// `-c` with nccl-tests' own data: every type times every operation at
/// three ranks (so a float average is not a halving) on an fp8-capable
/// stand-in, whose NCCL reduces as a GPU would (a narrow float's average
/// pre-multiplied in its own type), checks clean out of place and in
/// place, within nccl-tests' two-unit tolerance for a float average and
/// exactly otherwise; a corrupted average is still caught. Three
/// launches of a few seconds (72 sweeps each).
#[test]
fn every_type_and_operation_checks_clean_on_nccl_tests_data() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx-h100");
    let v2_24 = [("COMMBENCH_STANDIN_NCCL_VERSION", "22405")];
    for program in ["all_reduce_perf", "reduce_scatter_perf"] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "96", "-e", "96", "-n", "1", "-w", "0", "-d", "all", "-o", "all"];
        let r = perf(&gpu, Some(3), program, &args, &v2_24, dir.path());
        assert_eq!(r.code, Some(0), "{program}: {}\n{}", r.stdout, r.stderr);
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 12 * 6, "{program}: {}", r.stdout);
        for row in &got {
            assert_eq!((row.5.as_str(), row.6.as_str()), ("0", "0"), "{program}: {}", r.stdout);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let args = ["-b", "96", "-e", "96", "-n", "1", "-w", "0", "-d", "bfloat16", "-o", "avg"];
    let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1"), v2_24[0]];
    let r = perf(&gpu, Some(3), "all_reduce_perf", &args, &corrupt, dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    assert!(rows(&r.stdout).iter().all(|row| row.5 != "0" && row.6 != "0"), "{}", r.stdout);
}

/// `-o all` and `-r -1`: a sweep per operation on the tests that loop over
/// operations (sendrecv included), per root on the rooted ones, types
/// outermost, then operations, then roots, as nccl-tests nests them; each
/// sweep's cells checked with its own operation and root; the CSV names
/// each row's operation and root; a test that loops over neither runs
/// once. Five launches of about a second.
#[test]
fn every_operation_and_every_root_in_turn() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let ops = ["sum", "prod", "max", "min", "avg", "mulsum"];
    let args = |more: &[&'static str]| {
        let mut a = vec!["-b", "8", "-e", "64", "-f", "8", "-n", "2", "-w", "1", "-d", "int32"];
        a.extend(more);
        a
    };
    for (program, more, np, want) in [
        ("all_reduce_perf", &["-o", "all"][..], 2, ops.iter().map(|o| (o.to_string(), -1)).collect::<Vec<_>>()),
        ("sendrecv_perf", &["-o", "all"], 2, ops.iter().map(|o| (o.to_string(), -1)).collect()),
        (
            "reduce_perf",
            &["-o", "all", "-r", "-1"],
            3,
            ops.iter().flat_map(|o| (0..3).map(move |r| (o.to_string(), r))).collect(),
        ),
        ("broadcast_perf", &["-o", "all", "-r", "-1"], 3, (0..3).map(|r| ("none".to_string(), r)).collect()),
        ("all_gather_perf", &["-o", "all", "-r", "-1"], 2, vec![("none".to_string(), -1)]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let r = perf(&gpu, Some(np), program, &args(more), &[], dir.path());
        assert_eq!(r.code, Some(0), "{program} {more:?}: {}\n{}", r.stdout, r.stderr);
        let got = rows(&r.stdout);
        let sweeps: Vec<(String, i64)> = got.iter().step_by(2).map(|row| (row.3.clone(), row.4)).collect();
        assert_eq!(sweeps, want, "{program} {more:?}: {}", r.stdout);
        assert_eq!(got.len(), 2 * want.len(), "{}", r.stdout);
        for row in &got {
            // sendrecv's in-place cell is not checked (nccl-tests' N/A).
            assert_eq!(row.5, "0", "{program} {more:?}: {}", r.stdout);
        }
        let (record, csv) = run_results(dir.path());
        let csv_sweeps: Vec<(String, String)> = csv
            .iter()
            .filter(|row| row["placement"] == "out-of-place")
            .step_by(2)
            .map(|row| (row["reduction"].clone(), row["root"].clone()))
            .collect();
        let expected: Vec<(String, String)> = want
            .iter()
            .map(|(op, root)| {
                let op = if more.contains(&"all") && op != "none" { op.clone() } else { String::new() };
                let root = if *root >= 0 { root.to_string() } else { String::new() };
                (op, root)
            })
            .collect();
        assert_eq!(csv_sweeps, expected, "{program}: {csv:?}");
        assert_eq!(record["options"]["reductions"].as_array().map(Vec::len), Some(6), "{record}");
    }
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, Some(2), "reduce_perf", &args(&["-r", "-2"]), &[], dir.path());
    assert_eq!(r.code, Some(255), "{}\n{}", r.stdout, r.stderr);
    let lines = r.our_stderr_lines();
    assert!(lines.iter().all(|l| *l == "reduce_perf: -r -2 (give a rank, or -1 for each rank in turn)"), "{lines:?}");
}

/// `-o mulsum`: NCCL's pre-multiplied sum, made before and destroyed after
/// each call as nccl-tests does, each rank's input times its scalar (1 on
/// even ranks, 2 on odd), so a plain sum or a wrong rank's scalar checks
/// wrong. On the three reducing collectives at three ranks, integer,
/// float and narrow types, calls grouped (`-m 3`, every operation made and
/// destroyed inside the group) and not; a corrupted result is counted.
/// Seven launches of about a second.
#[test]
fn a_pre_multiplied_sum_is_made_per_call_and_checked() {
    let _g = mpi_lock();
    let v2_24 = [("COMMBENCH_STANDIN_NCCL_VERSION", "22405")];
    let gpu = standin::stand_in("dgx-h100");
    for (program, ty, agg) in [
        ("all_reduce_perf", "int32", "1"),
        ("all_reduce_perf", "half", "3"),
        ("reduce_perf", "uint8", "1"),
        ("reduce_perf", "double", "3"),
        ("reduce_scatter_perf", "float", "1"),
        ("reduce_scatter_perf", "f8e5m2", "3"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "24", "-e", "3K", "-f", "8", "-n", "2", "-w", "1", "-o", "mulsum", "-d", ty, "-m", agg];
        let r = perf(&gpu, Some(3), program, &args, &v2_24, dir.path());
        assert_eq!(r.code, Some(0), "{program} -d {ty}: {}\n{}", r.stdout, r.stderr);
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 3, "{program} -d {ty}: {}", r.stdout);
        for row in &got {
            assert_eq!((row.2.as_str(), row.3.as_str()), (ty, "mulsum"), "{program}: {}", r.stdout);
            assert_eq!((row.5.as_str(), row.6.as_str()), ("0", "0"), "{program} -d {ty}: {}", r.stdout);
        }
        let (record, _) = run_results(dir.path());
        assert_eq!(record["options"]["reduction"], "mulsum", "{record}");
    }
    let dir = tempfile::tempdir().unwrap();
    let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=2")];
    let args = ["-b", "1K", "-e", "1K", "-n", "2", "-o", "mulsum", "-d", "int64"];
    let r = perf(&gpu, Some(3), "all_reduce_perf", &args, &corrupt, dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    assert!(rows(&r.stdout).iter().all(|row| row.5 != "0" && row.6 != "0"), "{}", r.stdout);
}

/// `-m`: each of the `-n` timed iterations is `-m` calls issued as one
/// group. The stand-in's trace has one line per group it runs (per
/// communicator), so `-n 12 -m 1` and `-n 4 -m 3`, the same 12 calls, differ
/// by 8 groups per pass, 2 passes and 2 ranks: 32 lines; the preamble, the
/// record and the CSV say what ran, and grouped results still check.
/// `-a`: the `time` columns are rank 0's, the least or the most of the
/// ranks' times, which the CSV carries beside the average; with one
/// thread driving four GPUs, that thread's time (its slowest GPU's)
/// whatever `-a` says. Eight launches of about a second each. `-z 1..3`:
/// the preamble's line, the record, and results that still check (three
/// more launches).
#[test]
fn aggregated_calls_and_the_reported_rank_time_follow_nccl_tests() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let mut groups = Vec::new();
    for (n, m) in [("12", "1"), ("4", "3")] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "1K", "-e", "1K", "-w", "1", "-n", n, "-m", m];
        let (r, units) = traced_perf(&gpu, &args, dir.path());
        assert_eq!(r.code, Some(0), "-m {m}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains(&format!(" iters: {n} agg iters: {m} validation: 1 ")), "{}", r.stdout);
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 1, "{}", r.stdout);
        assert_eq!((got[0].5.as_str(), got[0].6.as_str()), ("0", "0"), "-m {m}: {}", r.stdout);
        let (record, csv) = run_results(dir.path());
        if m == "1" {
            assert!(record["options"].get("aggregate").is_none(), "{record}");
        } else {
            assert_eq!(record["options"]["aggregate"], 3, "{record}");
        }
        assert!(csv.iter().all(|row| row["iterations"] == "12"), "calls timed: {csv:?}");
        groups.push(units);
    }
    assert_eq!(groups[0] - groups[1], 32, "{groups:?}");

    // -a 0..3 against the CSV's rank 0, average, least and most.
    for (a, column) in [("2", "min_lat_us"), ("3", "max_lat_us"), ("1", "avg_lat_us")] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "-a", a];
        let r = perf(&gpu, Some(3), "all_reduce_perf", &args, &[], dir.path());
        assert_eq!(r.code, Some(0), "-a {a}: {}\n{}", r.stdout, r.stderr);
        let (record, csv) = run_results(dir.path());
        let table = nccl_tests_rows(&r.stdout);
        assert_eq!((table.len(), csv.len()), (5, 10), "{}", r.stdout);
        // Three processes' clocks: their times differ somewhere.
        assert!(csv.iter().any(|row| row["min_lat_us"] != row["max_lat_us"]), "{csv:?}");
        for (k, t) in table.iter().enumerate() {
            for (cell, row) in [(&t[5], &csv[2 * k]), (&t[9], &csv[2 * k + 1])] {
                let printed: f64 = cell.parse().unwrap();
                let decimals = cell.split_once('.').map_or(0, |(_, d)| d.len());
                let want: f64 = row[column].parse().unwrap();
                assert!(
                    (printed - want).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9,
                    "-a {a}: table {cell} against {column} {want}"
                );
            }
        }
        let said = record["options"].get("rank_time").and_then(|v| v.as_str()).unwrap_or("absent");
        assert_eq!(
            said,
            match a {
                "2" => "min",
                "3" => "max",
                _ => "absent",
            },
            "{record}"
        );
    }
    // One thread driving four GPUs (-g 4, no launcher) has one time in
    // nccl-tests, its timer running until the last GPU completes: every
    // -a picks it, the CSV's slowest rank's (per GPU, the CSV keeps each).
    for a in ["0", "2", "1"] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "8K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "-g", "4", "-a", a];
        let r = perf(&gpu, None, "all_reduce_perf", &args, &[], dir.path());
        assert_eq!(r.code, Some(0), "-g 4 -a {a}: {}\n{}", r.stdout, r.stderr);
        let (_, csv) = run_results(dir.path());
        let table = nccl_tests_rows(&r.stdout);
        assert_eq!((table.len(), csv.len()), (2, 4), "{}", r.stdout);
        for (k, t) in table.iter().enumerate() {
            for (cell, row) in [(&t[5], &csv[2 * k]), (&t[9], &csv[2 * k + 1])] {
                let printed: f64 = cell.parse().unwrap();
                let decimals = cell.split_once('.').map_or(0, |(_, d)| d.len());
                let want: f64 = row["max_lat_us"].parse().unwrap();
                assert!(
                    (printed - want).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9,
                    "-g 4 -a {a}: table {cell} against the slowest GPU's {want}"
                );
            }
        }
    }
    // -z: what follows each call, said in the preamble and the record;
    // every mode's results still check, grouped or not.
    for (z, m, line, said) in [
        ("1", "1", "# Blocking Enabled: wait and barrier after each inner iteration (-m) ", "wait_and_barrier"),
        ("2", "2", "# Blocking Enabled: wait after each inner iteration (-m), no barrier ", "wait"),
        (
            "3",
            "2",
            "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier ",
            "wait_each_group_barrier_untimed",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "8", "-e", "8K", "-f", "32", "-n", "4", "-w", "1", "-z", z, "-m", m];
        let r = perf(&gpu, Some(2), "reduce_scatter_perf", &args, &[], dir.path());
        assert_eq!(r.code, Some(0), "-z {z}: {}\n{}", r.stdout, r.stderr);
        let lines: Vec<&str> = r.stdout.lines().collect();
        assert_eq!((lines[3], lines[4]), (line, "#"), "-z {z}: {}", r.stdout);
        let got = rows(&r.stdout);
        assert_eq!(got.len(), 3, "{}", r.stdout);
        assert!(got.iter().all(|row| (row.5.as_str(), row.6.as_str()) == ("0", "0")), "-z {z}: {}", r.stdout);
        let (record, _) = run_results(dir.path());
        assert_eq!(record["options"]["blocking"], said, "{record}");
    }
    for (args, line) in [
        (
            &["-z", "4"][..],
            "all_reduce_perf: -z 4 (give 0 for calls back to back, 1 a wait and a barrier after each call, 2 a \
             wait after each call, or 3 a wait and an untimed barrier after each group of -m calls)",
        ),
        (
            &["-a", "4"][..],
            "all_reduce_perf: -a 4 (give 0 for rank 0's time, 1 the average over ranks, 2 the least or 3 the most)",
        ),
        (&["-m", "0"], "all_reduce_perf: -m 0 (give the calls to aggregate into one group, 1 or more)"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let r = perf(&gpu, None, "all_reduce_perf", args, &[], dir.path());
        assert_eq!(r.code, Some(255), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(r.our_stderr_lines(), vec![line], "{args:?}");
    }
}

/// nccl-tests' warm-up: `-w` calls at every size from `-b`, doubling up to
/// `-e`, once before the sweep, and none before each size. Counted in the
/// stand-in's trace (one line per call it runs): `-w 2` over 1K..16K by 4
/// warms up at 1K, 2K, 4K, 8K and 16K, ten calls per rank, twenty on two
/// ranks more than `-w 0`; a warm-up before each size's two passes would
/// be twelve per rank. The CSV says the sizes had none of their own. Two
/// launches of about a second.
#[test]
fn warm_up_runs_once_before_the_sweep_at_doubling_sizes() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let mut calls = Vec::new();
    for w in ["2", "0"] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-b", "1K", "-e", "16K", "-f", "4", "-n", "1", "-c", "0", "-w", w];
        let (r, units) = traced_perf(&gpu, &args, dir.path());
        assert_eq!(r.code, Some(0), "-w {w}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(rows(&r.stdout).len(), 3, "{}", r.stdout);
        assert!(r.stdout.contains(&format!(" warmup iters: {w} iters: 1 ")), "{}", r.stdout);
        let (_, csv) = run_results(dir.path());
        assert!(csv.iter().all(|row| row["warmup"] == "0"), "{csv:?}");
        calls.push(units);
    }
    assert_eq!(calls[0] - calls[1], 20, "{calls:?}");
}

/// sendrecv_perf, which has no OSU twin: a ring of grouped sends and
/// receives on one process with no launcher (the rank sends to itself) and
/// on three ranks. Every row as nccl-tests prints sendrecv's (the op it was
/// given, root -1, busbw equal to algbw, the in-place result `N/A`); the
/// CSV and record name the benchmark; a received block the stand-in
/// corrupts is counted and fails the run with status 7. Three launches of
/// about a second each.
#[test]
fn sendrecv_perf_passes_each_block_to_the_next_rank() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let args = ["-b", "8", "-e", "1M", "-f", "8", "-n", "3", "-w", "1"];
    for np in [None, Some(3)] {
        let dir = tempfile::tempdir().unwrap();
        let r = perf(&gpu, np, "sendrecv_perf", &args, &[], dir.path());
        assert_eq!(r.code, Some(0), "{np:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("# Collective test starting: sendrecv_perf\n"), "{}", r.stdout);
        let devices = r.stdout.lines().filter(|l| l.starts_with("#  Rank ")).count();
        assert_eq!(devices, np.unwrap_or(1), "{}", r.stdout);
        let table = nccl_tests_rows(&r.stdout);
        let sizes: Vec<String> = [8u64, 64, 512, 4096, 32768, 262144].iter().map(u64::to_string).collect();
        assert_eq!(table.iter().map(|t| t[0].clone()).collect::<Vec<_>>(), sizes, "{}", r.stdout);
        for t in &table {
            let count = (t[0].parse::<u64>().unwrap() / 4).to_string();
            assert_eq!([&t[1], &t[2], &t[3], &t[4]], [&count, "float", "sum", "-1"], "{}", r.stdout);
            assert_eq!((&t[6], &t[8]), (&t[7], &"0".to_string()), "out of place: {}", r.stdout);
            assert_eq!((&t[10], &t[12]), (&t[11], &"N/A".to_string()), "in place: {}", r.stdout);
        }
        assert!(r.stdout.contains("# Out of bounds values : 0 OK\n"), "{}", r.stdout);
        let (record, csv) = run_results(dir.path());
        assert_eq!(record["status"], "complete", "{record}");
        assert!(csv.iter().all(|row| row["benchmark"] == "sendrecv"), "{csv:?}");
        let out_of_place = csv.iter().filter(|row| row["placement"] == "out-of-place").count();
        assert_eq!(out_of_place, sizes.len(), "{csv:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, Some(3), "sendrecv_perf", &args, &[("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")], dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    r.assert_no_panic();
    let table = nccl_tests_rows(&r.stdout);
    assert!(!table.is_empty() && table.iter().all(|t| t[8] != "0" && t[12] == "N/A"), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("# Out of bounds values : {} FAILED\n", table.len())), "{}", r.stdout);
    let said = r.our_stderr_lines();
    assert!(said.iter().any(|l| l.starts_with("sendrecv_perf: validation failed on rank 1: ")), "{said:?}");
}

/// hypercube_perf, which has no OSU twin: an allgather by hypercube
/// exchanges, on four GPUs of one process with no launcher and on two
/// processes of two GPUs. Each row as nccl-tests prints hypercube's (the
/// size of the gathered buffer, one rank's count, an empty redop column,
/// root -1, busbw equal to algbw, both cells checked), algbw counting the
/// three blocks that came over links; three ranks, not a power of two,
/// print nccl-tests' line instead of rows and exit 0; a block the stand-in
/// corrupts is counted and fails the run with status 7. Four launches of
/// about a second each.
#[test]
fn hypercube_perf_gathers_by_hypercube_exchanges() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let args = ["-b", "1K", "-e", "64K", "-f", "8", "-n", "3", "-w", "1"];
    for (np, gpus) in [(None, "4"), (Some(2), "2")] {
        let dir = tempfile::tempdir().unwrap();
        let with: Vec<&str> = args.iter().copied().chain(["-g", gpus]).collect();
        let r = perf(&gpu, np, "hypercube_perf", &with, &[], dir.path());
        assert_eq!(r.code, Some(0), "{np:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("# Collective test starting: hypercube_perf\n"), "{}", r.stdout);
        let rows: Vec<&str> =
            r.stdout.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).collect();
        assert_eq!(rows.len(), 3, "{}", r.stdout);
        for (row, size) in rows.iter().zip([1024u64, 8192, 65536]) {
            // nccl-tests' "%12li  %12li  %8s  %6s  %6i" with an empty op.
            let labels = format!("{size:>12}  {:>12}  {:>8}  {:>6}  {:>6}", size / 4 / 4, "float", "", -1);
            assert_eq!(row[..52], labels, "{row:?}");
            let cells: Vec<&str> = row[52..].split_whitespace().collect();
            assert_eq!(cells.len(), 8, "{row:?}");
            assert_eq!((cells[1], cells[3]), (cells[2], "0"), "out of place: {row:?}");
            assert_eq!((cells[5], cells[7]), (cells[6], "0"), "in place: {row:?}");
            // algbw: the three other ranks' blocks over the time.
            let (time_us, algbw): (f64, f64) = (cells[0].parse().unwrap(), cells[1].parse().unwrap());
            let want = (size / 4 * 3) as f64 / 1e3 / time_us;
            assert!((algbw - want).abs() <= 0.005 + want * 0.01, "{algbw} vs {want}: {row:?}");
        }
        let (record, csv) = run_results(dir.path());
        assert_eq!(record["status"], "complete", "{record}");
        assert!(csv.iter().all(|row| row["benchmark"] == "hypercube"), "{csv:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, Some(3), "hypercube_perf", &args, &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let after_header = r.stdout.lines().skip_while(|l| !l.starts_with("#        (B)")).nth(1);
    assert_eq!(after_header, Some("nRanks 3 is not a power of 2, skipping"), "{}", r.stdout);
    assert!(r.stdout.contains("# Out of bounds values : 0 OK\n"), "{}", r.stdout);
    let dir = tempfile::tempdir().unwrap();
    let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
    let r = perf(&gpu, Some(2), "hypercube_perf", &args, &corrupt, dir.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    r.assert_no_panic();
    assert!(r.stdout.contains("# Out of bounds values : ") && r.stdout.contains(" FAILED\n"), "{}", r.stdout);
}

/// The labels of nccl-tests' rows (size, count, type, redop, root) and
/// each cell's four columns.
fn row_parts(row: &str) -> (String, Vec<String>) {
    (row[..52].to_string(), row[52..].split_whitespace().map(String::from).collect())
}

/// alltoallv_perf, which has no OSU twin: each rank sends each peer the
/// bytes nccl-tests' pattern gives the pair. Generated (four GPUs of one
/// process, no launcher): the count column is one peer's even share in
/// 16-byte units and the size column the busiest rank's side, here by
/// hand for 1K, 8K and 64K on 4 ranks at spread 1 (rank 0 sends 0, 1/6,
/// 2/6 and 3/6 of its total, each rounded down to 16 bytes); spread 0.5
/// on three processes in half precision; out-of-place cells checked,
/// in-place ones `N/A` as nccl-tests leaves them; algbw = size / time.
/// A matrix file on two processes of two GPUs, with its summary lines
/// inside the row where nccl-tests prints them. What nccl-tests refuses,
/// in its words and with its status 1; a block the stand-in corrupts
/// fails the run with status 7. Eight launches of about a second each.
#[test]
fn alltoallv_perf_moves_each_pair_s_share_of_its_pattern() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let args = ["-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1"];
    let data_rows = |out: &str| -> Vec<String> {
        out.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).map(String::from).collect()
    };
    for (np, gpus, dt, spread, want) in [
        (None, "4", "float", None, [(1008u64, 64u64), (8176, 512), (65520, 4096)]),
        // 512 halves over 3 ranks: 170, 168 in 16-byte units; 1008 bytes
        // in all; rank 0 sends 0.5 * 336 + 0.5 * (0, 336, 672), rounded.
        (Some(3), "1", "half", Some("0.5"), [(992, 168), (8160, 1360), (65504, 10920)]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let with: Vec<&str> = args.iter().copied().chain(["-g", gpus, "-d", dt]).collect();
        let extra: Vec<(&str, &str)> = spread.map(|s| ("NCCL_TESTS_ALLTOALLV_SPREAD", s)).into_iter().collect();
        let r = perf(&gpu, np, "alltoallv_perf", &with, &extra, dir.path());
        assert_eq!(r.code, Some(0), "{np:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
        assert!(r.stdout.contains("# Collective test starting: alltoallv_perf\n"), "{}", r.stdout);
        let rows = data_rows(&r.stdout);
        assert_eq!(rows.len(), 3, "{}", r.stdout);
        for (row, (size, count)) in rows.iter().zip(want) {
            let (labels, cells) = row_parts(row);
            assert_eq!(labels, format!("{size:>12}  {count:>12}  {dt:>8}  {:>6}  {:>6}", "none", -1), "{row:?}");
            assert_eq!(cells.len(), 8, "{row:?}");
            assert_eq!((cells[3].as_str(), cells[7].as_str()), ("0", "N/A"), "{row:?}");
            let (time_us, algbw): (f64, f64) = (cells[0].parse().unwrap(), cells[1].parse().unwrap());
            let want = size as f64 / 1e3 / time_us;
            assert!((algbw - want).abs() <= 0.005 + want * 0.01, "{algbw} vs {want}: {row:?}");
        }
        let (record, csv) = run_results(dir.path());
        assert_eq!(record["status"], "complete", "{record}");
        let traffic = &record["options"]["traffic"];
        assert_eq!(traffic["mode"], "generated", "{record}");
        assert_eq!(traffic["spread"], spread.map_or(1.0, |s| s.parse().unwrap()), "{record}");
        assert!(csv.iter().all(|row| row["benchmark"] == "alltoallv_traffic"), "{csv:?}");
    }

    // A 4 x 4 matrix on 2 x 2 GPUs: rank 1 sends the most (48 + 96 + 64 +
    // 4000 bytes), the count column is 0, and each cell is preceded by the
    // pattern's line and one line per rank.
    let dir = tempfile::tempdir().unwrap();
    let matrix = dir.path().join("m.txt");
    std::fs::write(&matrix, "100 200 150 0\n50 100 75 4000\n300 150 200 10\n1 2 3 4\n").unwrap();
    let m = matrix.to_str().unwrap();
    let with_matrix = [("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m), ("NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY", "1")];
    let r = perf(
        &gpu,
        Some(2),
        "alltoallv_perf",
        &["-b", "8K", "-e", "8K", "-g", "2", "-n", "2"],
        &with_matrix,
        dir.path(),
    );
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let summary = |t: &str| {
        format!(
            "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=matrix nranks=4 matrix_dim=4 scale=9.9 time_usec=9.9\n\
             #   rank=9 send_bytes=9 recv_bytes=9 alg_bw=9.9 bus_bw=9.9\n\
             #   rank=9 send_bytes=9 recv_bytes=9 alg_bw=9.9 bus_bw=9.9\n\
             #   rank=9 send_bytes=9 recv_bytes=9 alg_bw=9.9 bus_bw=9.9\n\
             #   rank=9 send_bytes=9 recv_bytes=9 alg_bw=9.9 bus_bw=9.9\n{t}"
        )
    };
    let body = masked(r.stdout.split("#        (B)").nth(1).unwrap().split_once('\n').unwrap().1);
    let want = format!(
        "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n",
        9,
        9,
        "float",
        "none",
        "-9",
        summary(&format!("  {:>7}  {:>6}  {:>6}  {:>6}", "9.9", "9.9", "9.9", "9")),
        summary(&format!("  {:>7}  {:>6}  {:>6}  {:>6}", "9.9", "9.9", "9.9", "N/A")),
    );
    // Masking shortens numbers, so the layout compares word by word on
    // each line (the exact widths: the labels' line below).
    fn words(t: &str) -> Vec<Vec<&str>> {
        t.lines().map(|l| l.split_whitespace().collect()).collect()
    }
    let masked_want = masked(&want);
    let (got, wanted) = (words(&body), words(&masked_want));
    assert_eq!(got[..wanted.len()], wanted[..], "{body}\nwanted\n{want}");
    assert!(r.stdout.contains("\n        4208             0     float    none      -1# NCCL_TESTS"), "{}", r.stdout);
    assert!(r.stdout.contains("\n#   rank=1 send_bytes=4208 recv_bytes=432 alg_bw="), "{}", r.stdout);
    assert!(r.stdout.contains("\n#   rank=3 send_bytes=0 recv_bytes=4000 alg_bw="), "{}", r.stdout);
    let (record, _) = run_results(dir.path());
    assert_eq!(record["options"]["traffic"]["mode"], "matrix", "{record}");
    assert_eq!(record["options"]["traffic"]["file"], m, "{record}");

    // What nccl-tests refuses: on stdout in its words before anything
    // starts, or once the ranks are known; status 1 either way.
    let ragged = dir.path().join("ragged.txt");
    std::fs::write(&ragged, "1 2\n3\n").unwrap();
    let g = ragged.to_str().unwrap();
    for (args, file, np, line) in [
        (&["-b", "1K", "-e", "8K"][..], m, Some(2), "-b and -e options must be set to the same value (e.g., -b 32M -e 32M) when using alltoallv traffic matrix mode.".to_string()),
        (&["-b", "8K", "-e", "8K"], g, None, format!("Invalid alltoallv traffic matrix column count in file {g} row 1. Expected 2 columns, got 1.")),
        (&["-b", "4K", "-e", "4K", "-g", "4"], m, None, format!("maxBytes (-e) must be at least 4208 bytes as required by traffic matrix file {m} (got 4096). Increase -e.")),
        (&["-b", "8K", "-e", "8K", "-g", "4"], g, None, format!("Invalid alltoallv traffic matrix column count in file {g} row 1. Expected 2 columns, got 1.")),
    ] {
        let d = tempfile::tempdir().unwrap();
        let r = perf(&gpu, np, "alltoallv_perf", args, &[("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", file)], d.path());
        assert_eq!(r.code, Some(1), "{args:?}: {}\n{}", r.stdout, r.stderr);
        r.assert_no_panic();
        let said = format!("{}{}", r.stdout, r.stderr);
        assert!(said.contains(&line), "{args:?}: {said}");
    }
    let d = tempfile::tempdir().unwrap();
    let r = perf(
        &gpu,
        None,
        "alltoallv_perf",
        &["-b", "8K", "-e", "8K", "-g", "8"],
        &[("NCCL_TESTS_ALLTOALLV_MATRIX_FILE", m)],
        d.path(),
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "Invalid alltoallv traffic matrix, requested nranks (8) is larger than matrix size (4) in file {m}."
        )),
        "{}",
        r.stderr
    );

    let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
    let r = perf(&gpu, Some(2), "alltoallv_perf", &args, &corrupt, d.path());
    assert_eq!(r.code, Some(7), "{}\n{}", r.stdout, r.stderr);
    r.assert_no_panic();
    assert!(r.stdout.contains("# Out of bounds values : ") && r.stdout.contains(" FAILED\n"), "{}", r.stdout);
}

/// `NCCL_TESTS_DEVICE` names every process's GPU, as in nccl-tests: the
/// device line shows it; two processes on it fail as NCCL fails two ranks
/// on one GPU; a negative number is refused in one line with nccl-tests'
/// status for a CUDA failure (2).
#[test]
fn nccl_tests_device_names_every_process_gpu() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let quick = ["-b", "1K", "-e", "1K", "-n", "2", "-w", "1"];
    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, None, "all_reduce_perf", &quick, &[("NCCL_TESTS_DEVICE", "3")], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let device = r.stdout.lines().find(|l| l.starts_with("#  Rank  0 ")).unwrap_or_default();
    assert!(device.contains(" device  3 ["), "{device}");
    let (record, _) = run_results(dir.path());
    assert_eq!(record["options"]["placement"]["gpu"], serde_json::json!([3]), "{record}");

    let dir = tempfile::tempdir().unwrap();
    let r = perf(&gpu, Some(2), "all_reduce_perf", &quick, &[("NCCL_TESTS_DEVICE", "3")], dir.path());
    assert_ne!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    r.assert_no_panic();
    assert!(r.stderr.contains("duplicate GPU"), "{}", r.stderr);

    let r = perf(&gpu, None, "all_reduce_perf", &quick, &[("NCCL_TESTS_DEVICE", "-4")], dir.path());
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "all_reduce_perf: NCCL_TESTS_DEVICE=-4 names no CUDA device\n");
}

/// nccl-tests' memory rule on GPUs of 2.25 GiB (the stand-in's dgx1 with
/// its memory lowered): the largest size the buffers fit, (2.25 - 1 - 1)
/// GiB over three buffers with the check (89478485 bytes) and two without
/// (134217728), lowers the sweep; the preamble keeps the maxBytes asked
/// for and the `# Reducing maxBytes` lines follow the devices, as in
/// nccl-tests; the CSV has the sizes that ran. About 8 s: the stand-in's
/// GPU buffers are host pages, written and checked through the host at
/// sizes up to 128 MiB, in two launches.
#[test]
fn gpus_too_small_for_the_sweep_lower_it_as_nccl_tests_does() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&gpu.config).unwrap();
    assert!(text.contains("memory_bytes=17179869184"), "{text}");
    let small = dir.path().join("small.conf");
    std::fs::write(&small, text.replace("memory_bytes=17179869184", "memory_bytes=2415919104")).unwrap();
    let machine = [("COMMBENCH_STANDIN_MACHINE", small.to_str().unwrap())];
    let args = ["-b", "16M", "-e", "1G", "-f", "2", "-n", "1", "-w", "0"];
    let r = perf(&gpu, Some(2), "all_reduce_perf", &args, &machine, dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.our_stderr_lines(), Vec::<String>::new());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[2].contains(" minBytes 16777216 maxBytes 1073741824 "), "{}", lines[2]);
    let last_device = lines.iter().rposition(|l| l.starts_with("#  Rank ")).expect("device lines");
    assert_eq!(
        lines[last_device + 1..last_device + 4],
        ["#", "# Reducing maxBytes to 89478485 due to memory limitation", "#"],
        "{}",
        r.stdout
    );
    let sizes: Vec<u64> = rows(&r.stdout).iter().map(|r| r.0).collect();
    assert_eq!(sizes, [16 << 20, 32 << 20, 64 << 20], "{}", r.stdout);
    let (record, csv) = run_results(dir.path());
    let csv_sizes: std::collections::BTreeSet<u64> = csv.iter().map(|r| r["size_bytes"].parse().unwrap()).collect();
    assert_eq!(csv_sizes.into_iter().collect::<Vec<_>>(), sizes);
    // Two buffers of the largest size on the GPU, none in host memory.
    let memory = &record["plan"]["memory"];
    assert_eq!(memory["gpu_buffers"], 2 * (64 << 20), "{record}");
    assert_eq!((memory["buffers"].as_u64(), memory["mpi_temporaries"].as_u64()), (Some(0), Some(0)), "{record}");

    // Unchecked, on one process with no launcher: two buffers' worth.
    let dir = tempfile::tempdir().unwrap();
    let args = ["-b", "16M", "-e", "1G", "-f", "2", "-n", "1", "-w", "0", "-c", "0"];
    let r = perf(&gpu, None, "all_reduce_perf", &args, &machine, dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("\n#\n# Reducing maxBytes to 134217728 due to memory limitation\n#\n"), "{}", r.stdout);
    let sizes: Vec<u64> = rows(&r.stdout).iter().map(|r| r.0).collect();
    assert_eq!(sizes, [16 << 20, 32 << 20, 64 << 20, 128 << 20], "{}", r.stdout);
}

/// commbench's own long options in a `*_perf` binary: `--dry-run` plans
/// nccl-tests' sweep to 16G (the program's name, nccl-tests' sizes and
/// type, one rank's host and GPU memory and the GPU memory nccl-tests'
/// rule needs) and starts nothing; `--csv` and `--no-results` choose the
/// files; a bad value is one line and nccl-tests' status for bad values;
/// an abbreviation of ours is nobody's, as in nccl-tests.
#[test]
fn a_perf_binary_takes_commbench_s_own_options_whole() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let args = ["-b", "8", "-e", "16G", "-f", "2", "--dry-run=64"];
    let r = perf(&gpu, None, "all_reduce_perf", &args, &[], dir.path());
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""), "{}", r.stdout);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "# all_reduce_perf dry run on 64 ranks: nothing is started or sent");
    let sizes: Vec<&str> =
        lines.iter().filter(|l| l.starts_with("float ")).map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    assert_eq!(sizes.len(), 32, "{}", r.stdout);
    assert_eq!((sizes[0], sizes[31]), ("8", "17179869184"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "# GPU memory of one rank: 32.0 GiB of message buffers (NCCL's own buffers not counted); on GPUs of \
             less than 53.0 GiB the largest size is lowered, as nccl-tests does"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("# memory of one rank: 16.0 GiB beyond the process (staging of the GPU buffers"));
    assert!(!dir.path().join("res").exists(), "a dry run wrote results");

    // alltoall_perf's size column is the whole buffer, as nccl-tests'.
    let r = perf(&gpu, None, "alltoall_perf", &["-b", "1M", "-e", "1M", "--dry-run=8"], &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.lines().any(|l| l.split_whitespace().take(2).eq(["float", "1048576"])), "{}", r.stdout);

    let r = perf(&gpu, Some(2), "all_reduce_perf", &["-b", "1K", "-e", "1K", "--csv", "x.csv"], &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(dir.path().join("x.csv").is_file() && dir.path().join("x.json").is_file());
    let quiet = tempfile::tempdir().unwrap();
    let r = perf(&gpu, None, "all_reduce_perf", &["-b", "1K", "-e", "1K", "--no-results"], &[], quiet.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read_dir(quiet.path()).unwrap().count(), 0, "--no-results wrote something");

    let r = perf(&gpu, Some(2), "all_reduce_perf", &["--min-efficiency", "0"], &[], dir.path());
    assert_eq!(r.code, Some(255), "{}\n{}", r.stdout, r.stderr);
    let lines = r.our_stderr_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l.starts_with("all_reduce_perf: Invalid value [--min-efficiency 0] (")), "{lines:?}");
    // nccl-tests' getopt: the unknown word on stderr, its usage on stdout,
    // status 0.
    let r = perf(&gpu, None, "all_reduce_perf", &["--dry"], &[], dir.path());
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("unrecognized option '--dry'"), "{}", r.stderr);
    assert!(r.stdout.starts_with("invalid option '?'\nUSAGE: all_reduce_perf"), "{}", r.stdout);
}
