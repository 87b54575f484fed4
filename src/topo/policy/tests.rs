//! The policy over described machines (tests/machines/*.json).

use super::*;
use crate::topo::describe;

fn machine(name: &str) -> Machine {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/machines").join(name);
    describe::load(&path).unwrap()
}

fn request(args: &[(&str, &str)]) -> PlacementRequest {
    let mut r = PlacementRequest::default();
    for (o, v) in args {
        r.set(o, v).unwrap();
    }
    r.check().unwrap();
    r
}

/// (cpus, nic, gpu) of every local rank, as text.
fn triples(m: &Machine, ranks: usize, args: &[(&str, &str)]) -> Vec<(String, String, String)> {
    plan(m, ranks, &request(args))
        .unwrap()
        .into_iter()
        .map(|p| {
            (
                p.cpus.map(|c| format_list(&c)).unwrap_or_else(|| "-".into()),
                p.nic.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                p.gpu.map(|g| g.to_string()).unwrap_or_else(|| "-".into()),
            )
        })
        .collect()
}

fn t(c: &str, n: &str, g: &str) -> (String, String, String) {
    (c.into(), n.into(), g.into())
}

fn err(m: &Machine, ranks: usize, args: &[(&str, &str)]) -> String {
    plan(m, ranks, &request(args)).unwrap_err().to_string()
}

#[test]
fn epyc_nic_policy_picks_the_hdr_port_and_its_numa_node() {
    let m = machine("epyc-hdr.json");
    // One rank per node, as in the tuning guide: core 80, first of NUMA 5.
    assert_eq!(triples(&m, 1, &[("bind", "nic")]), vec![t("80", "mlx5_2:1", "-")]);
    // Ranks fill the adapter's NUMA node in order, then its package.
    let p = triples(&m, 18, &[("bind", "nic")]);
    let cpus: Vec<&str> = p.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(cpus[..3], ["80", "81", "82"]);
    assert_eq!(cpus[15], "95");
    assert_eq!(cpus[16..], ["64", "65"]);
    let notes = plan(&m, 18, &request(&[("bind", "nic")])).unwrap()[17].notes.clone();
    assert_eq!(notes, vec!["its cpus are not local to mlx5_2: the local cpus 80-95 are taken by other ranks"]);
    assert!(p.iter().all(|x| x.1 == "mlx5_2:1"));
    // Naming the adapter alone implies the nic policy.
    assert_eq!(triples(&m, 1, &[("nic", "mlx5_2")]), vec![t("80", "mlx5_2:1", "-")]);
}

#[test]
fn epyc_seed_command_line_is_reproduced() {
    let m = machine("epyc-hdr.json");
    let p = plan(&m, 1, &request(&[("cpu-list", "80"), ("nic", "mlx5_2:1")])).unwrap();
    assert_eq!(p[0].cpus, Some(vec![80]));
    assert_eq!(p[0].nic.as_ref().unwrap().to_string(), "mlx5_2:1");
    assert!(p[0].notes.is_empty(), "{:?}", p[0].notes);
    // A core on the other socket is allowed but noted.
    let p = plan(&m, 1, &request(&[("cpu-list", "3"), ("nic", "mlx5_2:1")])).unwrap();
    assert_eq!(p[0].notes, vec!["--cpu-list places it off mlx5_2's local cpus 80-95"]);
}

#[test]
fn epyc_core_policy_and_errors() {
    let m = machine("epyc-hdr.json");
    assert_eq!(triples(&m, 2, &[("bind", "core")]), vec![t("0", "-", "-"), t("1", "-", "-")]);
    assert_eq!(triples(&m, 2, &[]), vec![t("-", "-", "-"), t("-", "-", "-")]);
    assert_eq!(err(&m, 1, &[("bind", "gpu")]), "--bind gpu: epyc-hdr has no GPU that hwloc can see");
    // --gpu on a node where hwloc sees none is CUDA's number: kept, said,
    // and nothing placed near it.
    let p = plan(&m, 2, &request(&[("gpu", "1,0")])).unwrap();
    assert_eq!(p.iter().map(|p| p.gpu).collect::<Vec<_>>(), vec![Some(1), Some(0)]);
    assert!(p.iter().all(|p| p.nic.is_none()));
    assert!(p[0].notes.iter().any(|n| n.starts_with("hwloc sees no GPU on epyc-hdr: ")), "{:?}", p[0].notes);
    assert_eq!(
        err(&m, 1, &[("nic", "mlx5_9")]),
        "--nic mlx5_9: no such network device on epyc-hdr (found: eth0, mlx5_0, mlx5_1, mlx5_2)"
    );
    assert_eq!(err(&m, 1, &[("nic", "mlx5_2:2")]), "--nic mlx5_2:2: mlx5_2 has no port 2 on epyc-hdr (ports: 1)");
    assert_eq!(
        err(&m, 1, &[("cpu-list", "200")]),
        "--cpu-list 200: cpu 200 does not exist on epyc-hdr (it has cpus 0-127)"
    );
    assert_eq!(
        err(&m, 2, &[("cpu-list", "80")]),
        "--cpu-list 80 names 1 cpu(s) but 2 ranks run on epyc-hdr: give one cpu per rank"
    );
    // The interface name of a verbs device is accepted and means the device.
    assert_eq!(triples(&m, 1, &[("nic", "ib0"), ("bind", "none")]), vec![t("-", "mlx5_2:1", "-")]);
}

#[test]
fn never_binds_outside_the_allowed_set() {
    let mut m = machine("epyc-hdr.json");
    // A cgroup that gives this job the first socket only.
    m.allowed_cpus = (0..64).collect();
    let p = plan(&m, 2, &request(&[("bind", "nic")])).unwrap();
    assert_eq!(p[0].cpus, Some(vec![0]));
    assert_eq!(p[1].cpus, Some(vec![1]));
    assert_eq!(p[0].notes, vec!["none of mlx5_2's local cpus 80-95 is allowed for this rank"]);
    assert!(err(&m, 1, &[("cpu-list", "80")]).starts_with(
        "--cpu-list 80: cpu 80 is outside the cpus this rank may use on epyc-hdr (0-63, set by the launcher or cgroup)"
    ));
    // The launcher bound this rank to core 85 alone (its share of the node):
    // it stays inside its share whatever its local rank.
    m.allowed_cpus = vec![85];
    assert_eq!(place(&m, 1, 2, &request(&[("bind", "nic")])).unwrap().cpus, Some(vec![85]));
    assert_eq!(place(&m, 1, 2, &request(&[("bind", "core")])).unwrap().cpus, Some(vec![85]));
}

#[test]
fn more_ranks_than_allowed_cores_wrap_and_say_so() {
    let mut m = machine("epyc-hdr.json");
    m.allowed_cpus = vec![0, 1];
    let p = plan(&m, 4, &request(&[("bind", "core")])).unwrap();
    let cpus: Vec<_> = p.iter().map(|x| x.cpus.clone().unwrap()).collect();
    assert_eq!(cpus, vec![vec![0], vec![1], vec![0], vec![1]]);
    assert_eq!(p[2].notes, vec!["4 ranks on this node but 2 cores allowed to this rank: ranks may share cores"]);
    // Exactly enough cores: no note.
    assert!(plan(&m, 2, &request(&[("bind", "core")])).unwrap().iter().all(|x| x.notes.is_empty()));
}

#[test]
fn dgx1_gpu_policy_triples() {
    let m = machine("dgx1.json");
    let expected = vec![
        t("0,40", "mlx5_0:1", "0"),
        t("1,41", "mlx5_0:1", "1"),
        t("2,42", "mlx5_1:1", "2"),
        t("3,43", "mlx5_1:1", "3"),
        t("20,60", "mlx5_2:1", "4"),
        t("21,61", "mlx5_2:1", "5"),
        t("22,62", "mlx5_3:1", "6"),
        t("23,63", "mlx5_3:1", "7"),
    ];
    assert_eq!(triples(&m, 8, &[("bind", "gpu")]), expected);
    // The GPU list alone implies the gpu policy; GPU 5 goes with mlx5_2.
    assert_eq!(triples(&m, 1, &[("gpu", "5")]), vec![t("20,60", "mlx5_2:1", "5")]);
    // nic policy: one adapter per rank, round robin, cores by each adapter.
    assert_eq!(
        triples(&m, 4, &[("bind", "nic")]),
        vec![
            t("0,40", "mlx5_0:1", "-"),
            t("1,41", "mlx5_1:1", "-"),
            t("20,60", "mlx5_2:1", "-"),
            t("21,61", "mlx5_3:1", "-")
        ]
    );
    assert_eq!(err(&m, 1, &[("gpu", "8")]), "--gpu 8: dgx1 has 8 GPU(s) (0-7)");
}

#[test]
fn dgx_h100_gpu_policy_triples() {
    let m = machine("dgx-h100.json");
    let p = triples(&m, 8, &[("bind", "gpu")]);
    for (i, (cpus, nic, gpu)) in p.iter().enumerate() {
        let core = if i < 4 { i } else { 56 + i - 4 };
        assert_eq!(cpus, &format!("{core},{}", core + 112), "rank {i}");
        assert_eq!(nic, &format!("mlx5_{i}:1"), "rank {i}");
        assert_eq!(gpu, &i.to_string());
    }
    // Two ranks per GPU share its adapter and take the next cores.
    let p = triples(&m, 16, &[("bind", "gpu")]);
    assert_eq!(p[8], t("4,116", "mlx5_0:1", "0"));
    assert_eq!(p[15], t("63,175", "mlx5_7:1", "7"));
    // nic policy keeps to the 400G InfiniBand adapters, not the storage RoCE.
    let p = triples(&m, 10, &[("bind", "nic")]);
    let nics: Vec<&str> = p.iter().map(|x| x.1.as_str()).collect();
    assert_eq!(
        nics,
        [
            "mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1", "mlx5_7:1", "mlx5_0:1",
            "mlx5_1:1"
        ]
    );
    // An explicit adapter overrides the GPU's nearest one.
    assert_eq!(triples(&m, 1, &[("gpu", "2"), ("nic", "mlx5_8")]), vec![t("0,112", "mlx5_8:1", "2")]);
}

#[test]
fn virtual_interfaces_only_when_nothing_else() {
    let mut m = machine("epyc-hdr.json");
    m.nics.retain(|n| n.name == "eth0");
    let mut bond = m.nics[0].clone();
    bond.name = "bond0".into();
    bond.pci_bus_id = None;
    bond.cpus.clear();
    bond.numa = None;
    bond.ports[0].rate_gbps = Some(100.0);
    m.nics.push(bond);
    assert_eq!(triples(&m, 1, &[("bind", "nic")]), vec![t("0", "eth0", "-")]);
    // Named explicitly, a virtual interface is fine; its cpus follow the
    // machine order since it has no locality.
    assert_eq!(triples(&m, 1, &[("nic", "bond0")]), vec![t("0", "bond0", "-")]);
    m.nics.retain(|n| n.name == "bond0");
    assert_eq!(triples(&m, 1, &[("bind", "nic")]), vec![t("0", "bond0", "-")]);
}
