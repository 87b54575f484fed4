//! An OSU binary's bandwidth against its path's peak (crate::peak): which
//! runs have one, each rank's end of the paths (taken before the kernel's
//! buffers exist, so the copy-rate buffers never add to them), the run's
//! paths on rank 0, the curve of measured sizes, and at the end the
//! plateau, `--verbose`'s lines and `--min-efficiency`'s verdict. OSU's
//! stdout never changes; all of this goes to the CSV, the record and
//! stderr.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use crate::bench::engine::plan::Plan;
use crate::bench::pt2pt::fan::FanLayout;
use crate::gpu::cuda::GpuInfo;
use crate::job::Job;
use crate::peak::gpu::GpuSide;
use crate::peak::path::{self, PathPeak, RankEnd};
use crate::peak::verdict::{self, Plateau};
use crate::peak::{copy_rate, PairPath, RunPaths};
use crate::report::record::RankInfo;
use crate::report::{Row, RunContext, Sink};
use crate::spec::{BenchSpec, MetricKind};

/// Whether `spec`'s rows carry a bandwidth a path bounds: MB/s of the
/// point-to-point and one-sided bandwidth tests, or the bus bandwidth of a
/// collective that moves data.
pub(crate) fn reports_bandwidth(spec: &BenchSpec) -> bool {
    matches!(spec.metric, MetricKind::Bandwidth | MetricKind::MultiBandwidth) || spec.has_bus_bandwidth()
}

/// Whether the reported bandwidth adds both directions (osu_bibw, its
/// persistent form, osu_put_bibw).
fn both_ways(spec: &BenchSpec) -> bool {
    spec.duplex
}

/// Every rank, at once: its end of the paths for a run of `spec` whose
/// buffers are in `gpu`'s memory (`Transport::gpu_buffers`), or in host
/// memory; None for a run with no bandwidth. Every rank measures the copy
/// rate of the plan's largest size (all together, after a barrier, so the
/// call is the same everywhere); a rank with GPU buffers also reads its
/// GPU's PCIe link (sysfs) and NVLinks (NVML).
pub(crate) fn rank_end(job: &Job, spec: &BenchSpec, plan: &Plan, gpu: Option<(&GpuInfo, &str)>) -> Option<RankEnd> {
    if !reports_bandwidth(spec) {
        return None;
    }
    let end = job.path_end(Ok(copy_rate::bytes_for(plan.max_size)));
    let gpu = gpu.map(|(g, buffers)| GpuSide::read(g.index, &g.pci_bus_id, buffers, &crate::peak::pcie::sysfs_root()));
    Some(RankEnd { gpu, ..end })
}

/// The ends of a process's other GPUs' ranks (nccl-tests' `-t` x `-g`),
/// from its first's `end`: the same host, NIC and copy rate, each with
/// its own GPU's PCIe link and NVLinks.
pub(crate) fn lane_ends(end: &Option<RankEnd>, gpus: &[crate::gpu::cuda::Gpu]) -> Vec<RankEnd> {
    let Some(end) = end else { return Vec::new() };
    let buffers = crate::backend::cuda_memory::Place::Device.name();
    let sys = crate::peak::pcie::sysfs_root();
    gpus.iter()
        .map(|g| RankEnd { gpu: Some(GpuSide::read(g.info.index, &g.info.pci_bus_id, buffers, &sys)), ..end.clone() })
        .collect()
}

/// Rank 0: the run's paths from every rank's end; None when a rank sent
/// none (a run with no bandwidth). A process that drives several GPUs
/// has a rank per GPU, numbered as nccl-tests numbers them (the
/// process's first GPU's rank, then its others' in lane order).
pub(crate) fn run_paths(spec: &BenchSpec, plan: &Plan, ranks: &[RankInfo]) -> Option<RunPaths> {
    let lanes = plan.opts.lanes();
    let mut ends: Vec<RankEnd> = Vec::with_capacity(ranks.len() * lanes);
    for r in ranks {
        if r.lane_ends.len() + 1 != lanes {
            return None;
        }
        ends.push(r.path_end.clone()?);
        ends.extend(r.lane_ends.iter().cloned());
    }
    if spec.has_bus_bandwidth() {
        return Some(RunPaths::of(path::collective(&ends), Vec::new()));
    }
    let edges = edges(spec, plan, &ends)?;
    let (each, run) = path::traffic(&edges, both_ways(spec), &ends);
    let pairs = edges.iter().zip(&each).map(|(&(a, b), p)| PairPath::new(a, b, p)).collect();
    Some(RunPaths::of(run, pairs))
}

/// Who sends to whom: rank i to i + pairs, or a fan's parent node and its
/// children (fan.rs).
fn edges(spec: &BenchSpec, plan: &Plan, ends: &[RankEnd]) -> Option<Vec<(usize, usize)>> {
    if !plan.pairs_from_nodes() {
        return Some((0..plan.pairs).map(|i| (i, i + plan.pairs)).filter(|&(_, b)| b < ends.len()).collect());
    }
    let names: Vec<String> = ends.iter().map(|e| e.host.clone()).collect();
    let layout = FanLayout::from_names(&names).ok()?;
    let fan_in = spec.name.ends_with("fan_in");
    let parent = &layout.grid[0];
    let mut edges = Vec::new();
    for node in &layout.grid[1..] {
        for (&child, &p) in node.iter().zip(parent) {
            edges.push(if fan_in { (child, p) } else { (p, child) });
        }
    }
    Some(edges)
}

/// The measured (size, MB/s) points, shared between the [`Curve`] and
/// whoever concludes.
pub(crate) type Points = Rc<RefCell<Vec<(usize, f64)>>>;

/// Rank 0's copy of the measured bandwidths, (size, MB/s) per row: one
/// more output beside the CSV and the table.
pub(crate) struct Curve {
    ctx: RunContext,
    points: Points,
}

impl Curve {
    pub fn new(ctx: RunContext) -> (Curve, Points) {
        let points = Rc::new(RefCell::new(Vec::new()));
        (Curve { ctx, points: points.clone() }, points)
    }
}

impl Sink for Curve {
    fn point(&mut self, rows: &[Row]) -> io::Result<()> {
        let mut points = self.points.borrow_mut();
        points.extend(rows.iter().filter_map(|r| Some((r.size, self.ctx.bandwidth_mbps(r)?))));
        Ok(())
    }
}

/// Rank 0, as the run ends: each size's best bandwidth against the peak,
/// the plateau, and with `min_pct` the verdict (returned when it fails).
pub(crate) fn conclude(paths: &mut RunPaths, points: &[(usize, f64)], min_pct: Option<f64>) -> Option<String> {
    let mut sizes: Vec<usize> = points.iter().map(|p| p.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    paths.sizes = sizes
        .iter()
        .filter_map(|&s| {
            let best = points.iter().filter(|p| p.0 == s).map(|p| p.1).fold(f64::NAN, f64::max);
            Some(Plateau { size: s, value_mbps: best, efficiency_pct: paths.run.efficiency(best)? })
        })
        .collect();
    paths.plateau = verdict::plateau(points, &paths.run);
    paths.min_efficiency_pct = min_pct;
    paths.verdict = min_pct.and_then(|min| verdict::judge(&paths.run, paths.plateau.as_ref(), min));
    paths.verdict.clone()
}

/// `--verbose`: one line per path after the table.
pub(crate) fn verbose_lines(name: &str, paths: &RunPaths) -> Vec<String> {
    let mut lines = vec![path_line(name, "path", &paths.run, paths.plateau.as_ref())];
    // A run of several pairs over different paths names each path once.
    let mut seen: Vec<(&str, Vec<String>, Option<f64>)> = Vec::new();
    for p in &paths.pairs {
        match seen.iter_mut().find(|s| s.0 == p.label) {
            Some(s) => s.1.push(format!("{}->{}", p.from, p.to)),
            None => seen.push((&p.label, vec![format!("{}->{}", p.from, p.to)], p.peak_mbps)),
        }
    }
    if paths.pairs.len() > 1 {
        for (label, ranks, peak) in seen {
            let peak = peak.map_or("unknown".to_string(), |m| format!("{m:.0} MB/s"));
            lines.push(format!("{name}: pair path {label} (ranks {}): peak {peak}", ranks.join(", ")));
        }
    }
    lines
}

fn path_line(name: &str, what: &str, p: &PathPeak, plateau: Option<&Plateau>) -> String {
    match (p.peak_mbps, plateau) {
        (None, _) => format!("{name}: {what} {}: peak unknown ({})", p.label, p.unknown.as_deref().unwrap_or("")),
        (Some(peak), None) => format!("{name}: {what} {}: peak {} = {peak:.0} MB/s ({})", p.label, p.rate_text, p.how),
        (Some(peak), Some(pl)) => format!(
            "{name}: {what} {}: peak {} = {peak:.0} MB/s ({}); plateau {:.0} MB/s at {} = {}",
            p.label,
            p.rate_text,
            p.how,
            pl.value_mbps,
            crate::bytes::exact_label(pl.size as u64),
            verdict::pct_text(pl.efficiency_pct)
        ),
    }
}

impl RunPaths {
    fn of(run: PathPeak, pairs: Vec<PairPath>) -> RunPaths {
        RunPaths { run, pairs, sizes: Vec::new(), plateau: None, min_efficiency_pct: None, verdict: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::copy_rate::CopyRate;
    use crate::peak::PathClass;

    /// The specs say which bandwidths add both directions: the three
    /// bi-directional tests, which the name once decided.
    #[test]
    fn the_bidirectional_tests_count_both_ways() {
        let both: Vec<&str> =
            crate::bench::registry::BENCHMARKS.iter().filter(|e| both_ways(e.spec)).map(|e| e.name()).collect();
        assert_eq!(both, ["osu_bibw", "osu_bibw_persistent", "osu_put_bibw"]);
    }

    fn end(host: &str, mbps: f64) -> RankEnd {
        RankEnd {
            host: host.into(),
            copy: Some(CopyRate { mbps, bytes: 1 << 22, copies: 5, method: "memcpy".into() }),
            ..Default::default()
        }
    }

    #[test]
    fn a_run_concluded_and_said() {
        let ends = [end("n1", 4000.0), end("n1", 4000.0)];
        let (each, run) = path::traffic(&[(0, 1)], false, &ends);
        let mut paths = RunPaths::of(run, vec![PairPath::new(0, 1, &each[0])]);
        let points = [(1 << 20, 1000.0), (2 << 20, 3000.0), (4 << 20, 2000.0), (4 << 20, 2500.0)];
        assert_eq!(conclude(&mut paths, &points, Some(50.0)), None);
        assert_eq!(paths.sizes.len(), 3);
        assert_eq!(paths.sizes[2], Plateau { size: 4 << 20, value_mbps: 2500.0, efficiency_pct: 62.5 });
        assert_eq!(paths.plateau.as_ref().map(|p| p.size), Some(2 << 20));
        let failed = conclude(&mut paths, &points, Some(80.0)).unwrap();
        assert_eq!(failed, "below --min-efficiency 80%: shared memory on n1: 75% of 4.00 GB/s copy (3.00 of 4.00 GB/s expected) at 2 MiB");
        let lines = verbose_lines("osu_bw", &paths);
        assert_eq!(lines, vec![
            "osu_bw: path shared memory on n1: peak 4.00 GB/s copy = 4000 MB/s (the slower of the two ranks' copy rates); plateau 3000 MB/s at 2 MiB = 75%".to_string()
        ]);
        assert_eq!(paths.run.class, PathClass::SharedMemory);
    }
}
