//! What placement did, as reported: each rank's placement for the run
//! record, the summary table rank 0 prints on stderr, and the warnings
//! about misplacement, computed from every rank's record (pure functions).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cpuset::format_list;
use super::machine::NicKind;
use super::request::BindPolicy;

/// Where one rank ended up and why, beside its host, pid and cpus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankPlacement {
    /// The policy in force.
    pub policy: BindPolicy,
    pub bound_by: BoundBy,
    pub numa_nodes: Vec<usize>,
    /// Logical indexes of the cores the rank's cpus belong to.
    pub cores: Vec<usize>,
    pub node_cores: usize,
    pub node_cpus: usize,
    pub nic: Option<NicInfo>,
    pub gpu: Option<TopoGpu>,
    /// Transport variables commbench set, or found set by the user.
    pub env: Vec<EnvSetting>,
    /// Why a choice is not the ideal one.
    pub notes: Vec<String>,
    /// `hwloc 2.9.0`, or why the topology is unknown.
    pub topology: String,
}

impl Default for RankPlacement {
    /// Nothing placed and nothing known: policy `none`, `unbound`.
    fn default() -> RankPlacement {
        RankPlacement {
            policy: BindPolicy::None,
            bound_by: BoundBy::Unbound,
            numa_nodes: Vec::new(),
            cores: Vec::new(),
            node_cores: 0,
            node_cpus: 0,
            nic: None,
            gpu: None,
            env: Vec::new(),
            notes: Vec::new(),
            topology: String::new(),
        }
    }
}

/// Who decided the cpus a rank runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoundBy {
    /// commbench bound the rank (a policy or `--cpu-list`).
    Commbench,
    /// The rank runs on fewer cpus than the node has, so the launcher (or
    /// a cgroup) bound it.
    Launcher,
    /// The rank may run anywhere on the node.
    Unbound,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NicInfo {
    /// As given to the transport: `mlx5_2:1` or `eth0`.
    pub name: String,
    /// The device's kind as `NicKind::name` says it (`InfiniBand`, `RoCE`,
    /// `Ethernet`, `other`); `unknown` (None) when the node map does not
    /// have the device.
    #[serde(with = "nic_kind_name")]
    pub kind: Option<NicKind>,
    pub numa: Option<usize>,
    pub cpus: String,
    pub source: NicSource,
}

/// What chose a rank's NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NicSource {
    /// The binding policy.
    #[serde(rename = "policy")]
    Policy,
    /// The `--nic` list.
    #[serde(rename = "--nic")]
    NicOption,
    /// `UCX_NET_DEVICES` as the user set it (it decides what UCX uses).
    #[serde(rename = "UCX_NET_DEVICES (user)")]
    UserUcxNetDevices,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopoGpu {
    pub index: usize,
    pub pci_bus_id: String,
    pub name: Option<String>,
    pub numa: Option<usize>,
    pub source: GpuSource,
}

/// What chose a rank's GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GpuSource {
    /// The binding policy.
    #[serde(rename = "policy")]
    Policy,
    /// The `--gpu` list.
    #[serde(rename = "--gpu")]
    GpuOption,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvSetting {
    pub name: String,
    /// The value in force.
    pub value: String,
    /// A value already in the environment wins over commbench's.
    pub set_by: SetBy,
    /// What commbench would have set when the user's value won.
    pub commbench_choice: Option<String>,
}

/// Who set a transport variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SetBy {
    Commbench,
    User,
}

/// `NicInfo::kind` as the report writes it: the kind's display name
/// (`NicKind::name`, not NicKind's own serde form, which the node map
/// files use), or `unknown`.
mod nic_kind_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::topo::machine::NicKind;

    pub const UNKNOWN: &str = "unknown";

    /// Every kind; `kinds_are_all_listed` keeps it complete.
    pub(crate) const KINDS: [NicKind; 4] = [NicKind::InfiniBand, NicKind::RoCE, NicKind::Ethernet, NicKind::Other];

    pub(crate) fn serialize<S: Serializer>(kind: &Option<NicKind>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.map_or(UNKNOWN, NicKind::name))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<NicKind>, D::Error> {
        let text = String::deserialize(d)?;
        if text == UNKNOWN {
            return Ok(None);
        }
        match KINDS.into_iter().find(|k| k.name() == text) {
            Some(k) => Ok(Some(k)),
            None => Err(serde::de::Error::custom(format!(
                "unknown NIC kind '{text}', expected {UNKNOWN} or one of {}",
                KINDS.map(NicKind::name).join(", ")
            ))),
        }
    }
}

/// A node with more cores than this is "many-core": unpinned ranks there
/// wander enough to move latency.
pub(crate) const MANY_CORES: usize = 8;

/// Ranks as sorted ranges (`0-3,8`).
pub fn list(ranks: &[usize]) -> String {
    let mut r = ranks.to_vec();
    r.sort_unstable();
    r.dedup();
    format_list(&r)
}

/// One line per distinct note, naming the ranks that have it as ranges
/// (`ranks 16-63: ...`), so a big job does not repeat a note per rank.
pub(crate) fn merged_notes<'a>(notes: impl IntoIterator<Item = (usize, &'a str)>) -> Vec<String> {
    let mut by_text: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (rank, note) in notes {
        by_text.entry(note).or_default().push(rank);
    }
    by_text.into_iter().map(|(note, rs)| format!("{} {}: {note}", ranks_word(&rs), list(&rs))).collect()
}

/// "rank" or "ranks", as many as there are.
pub(crate) fn ranks_word(ranks: &[usize]) -> &'static str {
    if ranks.len() == 1 {
        "rank"
    } else {
        "ranks"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A placement as the string-valued report wrote it reads into the
    /// enums and writes back the same JSON, for every value each field can
    /// take.
    #[test]
    fn placement_json_keeps_its_words() {
        let nic = |kind: &str, source: &str| serde_json::json!({"name": "mlx5_2:1", "kind": kind, "numa": 1, "cpus": "8-15", "source": source});
        let cases = [
            ("none", "unbound", nic("InfiniBand", "policy"), "policy", "commbench"),
            ("core", "commbench", nic("RoCE", "--nic"), "--gpu", "user"),
            ("nic", "launcher", nic("Ethernet", "UCX_NET_DEVICES (user)"), "policy", "user"),
            ("gpu", "commbench", nic("other", "policy"), "--gpu", "commbench"),
            ("nic", "commbench", nic("unknown", "--nic"), "policy", "commbench"),
        ];
        for (policy, bound_by, nic, gpu_source, set_by) in cases {
            let v = serde_json::json!({
                "policy": policy,
                "bound_by": bound_by,
                "numa_nodes": [1],
                "cores": [8],
                "node_cores": 16,
                "node_cpus": 32,
                "nic": nic,
                "gpu": {"index": 0, "pci_bus_id": "0000:41:00.0", "name": null, "numa": 1, "source": gpu_source},
                "env": [{"name": "UCX_NET_DEVICES", "value": "mlx5_2:1", "set_by": set_by, "commbench_choice": null}],
                "notes": [],
                "topology": "hwloc 2.9.0"
            });
            let p: RankPlacement = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&p).unwrap(), v);
        }
        let p: RankPlacement = serde_json::from_value(serde_json::json!({
            "policy": "nic", "bound_by": "unbound", "numa_nodes": [], "cores": [], "node_cores": 0, "node_cpus": 0,
            "nic": {"name": "eth0", "kind": "unknown", "numa": null, "cpus": "", "source": "policy"},
            "gpu": null, "env": [], "notes": [], "topology": ""
        }))
        .unwrap();
        assert_eq!(p.nic.unwrap().kind, None);
        let bad = serde_json::json!({"name": "x", "kind": "infiniband", "numa": null, "cpus": "", "source": "policy"});
        let e = serde_json::from_value::<NicInfo>(bad).unwrap_err().to_string();
        assert!(e.contains("unknown NIC kind 'infiniband'"), "{e}");
    }

    /// `nic_kind_name::KINDS` lists every kind: adding one to `NicKind`
    /// stops this from compiling until the list has it.
    #[test]
    fn kinds_are_all_listed() {
        let slot = |k: NicKind| match k {
            NicKind::InfiniBand => 0,
            NicKind::RoCE => 1,
            NicKind::Ethernet => 2,
            NicKind::Other => 3,
        };
        let mut slots: Vec<usize> = nic_kind_name::KINDS.iter().map(|&k| slot(k)).collect();
        slots.sort_unstable();
        assert_eq!(slots, [0, 1, 2, 3]);
    }
}
