//! The end of a run without a GPU: synthetic timings of two GPUs on two
//! NUMA nodes go through the matrices, the verdict, the files and the
//! heatmaps exactly as measured ones would.

use super::*;
use crate::cli::options::ResultsDest;
use results::Clock;

fn facts(index: usize, numa: usize) -> GpuFacts {
    GpuFacts {
        index,
        name: "GPU".into(),
        pci_bus_id: None,
        numa_node: Some(numa),
        package: None,
        memory_bytes: None,
        pci_path: Vec::new(),
    }
}

/// Every pair timing of GPUs 0 and 1: one way 10 (off) / 40 (on) GB/s
/// except 1 -> 0 with access at 20, both ways twice that, latency 10 /
/// 2 us, and 800 GB/s within each GPU.
fn timings() -> Vec<Measurement> {
    let shape = |dirs| (1_000_000_000, 1, dirs);
    let mut ms = Vec::new();
    for g in 0..2 {
        let bw = |kind, dirs: u32| {
            let secs = 2.0 * dirs as f64 / 800.0;
            Measurement::bandwidth(kind, Some(g), Some(g), None, None, shape(dirs), secs, Clock::GpuEvents)
        };
        ms.push(bw(Kind::P2pUni, 1));
        ms.push(bw(Kind::P2pBidir, 2));
        ms.push(Measurement::latency(g, g, None, 16, 100, 100e-6));
    }
    for (s, d) in [(0, 1), (1, 0)] {
        for peer in [false, true] {
            let one = match (peer, s) {
                (false, _) => 10.0,
                (true, 0) => 40.0,
                (true, _) => 20.0,
            };
            let p = Some(peer);
            ms.push(Measurement::bandwidth(
                Kind::P2pUni,
                Some(s),
                Some(d),
                None,
                p,
                shape(1),
                1.0 / one,
                Clock::GpuEvents,
            ));
            ms.push(Measurement::bandwidth(
                Kind::P2pBidir,
                Some(s),
                Some(d),
                None,
                p,
                shape(2),
                1.0 / one,
                Clock::GpuEvents,
            ));
            let lat = if peer { 200e-6 } else { 1000e-6 };
            ms.push(Measurement::latency(s, d, p, 16, 100, lat));
        }
    }
    ms
}

fn config(min_bw: Option<f64>) -> Config {
    Config {
        tests: vec![Test::P2p, Test::Latency],
        gpus: None,
        host_bytes: 32_000_000,
        host_reps: 100,
        peer_bytes: 1_000_000_000,
        peer_reps: 1,
        latency_bytes: 16,
        latency_reps: 100,
        min_bw,
        min_efficiency: None,
        results: ResultsDest::Off,
        machine: None,
    }
}

#[test]
fn every_matrix_becomes_a_csv_and_a_heatmap() {
    let d = tempfile::tempdir().unwrap();
    let mut f =
        GpuBwFiles::create(&ResultsDest::Dir(d.path().to_path_buf()), "20260101T000000Z", None).unwrap().unwrap();
    let ms = timings();
    f.append(&ms).unwrap();
    let gpus = [facts(0, 0), facts(1, 1)];
    write_matrices(&mut f, &config(Some(30e9)), &gpus, 2, &ms).unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let stem = "20260101T000000Z_gpu-bw";
    let mut want = vec![format!("{stem}.csv"), format!("{stem}.json")];
    for id in MatrixId::ALL {
        want.push(format!("{stem}_{}.csv", id.file_kind()));
        want.push(format!("{stem}_{}.svg", id.file_kind()));
    }
    want.sort();
    assert_eq!(names, want);
    assert_eq!(f.written.len(), 14);

    let read = |kind: &str, ext: &str| std::fs::read_to_string(d.path().join(format!("{stem}_{kind}.{ext}"))).unwrap();
    assert_eq!(read("uni_p2p_on_GBps", "csv"), "src\\dst (GB/s),0,1\n0,800.00,40.00\n1,20.00,800.00\n");
    assert_eq!(read("bidir_p2p_off_GBps", "csv"), "src\\dst (GB/s),0,1\n0,800.00,20.00\n1,20.00,800.00\n");
    assert_eq!(read("lat_p2p_on_us", "csv"), "src\\dst (us),0,1\n0,1.00,2.00\n1,2.00,1.00\n");
    // Only the one-way P2P=Enabled heatmap is judged: 1 -> 0 is below 30.
    let on = read("uni_p2p_on_GBps", "svg");
    assert_eq!(on.matches(r#"stroke="black""#).count(), 1, "{on}");
    assert!(on.contains("1 -&gt; 0: 20.00 GB/s"));
    assert_eq!(read("uni_p2p_off_GBps", "svg").matches(r#"stroke="black""#).count(), 0);
    // GPUs on different NUMA nodes: one pair of boundary lines.
    assert_eq!(on.matches("<line").count(), 2);
    // Latency: lower is better, so the faster peer-on copy is the best colour.
    assert!(read("lat_p2p_on_us", "svg").contains("Latency, P2P=Enabled (us per copy, GPU time)"));
}

#[test]
fn the_verdict_reads_the_peer_matrix() {
    let ms = timings();
    let fail = report::judge(30e9, &[0, 1], &ms, 2);
    assert_eq!(fail.failing, vec![report::Shortfall { src: 1, dst: 0, gbps: Some(20.0) }]);
    assert!(report::judge(15e9, &[0, 1], &ms, 2).passed());
    let text = report::pair_section(&config(None), 2, &[0, 1], &ms);
    assert_eq!(text.matches("   D\\D     0      1 \n").count(), 6, "{text}");
    assert!(
        text.contains("Latency, P2P=Disabled (us per copy, GPU time)\n   D\\D     0      1 \n     0   1.00  10.00 \n")
    );
}
