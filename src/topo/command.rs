//! `commbench topo`: this node's map (NUMA nodes with their cores, NICs and
//! GPUs, the allowed cpus) and, with `--ranks-per-node`, the placement each
//! local rank would get. `--machine FILE` shows a described node instead;
//! `--format json` is for scripts.

use clap::Parser;
use serde::Serialize;

use super::cpuset::format_list;
use super::describe;
use super::hwloc;
use super::machine::Machine;
use super::policy;
use super::request::nic_variables;
use super::request::{PlacementArgs, PlacementRequest};
use crate::bytes::human_bytes;
use crate::text::aligned_columns;

#[derive(Parser, Debug)]
#[command(
    name = "commbench topo",
    about = "Show this node's CPUs, NUMA nodes, NICs and GPUs, and where ranks would go"
)]
struct Args {
    /// Show the placement of N ranks on this node (1 to 4096).
    #[arg(long, value_name = "N")]
    ranks_per_node: Option<usize>,
    #[command(flatten)]
    placement: PlacementArgs,
    /// Read a machine description (JSON) instead of this node.
    #[arg(long, value_name = "FILE")]
    machine: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_parser = ["text", "json"], default_value = "text")]
    format: String,
}

/// The most ranks one node's placement is shown for (16 times the largest
/// nodes' hardware threads; memory and output grow with it).
pub(crate) const MAX_RANKS_PER_NODE: usize = 4096;

#[derive(Serialize)]
struct RankRow {
    local_rank: usize,
    cpus: Option<String>,
    numa_nodes: Vec<usize>,
    nic: Option<String>,
    gpu: Option<usize>,
    environment: Vec<(String, String)>,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct Output<'a> {
    machine: &'a Machine,
    policy: Option<&'static str>,
    placement: Option<Vec<RankRow>>,
}

pub fn main(args: &[String]) -> i32 {
    if let Err(why) = crate::args::check_arg_lengths(args) {
        crate::say!("commbench topo: {why}");
        return 2;
    }
    let args = match Args::try_parse_from(std::iter::once("commbench topo".to_string()).chain(args.iter().cloned())) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            if code == 0 {
                print!("{e}");
            } else {
                crate::say!("commbench topo: {}", first_line(&e.to_string()));
            }
            return code;
        }
    };
    let req = match request(&args) {
        Ok(r) => r,
        Err(msg) => {
            crate::say!("commbench topo: {msg}");
            return 2;
        }
    };
    match run(&args, &req) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(msg) => {
            crate::say!("commbench topo: {msg}");
            1
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim_start_matches("error: ").to_string()
}

/// The placement options, checked as far as possible without a machine.
fn request(args: &Args) -> Result<PlacementRequest, String> {
    let req = args.placement.request().map_err(|e| e.to_string())?;
    if req.is_given() && args.ranks_per_node.is_none() {
        return Err("placement options need --ranks-per-node N".into());
    }
    match args.ranks_per_node {
        Some(0) => return Err("--ranks-per-node must be at least 1".into()),
        Some(n) if n > MAX_RANKS_PER_NODE => {
            return Err(format!("--ranks-per-node must be at most {MAX_RANKS_PER_NODE}"))
        }
        _ => {}
    }
    Ok(req)
}

fn run(args: &Args, req: &PlacementRequest) -> Result<String, String> {
    let machine = match &args.machine {
        Some(path) => describe::load(path).map_err(|e| e.to_string())?,
        None => hwloc::discover().map_err(|e| e.to_string())?,
    };
    let placement = match args.ranks_per_node {
        Some(n) => Some(rows(&machine, n, req)?),
        None => None,
    };
    let policy = args.ranks_per_node.map(|_| req.policy().name());
    if args.format == "json" {
        let out = Output { machine: &machine, policy, placement };
        return serde_json::to_string_pretty(&out).map(|s| s + "\n").map_err(|e| e.to_string());
    }
    let mut s = map_text(&machine);
    if let (Some(rows), Some(policy)) = (placement, policy) {
        s.push_str(&placement_text(&rows, policy));
    }
    Ok(s)
}

fn rows(m: &Machine, n: usize, req: &PlacementRequest) -> Result<Vec<RankRow>, String> {
    let plan = policy::plan(m, n, req).map_err(|e| e.to_string())?;
    Ok(plan
        .into_iter()
        .map(|p| RankRow {
            local_rank: p.local_rank,
            numa_nodes: p.cpus.as_ref().map(|c| m.numa_of(c)).unwrap_or_default(),
            cpus: p.cpus.as_ref().map(|c| format_list(c)),
            environment: p
                .nic
                .as_ref()
                .map(|nic| nic_variables(m, nic).into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                .unwrap_or_default(),
            nic: p.nic.map(|n| n.to_string()),
            gpu: p.gpu,
            notes: p.notes,
        })
        .collect())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn map_text(m: &Machine) -> String {
    let mut s = format!(
        "{} ({}): {}, {}, {}, {}\n",
        m.hostname,
        m.source,
        plural(m.packages, "package", "packages"),
        plural(m.numa_nodes.len(), "NUMA node", "NUMA nodes"),
        plural(m.cores.len(), "core", "cores"),
        plural(m.pu_count(), "cpu", "cpus"),
    );
    s.push_str(&format!(
        "allowed cpus: {} ({} of {})\n",
        format_list(&m.allowed_cpus),
        m.allowed_cpus.len(),
        m.pu_count()
    ));
    let nic_line = |n: &super::machine::Nic| {
        let ports: Vec<String> = n
            .ports
            .iter()
            .map(|p| {
                let rate = p.rate_gbps.map(|r| format!(" {r} Gb/s")).unwrap_or_default();
                if n.has_verbs_ports() {
                    format!("port {} {}{rate}", p.number, p.state)
                } else {
                    format!("{}{rate}", p.state)
                }
            })
            .collect();
        let netdev = n.netdev.as_ref().map(|d| format!(" ({d})")).unwrap_or_default();
        let pci = n.pci_bus_id.as_ref().map(|b| format!(", pci {b}")).unwrap_or_default();
        format!("    NIC {}{netdev}: {}, {}{pci}\n", n.name, n.kind.name(), ports.join(", "))
    };
    let gpu_line = |g: &super::machine::Gpu| {
        let name = g.name.as_ref().map(|n| format!(" {n}")).unwrap_or_default();
        format!("    GPU {}:{name}, pci {}\n", g.index, g.pci_bus_id)
    };
    for node in &m.numa_nodes {
        let cores = m.cores.iter().filter(|c| c.numa == Some(node.os_index)).count();
        let mem = node.memory_bytes.map(|b| format!(", {}", human_bytes(b as u128))).unwrap_or_default();
        s.push_str(&format!(
            "  NUMA node {}: cpus {} ({}){mem}\n",
            node.os_index,
            format_list(&node.cpus),
            plural(cores, "core", "cores")
        ));
        for n in m.nics.iter().filter(|n| n.numa == Some(node.os_index)) {
            s.push_str(&nic_line(n));
        }
        for g in m.gpus.iter().filter(|g| g.numa == Some(node.os_index)) {
            s.push_str(&gpu_line(g));
        }
    }
    let (nics, gpus): (Vec<_>, Vec<_>) =
        (m.nics.iter().filter(|n| n.numa.is_none()).collect(), m.gpus.iter().filter(|g| g.numa.is_none()).collect());
    if !nics.is_empty() || !gpus.is_empty() {
        s.push_str("  not attached to one NUMA node:\n");
        for n in nics {
            let where_ = if n.cpus.is_empty() {
                " (not a PCI device)".to_string()
            } else {
                format!(" (local cpus {})", format_list(&n.cpus))
            };
            s.push_str(&nic_line(n).replacen("\n", &format!("{where_}\n"), 1));
        }
        for g in gpus {
            s.push_str(&gpu_line(g).replacen("\n", &format!(" (local cpus {})\n", format_list(&g.cpus)), 1));
        }
    }
    if m.nics.is_empty() {
        s.push_str("  no network device found\n");
    }
    if m.gpus.is_empty() {
        s.push_str("  no GPU found\n");
    }
    s
}

fn placement_text(rows: &[RankRow], policy: &str) -> String {
    let mut table: Vec<[String; 5]> = vec![["local".into(), "cpus".into(), "numa".into(), "nic".into(), "gpu".into()]];
    let dash = || "-".to_string();
    for r in rows {
        table.push([
            r.local_rank.to_string(),
            r.cpus.clone().unwrap_or_else(|| "as launched".into()),
            if r.numa_nodes.is_empty() { dash() } else { format_list(&r.numa_nodes) },
            r.nic.clone().unwrap_or_else(dash),
            r.gpu.map(|g| g.to_string()).unwrap_or_else(dash),
        ]);
    }
    let mut s = format!("\nplacement of {} with --bind {policy}:\n", plural(rows.len(), "rank", "ranks"));
    for line in aligned_columns(&table) {
        s.push_str(&format!("  {line}\n"));
    }
    if let Some(first) = rows.iter().find(|r| !r.environment.is_empty()) {
        let vars: Vec<&str> = first.environment.iter().map(|(k, _)| k.as_str()).collect();
        s.push_str(&format!("each rank's NIC reaches the transport through {}\n", vars.join(" and ")));
    }
    let notes = rows.iter().flat_map(|r| r.notes.iter().map(|n| (r.local_rank, n.as_str())));
    for line in crate::topo::report::merged_notes(notes) {
        s.push_str(&format!("note: {line}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::request::BindPolicy;

    /// 64 ranks on the EPYC + HDR node with --bind nic: 48 ranks cannot sit
    /// near the NIC, said once with their ranks as a range, as the
    /// benchmarks' placement table does.
    #[test]
    fn notes_are_merged_into_rank_ranges() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/machines/epyc-hdr.json");
        let m = describe::load(std::path::Path::new(path)).unwrap();
        let req = PlacementRequest { policy: Some(BindPolicy::Nic), ..PlacementRequest::default() };
        let text = placement_text(&rows(&m, 64, &req).unwrap(), "nic");
        let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
        assert_eq!(
            notes,
            ["note: ranks 16-63: its cpus are not local to mlx5_2: the local cpus 80-95 are taken by other ranks"],
            "{text}"
        );
    }
}
