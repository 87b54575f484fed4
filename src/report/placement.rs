//! The placement report: misplacement warnings over every rank's
//! placement, grouped so a big job does not print a line per rank, and the
//! `--verbose` placement table, for the OSU binaries and `commbench pairs`.

use std::collections::BTreeMap;

use crate::report::record::RankInfo;
use crate::text::aligned_columns;
use crate::topo::cpuset::format_list;
use crate::topo::report::{list, merged_notes, ranks_word, RankPlacement, MANY_CORES};
use crate::topo::request::BindPolicy;

/// What the warnings need beyond the ranks.
#[derive(Clone, Debug, Default)]
pub struct WarnContext {
    pub benchmark: String,
    /// Point-to-point pairs (rank, partner).
    pub pairs: Vec<(usize, usize)>,
    /// Nodes in the allocation (Slurm), if known.
    pub allocation_nodes: Option<usize>,
}

/// Misplacement warnings, one line each, grouped so a big job does not
/// print one line per rank.
pub fn warnings(ranks: &[RankInfo], ctx: &WarnContext) -> Vec<String> {
    let mut out = Vec::new();
    let placed: Vec<(&RankInfo, &RankPlacement)> =
        ranks.iter().filter_map(|r| Some((r, r.placement.as_ref()?))).collect();

    // Ranks pinned to one and the same core (or hyperthread pair).
    let mut by_core: BTreeMap<(&str, usize), Vec<usize>> = BTreeMap::new();
    for (r, p) in &placed {
        if let [core] = p.cores[..] {
            by_core.entry((r.host.as_str(), core)).or_default().push(r.rank);
        }
    }
    for ((host, core), rs) in &by_core {
        if rs.len() > 1 {
            let pair = ctx.pairs.iter().any(|&(a, b)| rs.contains(&a) && rs.contains(&b));
            let what = if pair { format!("{} partners", ctx.benchmark) } else { "they".into() };
            let on_host = placed.iter().filter(|(r, _)| r.host == *host).count();
            let cores = placed.iter().find(|(r, _)| r.host == *host).map_or(0, |(_, p)| p.node_cores);
            let advice = if cores > 0 && on_host > cores {
                format!("{host} has {cores} cores for {on_host} ranks: run fewer ranks per node")
            } else {
                "give each rank its own core (--bind core, or the launcher's core binding)".to_string()
            };
            out.push(format!(
                "ranks {} share one core (core {core}) on {host}: {what} take turns on it instead of running at the \
                 same time; {advice}",
                list(rs)
            ));
        }
    }

    // Ranks off the NUMA node of the NIC chosen for them.
    let mut off_nic: BTreeMap<(&str, &str, usize), Vec<usize>> = BTreeMap::new();
    for (r, p) in &placed {
        if let Some(nic) = &p.nic {
            if let Some(n) = nic.numa {
                if !p.numa_nodes.is_empty() && !p.numa_nodes.contains(&n) {
                    off_nic.entry((r.host.as_str(), nic.name.as_str(), n)).or_default().push(r.rank);
                }
            }
        }
    }
    for ((host, nic, numa), rs) in &off_nic {
        let theirs: Vec<usize> = placed
            .iter()
            .filter(|(r, _)| rs.contains(&r.rank))
            .flat_map(|(_, p)| p.numa_nodes.iter().copied())
            .collect();
        out.push(format!(
            "{} {} on {host} run on NUMA node {} but {nic} is on NUMA node {numa}: traffic crosses between sockets; \
             use --bind nic or cpus of NUMA node {numa}",
            ranks_word(rs),
            list(rs),
            list(&theirs)
        ));
    }

    // Point-to-point partners on one host although the job has more.
    let hosts: Vec<&str> = {
        let mut h: Vec<&str> = ranks.iter().map(|r| r.host.as_str()).collect();
        h.sort_unstable();
        h.dedup();
        h
    };
    let nodes = ctx.allocation_nodes.unwrap_or(0).max(hosts.len());
    if nodes >= 2 {
        let host_of = |rank: usize| ranks.iter().find(|r| r.rank == rank).map(|r| r.host.as_str());
        let same: Vec<(usize, usize)> =
            ctx.pairs.iter().copied().filter(|&(a, b)| host_of(a).is_some() && host_of(a) == host_of(b)).collect();
        if !same.is_empty() {
            let shown: Vec<String> = same.iter().take(4).map(|(a, b)| format!("{a}<->{b}")).collect();
            let more = if same.len() > 4 { format!(" and {} more", same.len() - 4) } else { String::new() };
            let advice = if ranks.len() == 2 {
                "put one rank on each node (mpirun --map-by ppr:1:node, srun --ntasks-per-node=1)".to_string()
            } else {
                format!(
                    "{} pairs rank i with rank i+{}: place the first half of the ranks on one node and the second \
                     half on the other (block order: mpirun --map-by slot, srun -m block)",
                    ctx.benchmark,
                    ranks.len() / 2
                )
            };
            out.push(format!(
                "{} pair(s) {}{more} have both ranks on one host although the job has {nodes} nodes, so they measure \
                 shared memory, not the network: {advice}",
                ctx.benchmark,
                shown.join(", ")
            ));
        }
    }

    // Ranks not pinned to a core on a many-core node.
    let mut loose: BTreeMap<&str, (Vec<usize>, usize)> = BTreeMap::new();
    for (r, p) in &placed {
        if p.node_cores > MANY_CORES && p.cores.len() > 1 {
            let e = loose.entry(r.host.as_str()).or_insert((Vec::new(), 0));
            e.0.push(r.rank);
            e.1 = e.1.max(p.cores.len());
        }
    }
    for (host, (rs, width)) in &loose {
        out.push(format!(
            "{} {} on {host} may run on any of {width} cores: the scheduler can move them mid-measurement; pin them \
             (--bind core, or the launcher's --bind-to core / --cpu-bind=cores)",
            ranks_word(rs),
            list(rs)
        ));
    }
    out
}

/// Nodes in the job's allocation as Slurm says, if it does.
pub(crate) fn allocation_nodes() -> Option<usize> {
    ["SLURM_JOB_NUM_NODES", "SLURM_NNODES"].iter().find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// Rank 0: prints the warnings on stderr, after the table when `table_too`
/// (`--verbose`); returns the warnings for the run record. A run that
/// succeeds shows only real warnings by default, each one line that an OSU
/// row parser cannot take for a data row ([`crate::diag::row_safe`]), since
/// harnesses read stdout and stderr merged.
pub fn print(ranks: &[RankInfo], ctx: &WarnContext, table_too: bool) -> Vec<String> {
    let warnings = warnings(ranks, ctx);
    let mut text = if table_too { table(ranks) } else { String::new() };
    for w in &warnings {
        text.push_str(&crate::diag::row_safe(&format!("# warning: {w}")));
        text.push('\n');
    }
    if !text.is_empty() {
        crate::diag::write_once(&text);
    }
    warnings
}

/// Rows of the summary table at most; the run record has all.
pub(crate) const TABLE_ROWS: usize = 32;

/// The stderr summary: a header naming the policy, one row per rank, each
/// line starting with "# " so that tools reading stdout and stderr together
/// skip it as a comment.
pub fn table(ranks: &[RankInfo]) -> String {
    let policy = ranks.iter().find_map(|r| r.placement.as_ref()).map_or(BindPolicy::None, |p| p.policy);
    let hosts = {
        let mut h: Vec<&str> = ranks.iter().map(|r| r.host.as_str()).collect();
        h.sort_unstable();
        h.dedup();
        h.len()
    };
    let dash = || "-".to_string();
    let mut rows: Vec<[String; 7]> =
        vec![["rank".into(), "host".into(), "local".into(), "cpus".into(), "numa".into(), "nic".into(), "gpu".into()]];
    for r in ranks.iter().take(TABLE_ROWS) {
        let p = r.placement.as_ref();
        rows.push([
            r.rank.to_string(),
            r.host.clone(),
            r.local_rank.map(|l| l.to_string()).unwrap_or_else(dash),
            r.cpus.clone(),
            p.map(|p| format_list(&p.numa_nodes)).filter(|s| !s.is_empty()).unwrap_or_else(dash),
            p.and_then(|p| p.nic.as_ref()).map(|n| n.name.clone()).unwrap_or_else(dash),
            p.and_then(|p| p.gpu.as_ref()).map(|g| g.index.to_string()).unwrap_or_else(dash),
        ]);
    }
    let mut s = format!("# placement: --bind {}, {} rank(s) on {hosts} host(s)\n", policy.name(), ranks.len());
    for line in aligned_columns(&rows) {
        s.push_str(&format!("# {line}\n"));
    }
    if ranks.len() > TABLE_ROWS {
        s.push_str(&format!("# ... {} more rank(s): see the run record\n", ranks.len() - TABLE_ROWS));
    }
    let notes = ranks.iter().flat_map(|r| r.placement.iter().flat_map(|p| &p.notes).map(|n| (r.rank, n.as_str())));
    for line in merged_notes(notes) {
        s.push_str(&format!("# note: {line}\n"));
    }
    for r in ranks {
        for e in r.placement.iter().flat_map(|p| &p.env) {
            if let (Some(ours), 0) = (&e.commbench_choice, r.rank) {
                s.push_str(&format!(
                    "# note: {}={} was set by the user and wins over commbench's {ours}\n",
                    e.name, e.value
                ));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::machine::NicKind;
    use crate::topo::report::{NicInfo, NicSource};

    fn rank(
        rank: usize,
        host: &str,
        cpus: &str,
        cores: &[usize],
        numa: &[usize],
        nic: Option<(&str, usize)>,
    ) -> RankInfo {
        RankInfo {
            rank,
            host: host.into(),
            pid: 1,
            cpus: cpus.into(),
            cpu_count: 1,
            local_rank: Some(rank),
            path_end: None,
            lane_ends: Vec::new(),
            load: None,
            placement: Some(RankPlacement {
                policy: BindPolicy::Nic,
                cores: cores.to_vec(),
                numa_nodes: numa.to_vec(),
                node_cores: 128,
                node_cpus: 128,
                nic: nic.map(|(n, numa)| NicInfo {
                    name: n.into(),
                    kind: Some(NicKind::InfiniBand),
                    numa: Some(numa),
                    cpus: "80-95".into(),
                    source: NicSource::Policy,
                }),
                ..RankPlacement::default()
            }),
        }
    }

    fn ctx(pairs: &[(usize, usize)], nodes: Option<usize>) -> WarnContext {
        WarnContext { benchmark: "osu_bw".into(), pairs: pairs.to_vec(), allocation_nodes: nodes }
    }

    #[test]
    fn well_placed_ranks_raise_nothing() {
        let ranks = [
            rank(0, "a", "80", &[80], &[5], Some(("mlx5_2:1", 5))),
            rank(1, "b", "80", &[80], &[5], Some(("mlx5_2:1", 5))),
        ];
        assert!(warnings(&ranks, &ctx(&[(0, 1)], Some(2))).is_empty());
    }

    #[test]
    fn off_nic_numa_node() {
        let ranks = [
            rank(0, "a", "0", &[0], &[0], Some(("mlx5_2:1", 5))),
            rank(1, "a", "1", &[1], &[0], Some(("mlx5_2:1", 5))),
        ];
        assert_eq!(
            warnings(&ranks, &ctx(&[], None)),
            vec![
                "ranks 0-1 on a run on NUMA node 0 but mlx5_2:1 is on NUMA node 5: traffic crosses between sockets; use \
                 --bind nic or cpus of NUMA node 5"
            ]
        );
    }

    #[test]
    fn partners_on_one_host_of_a_two_node_job() {
        let ranks = [rank(0, "a", "80", &[80], &[5], None), rank(1, "a", "81", &[81], &[5], None)];
        let w = warnings(&ranks, &ctx(&[(0, 1)], Some(2)));
        assert_eq!(
            w,
            vec![
                "osu_bw pair(s) 0<->1 have both ranks on one host although the job has 2 nodes, so they measure shared \
                 memory, not the network: put one rank on each node (mpirun --map-by ppr:1:node, srun \
                 --ntasks-per-node=1)"
            ]
        );
        // One node allocated: that is what the user asked for.
        assert!(warnings(&ranks, &ctx(&[(0, 1)], Some(1))).is_empty());
        // Cyclic order of a 4-rank mbw_mr over two hosts: 0 and 2 on a.
        let ranks = [
            rank(0, "a", "80", &[80], &[5], None),
            rank(1, "b", "80", &[80], &[5], None),
            rank(2, "a", "81", &[81], &[5], None),
            rank(3, "b", "81", &[81], &[5], None),
        ];
        let w = warnings(&ranks, &ctx(&[(0, 2), (1, 3)], None));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("osu_bw pair(s) 0<->2, 1<->3 have both ranks on one host although the job has 2 nodes")
        );
        assert!(w[0].ends_with("pairs rank i with rank i+2: place the first half of the ranks on one node and the second half on the other (block order: mpirun --map-by slot, srun -m block)"), "{}", w[0]);
    }

    #[test]
    fn unpinned_ranks_on_a_many_core_node() {
        let all: Vec<usize> = (0..128).collect();
        let ranks = [rank(0, "a", "0-127", &all, &[0, 1], None), rank(1, "a", "0-127", &all, &[0, 1], None)];
        assert_eq!(
            warnings(&ranks, &ctx(&[], None)),
            vec![
                "ranks 0-1 on a may run on any of 128 cores: the scheduler can move them mid-measurement; pin them \
                 (--bind core, or the launcher's --bind-to core / --cpu-bind=cores)"
            ]
        );
        // A small node: not worth a warning.
        let mut small = ranks.clone();
        for r in &mut small {
            r.placement.as_mut().unwrap().node_cores = 2;
        }
        assert!(warnings(&small, &ctx(&[], None)).is_empty());
    }

    #[test]
    fn table_layout() {
        let ranks =
            [rank(0, "node-a", "80", &[80], &[5], Some(("mlx5_2:1", 5))), rank(1, "node-b", "81", &[81], &[5], None)];
        assert_eq!(
            table(&ranks),
            "# placement: --bind nic, 2 rank(s) on 2 host(s)\n\
             # rank  host    local  cpus  numa  nic       gpu\n\
             # 0     node-a  0      80    5     mlx5_2:1  -\n\
             # 1     node-b  1      81    5     -         -\n"
        );
    }
}
