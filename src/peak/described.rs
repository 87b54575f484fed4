//! The peak arithmetic on the machines described in tests/machines: each
//! rank's end built from a described node (the NIC placement would give
//! it), then the paths a benchmark's traffic takes between two such nodes.

use std::path::Path;

use super::link::nic_link;
use super::path::{collective, pair_class, traffic, PathClass, RankEnd};
use crate::topo::describe;
use crate::topo::machine::Machine;

fn machine(file: &str, host: &str) -> Machine {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/machines").join(file);
    Machine { hostname: host.into(), ..describe::load(&path).unwrap() }
}

/// A rank on `m` leaving by `nic` (placement's choice) or the node's own.
fn end(m: &Machine, nic: Option<&str>) -> RankEnd {
    let (nic, nic_unknown) = match nic_link(m, nic, Path::new("/nonexistent")) {
        Ok(l) => (Some(l), None),
        Err(e) => (None, Some(e)),
    };
    RankEnd { host: m.hostname.clone(), nic, nic_unknown, ..RankEnd::default() }
}

#[test]
fn epyc_hdr_pairs_share_their_one_adapter() {
    let (a, b) = (machine("epyc-hdr.json", "n1"), machine("epyc-hdr.json", "n2"));
    // osu_bw across the two nodes: HDR's 200 Gb/s, 25 GB/s.
    let ends = [end(&a, None), end(&b, None)];
    let (_, run) = traffic(&[(0, 1)], false, &ends);
    assert_eq!(
        (run.label.as_str(), run.peak_mbps, run.rate_text.as_str()),
        ("n1 mlx5_2:1 -> n2 mlx5_2:1", Some(25_000.0), "200 Gb/s")
    );
    // osu_bibw: both directions at once.
    assert_eq!(traffic(&[(0, 1)], true, &ends).1.peak_mbps, Some(50_000.0));
    // osu_mbw_mr with 16 ranks per node: 16 pairs through one adapter each side.
    let mut ends: Vec<RankEnd> = (0..16).map(|_| end(&a, None)).collect();
    ends.extend((0..16).map(|_| end(&b, None)));
    let edges: Vec<(usize, usize)> = (0..16).map(|i| (i, i + 16)).collect();
    let (each, run) = traffic(&edges, false, &ends);
    assert_eq!((each.len(), run.peak_mbps), (16, Some(25_000.0)));
    // A collective over both nodes: the adapter, not shared memory (no
    // copy rate measured here makes that unknown, and says so).
    let p = collective(&ends);
    assert_eq!(p.class, PathClass::SharedMemory);
    assert_eq!(p.peak_mbps, None);
}

#[test]
fn two_rails_carry_twice_one() {
    let (a, b) = (machine("two-rail.json", "n1"), machine("two-rail.json", "n2"));
    // Without a choice the node has two rails up: unknown, and why.
    let e = end(&a, None);
    assert_eq!(
        e.nic_unknown.as_deref(),
        Some("2 devices of n1 are up (mlx5_0, mlx5_1) and none was chosen: name one with --nic")
    );
    // --bind nic: local rank 0 on rail 0, local rank 1 on rail 1.
    let ends =
        [end(&a, Some("mlx5_0:1")), end(&a, Some("mlx5_1:1")), end(&b, Some("mlx5_0:1")), end(&b, Some("mlx5_1:1"))];
    let (each, run) = traffic(&[(0, 2), (1, 3)], false, &ends);
    assert_eq!(each.iter().map(|p| p.peak_mbps).collect::<Vec<_>>(), [Some(25_000.0), Some(25_000.0)]);
    assert_eq!((run.peak_mbps, run.label.as_str()), (Some(50_000.0), "2 pairs over 2 paths"));
    assert_eq!(pair_class(&ends[1], &ends[3]), "rail mlx5_1:1");
    // Both ranks on one rail: the rail caps the pair sum at one link.
    let crowded =
        [end(&a, Some("mlx5_0:1")), end(&a, Some("mlx5_0:1")), end(&b, Some("mlx5_0:1")), end(&b, Some("mlx5_0:1"))];
    assert_eq!(traffic(&[(0, 2), (1, 3)], false, &crowded).1.peak_mbps, Some(25_000.0));
}

#[test]
fn dgx1_and_an_nvswitch_box_name_their_rail() {
    let (a, b) = (machine("dgx1.json", "d1"), machine("dgx1.json", "d2"));
    // Four EDR rails and no choice: unknown.
    let unknown = traffic(&[(0, 1)], false, &[end(&a, None), end(&b, None)]).1;
    assert!(unknown.unknown.as_deref().unwrap().contains("4 devices of d1 are up"), "{unknown:?}");
    let chosen = traffic(&[(0, 1)], false, &[end(&a, Some("mlx5_2:1")), end(&b, Some("mlx5_2:1"))]).1;
    assert_eq!((chosen.peak_mbps, chosen.rate_text.as_str()), (Some(12_500.0), "100 Gb/s"));
    // DGX-H100: eight 400G rails, one per GPU; a collective with every
    // rank on its own rail is bound by one of them.
    let (a, b) = (machine("dgx-h100.json", "h1"), machine("dgx-h100.json", "h2"));
    let rails: Vec<String> =
        a.nics.iter().filter(|n| n.best_rate() == 400.0).map(|n| format!("{}:1", n.name)).collect();
    assert_eq!(rails.len(), 8);
    // Each rank's copy rate (faster than a rail here) as measured.
    let copy = super::copy_rate::CopyRate { mbps: 100_000.0, bytes: 1 << 22, copies: 5, method: "memcpy".into() };
    let ends: Vec<RankEnd> = [&a, &b]
        .iter()
        .flat_map(|m| rails.iter().map(|r| RankEnd { copy: Some(copy.clone()), ..end(m, Some(r)) }).collect::<Vec<_>>())
        .collect();
    let p = collective(&ends);
    assert_eq!((p.class, p.peak_mbps, p.rate_text.as_str()), (PathClass::Network, Some(50_000.0), "400 Gb/s"));
    assert_eq!(p.how, "the slowest of the 32 links the ranks' traffic crosses");
}
