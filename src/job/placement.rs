//! Placement at start-up, shared by every MPI program of commbench:
//! `prepare` runs before MPI_Init (discovers the node, computes this rank's
//! placement from the launcher's local rank, binds, and sets the NIC
//! variables so the transport sees them when it starts); `confirm` runs
//! after it (every rank agrees on success or stops with one line, the
//! local rank is checked against a shared-memory split, and the rank's
//! placement is described for the report and run record).

use crate::backend::{agree_failures, Control};
use crate::job::launcher::LauncherEnv;
use crate::topo::affinity;
use crate::topo::cpuset::{self, format_list};
use crate::topo::hwloc;
use crate::topo::machine::Machine;
use crate::topo::policy::{self, Placement};
use crate::topo::report::{BoundBy, EnvSetting, GpuSource, NicInfo, NicSource, RankPlacement, SetBy, TopoGpu};
use crate::topo::request::{nic_variables, NicSpec, PlacementRequest};

/// The result of the pre-MPI step, carried to `confirm`.
pub struct Prepared {
    req: PlacementRequest,
    machine: Result<Machine, String>,
    state: State,
}

enum State {
    /// Nothing asked; ranks stay where the launcher put them.
    NotAsked,
    /// The launcher did not say the local rank: place after MPI starts.
    Deferred,
    Done {
        placement: Placement,
        env: Vec<EnvSetting>,
        local_rank: usize,
    },
    Failed(String),
}

/// Before MPI_Init: place this rank if asked and the launcher says where
/// it is on the node.
pub(crate) fn prepare(env: &LauncherEnv, req: &PlacementRequest) -> Prepared {
    let machine = hwloc::discover().map_err(|e| e.to_string());
    let state = if !req.is_given() {
        State::NotAsked
    } else {
        match (&machine, env.local_rank, env.local_size) {
            (Err(e), ..) => State::Failed(e.clone()),
            (Ok(m), Some(lr), Some(ls)) => place_and_apply(m, lr, ls, req),
            _ => State::Deferred,
        }
    };
    Prepared { req: req.clone(), machine, state }
}

fn place_and_apply(m: &Machine, local_rank: usize, ranks_on_node: usize, req: &PlacementRequest) -> State {
    let placement = match policy::place(m, local_rank, ranks_on_node, req) {
        Ok(p) => p,
        Err(e) => return State::Failed(e.to_string()),
    };
    if let Some(cpus) = &placement.cpus {
        if let Err(e) = affinity::bind(cpus) {
            return State::Failed(format!("cannot bind to cpus {}: {e}", format_list(cpus)));
        }
    }
    let env = placement.nic.as_ref().map(|n| set_nic_env(m, n)).unwrap_or_default();
    State::Done { placement, env, local_rank }
}

/// Sets the NIC variables, leaving alone any the user set already.
fn set_nic_env(m: &Machine, nic: &NicSpec) -> Vec<EnvSetting> {
    nic_variables(m, nic)
        .into_iter()
        .map(|(name, ours)| match std::env::var(name).ok().filter(|v| !v.is_empty()) {
            Some(user) if user != ours => {
                EnvSetting { name: name.into(), value: user, set_by: SetBy::User, commbench_choice: Some(ours) }
            }
            Some(user) => EnvSetting { name: name.into(), value: user, set_by: SetBy::User, commbench_choice: None },
            None => {
                // Start-up is single-threaded apart from the watchdog,
                // which reads no environment.
                std::env::set_var(name, &ours);
                EnvSetting { name: name.into(), value: ours, set_by: SetBy::Commbench, commbench_choice: None }
            }
        })
        .collect()
}

/// After MPI_Init, on every rank: Ok with this rank's placement, or Err
/// on every rank when any rank failed, carrying the line to print on rank
/// 0 (None elsewhere).
/// The node map comes back with the placement (or why there is none), for
/// what else reads the node (the paths' peaks, `crate::peak`).
pub fn confirm<C: Control>(
    w: &C,
    env: &LauncherEnv,
    prepared: Prepared,
) -> Result<(RankPlacement, Result<Machine, String>), Option<String>> {
    let Prepared { req, machine, mut state } = prepared;
    let (ranks_on_node, split_rank) = w.node_ranks();
    let mut notes = Vec::new();
    if matches!(state, State::Deferred) {
        state = match &machine {
            Ok(m) => place_and_apply(m, split_rank, ranks_on_node, &req),
            Err(e) => State::Failed(e.clone()),
        };
        if req.nic.is_some() || req.policy() == crate::topo::request::BindPolicy::Nic {
            notes.push(
                "the launcher did not say the local rank, so placement happened after MPI started: a NIC choice \
                 may not reach the transport (set UCX_NET_DEVICES yourself)"
                    .to_string(),
            );
        }
    }
    let failure = match &state {
        State::Failed(msg) => Some(msg.as_str()),
        _ => None,
    };
    agree_failures(w, failure)?;
    if let (Some(lr), State::Done { local_rank, .. }) = (env.local_rank, &state) {
        if lr != split_rank || *local_rank != split_rank {
            notes.push(format!(
                "the launcher says local rank {lr} but MPI's node split says {split_rank}; placement used {local_rank}"
            ));
        }
    }
    let placement = describe(&req, machine.as_ref(), state, notes);
    Ok((placement, machine))
}

fn describe(
    req: &PlacementRequest,
    machine: Result<&Machine, &String>,
    state: State,
    mut notes: Vec<String>,
) -> RankPlacement {
    let cpus = affinity::allowed_cpus();
    let mut p = RankPlacement { policy: req.policy(), ..RankPlacement::default() };
    let (placement, env) = match state {
        State::Done { placement, env, .. } => (Some(placement), env),
        _ => (None, Vec::new()),
    };
    match machine {
        Ok(m) => {
            p.topology = m.source.clone();
            p.cores = m.cores_touching(&cpus);
            p.numa_nodes = m.numa_of(&cpus);
            p.node_cores = m.cores.len();
            p.node_cpus = m.pu_count();
        }
        Err(e) => p.topology = format!("unavailable: {e}"),
    }
    p.bound_by = if placement.as_ref().is_some_and(|pl| pl.cpus.is_some()) {
        BoundBy::Commbench
    } else if p.node_cpus > 0 && cpus.len() < p.node_cpus {
        BoundBy::Launcher
    } else {
        BoundBy::Unbound
    };
    let m = machine.ok();
    let nic_info = |name: &str, source: NicSource| -> NicInfo {
        let dev = name.split(':').next().unwrap_or(name);
        let found = m.and_then(|m| m.find_nic(dev));
        NicInfo {
            name: name.to_string(),
            kind: found.map(|n| n.kind),
            numa: found.and_then(|n| n.numa),
            cpus: found.map(|n| format_list(&n.cpus)).unwrap_or_default(),
            source,
        }
    };
    let user_ucx = env.iter().find(|e| e.name == "UCX_NET_DEVICES" && e.set_by == SetBy::User).map(|e| e.value.clone());
    p.nic = match (placement.as_ref().and_then(|pl| pl.nic.as_ref()), user_ucx) {
        // The user's UCX_NET_DEVICES decides what UCX uses.
        (Some(_), Some(user)) => Some(nic_info(user.split(',').next().unwrap_or(&user), NicSource::UserUcxNetDevices)),
        (Some(n), None) => {
            Some(nic_info(&n.to_string(), if req.nic.is_some() { NicSource::NicOption } else { NicSource::Policy }))
        }
        (None, _) => std::env::var("UCX_NET_DEVICES")
            .ok()
            .filter(|v| !v.is_empty() && v != "all")
            .map(|v| nic_info(v.split(',').next().unwrap_or(&v), NicSource::UserUcxNetDevices)),
    };
    p.gpu = placement.as_ref().and_then(|pl| pl.gpu).and_then(|g| {
        let gpu = m?.gpus.get(g)?;
        Some(TopoGpu {
            index: g,
            pci_bus_id: gpu.pci_bus_id.clone(),
            name: gpu.name.clone(),
            numa: gpu.numa,
            source: if req.gpu.is_some() { GpuSource::GpuOption } else { GpuSource::Policy },
        })
    });
    if let Some(pl) = placement {
        if let Some(want) = &pl.cpus {
            if cpuset::normalized(want) != cpus {
                notes.push(format!("asked for cpus {} but runs on {}", format_list(want), format_list(&cpus)));
            }
        }
        notes.extend(pl.notes);
    }
    p.env = env;
    p.notes = notes;
    p
}
