//! Which benchmarks a suite runs and how each one is started: the catalogue
//! and the default set, the rank layout per kind of benchmark (point-to-point
//! on exactly two ranks, one per node when there are several nodes; the pair
//! benchmarks on an even count; collectives on all ranks), and the arguments
//! each benchmark gets.

use serde::Serialize;
use thiserror::Error;

use crate::bench::registry;
use crate::launch::{split_words, Layout};
use crate::spec::{BenchSpec, ProcRule};

/// A benchmark choice or rank count the suite cannot run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("unknown benchmark '{name}' (known: {})", names())]
    UnknownBenchmark { name: String },
    #[error("no benchmarks chosen")]
    NoneChosen,
    #[error("needs an even number of ranks, at least 2 (--np is {np})")]
    NeedsEvenRanks { np: usize },
    #[error("needs at least 2 ranks (--np is {np})")]
    NeedsTwoRanks { np: usize },
    #[error("needs ranks on at least 2 nodes, the same number on each (the job has {nodes} node(s))")]
    NeedsTwoNodes { nodes: usize },
    #[error("--bench-args '{0}' is not NAME=ARGS")]
    BenchArgsForm(String),
    #[error("--bench-args: unknown benchmark '{name}' (known: {})", names())]
    BenchArgsBenchmark { name: String },
}

pub use registry::DEFAULT_SET;

/// A benchmark by its name with or without `osu_`.
pub fn lookup(name: &str) -> Option<&'static BenchSpec> {
    registry::lookup(name).map(|e| e.spec)
}

fn names() -> String {
    registry::specs().map(|s| s.name.trim_start_matches("osu_")).collect::<Vec<_>>().join(", ")
}

/// The benchmarks to run: `bench` (or the default set when empty) plus
/// `add`, each once, in catalogue order.
pub fn select(bench: &[String], add: &[String]) -> Result<Vec<&'static BenchSpec>, PlanError> {
    let base: Vec<String> =
        if bench.is_empty() { DEFAULT_SET.iter().map(|s| s.to_string()).collect() } else { bench.to_vec() };
    let mut chosen: Vec<&'static BenchSpec> = Vec::new();
    for name in base.iter().chain(add).filter(|n| !n.trim().is_empty()) {
        let s = lookup(name).ok_or_else(|| PlanError::UnknownBenchmark { name: name.clone() })?;
        if !chosen.iter().any(|c| c.name == s.name) {
            chosen.push(s);
        }
    }
    if chosen.is_empty() {
        return Err(PlanError::NoneChosen);
    }
    chosen.sort_by_key(|s| registry::specs().position(|c| c.name == s.name));
    Ok(chosen)
}

/// The job the suite was given: ranks for the collectives, ranks per node,
/// and how many nodes there are to spread over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub np: usize,
    pub ppn: Option<usize>,
    pub nodes: usize,
}

/// The ranks for one benchmark. Point-to-point runs on two ranks: one on
/// each of two nodes when there are several, else both on the one node.
/// mbw_mr and multi_lat run on all ranks rounded down to even (rank i pairs
/// with i + np/2, so with `--ppn np/2` each pair crosses the two nodes).
/// Collectives run on all ranks.
pub(crate) fn layout_for(spec: &BenchSpec, shape: &Shape) -> Result<Layout, PlanError> {
    let spread = |np: usize| -> Option<usize> {
        match shape.ppn {
            Some(ppn) => Some(np.div_ceil(ppn)),
            None if shape.nodes == 1 => Some(1),
            None => None,
        }
    };
    match spec.procs {
        ProcRule::ExactlyTwo if shape.nodes >= 2 => Ok(Layout { np: 2, ppn: Some(1), nodes: Some(2) }),
        ProcRule::ExactlyTwo => Ok(Layout { np: 2, ppn: None, nodes: Some(1) }),
        ProcRule::Pairs => {
            let np = shape.np - shape.np % 2;
            if np < 2 {
                return Err(PlanError::NeedsEvenRanks { np: shape.np });
            }
            Ok(Layout { np, ppn: shape.ppn, nodes: spread(np) })
        }
        // Start-up: every rank of the job, one included.
        ProcRule::Any => Ok(Layout { np: shape.np, ppn: shape.ppn, nodes: spread(shape.np) }),
        ProcRule::Nodes => {
            if shape.nodes < 2 {
                return Err(PlanError::NeedsTwoNodes { nodes: shape.nodes });
            }
            Ok(Layout { np: shape.np, ppn: shape.ppn, nodes: spread(shape.np) })
        }
        ProcRule::AtLeastTwo => {
            if shape.np < 2 {
                return Err(PlanError::NeedsTwoRanks { np: shape.np });
            }
            Ok(Layout { np: shape.np, ppn: shape.ppn, nodes: spread(shape.np) })
        }
    }
}

/// Arguments for the benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BenchArgs {
    /// OSU options given to the suite (`-m`, `-i`, `-x`, `-W`, `-f`): each
    /// goes to the benchmarks that take that letter.
    pub osu: Vec<(char, Option<String>)>,
    /// Passed to every benchmark as they are.
    pub verbatim: Vec<String>,
    /// Extra arguments for one benchmark (full binary name).
    pub per_bench: Vec<(String, Vec<String>)>,
    /// Placement options (`--bind X` ...), passed to every benchmark.
    pub placement: Vec<String>,
    /// The stall watchdog of every benchmark (`--timeout`).
    pub timeout: Option<String>,
    /// `--precision PCT` and its companions, for every benchmark that can
    /// use them (empty: OSU's fixed counts).
    pub precision: Vec<String>,
    /// `--min-efficiency PCT`, for every benchmark that reports a
    /// bandwidth (the others have nothing to judge against a peak).
    pub min_efficiency: Option<String>,
}

impl BenchArgs {
    /// The arguments for commbench's `spec`, and a note for each suite
    /// option it does not take.
    pub(crate) fn for_bench(&self, spec: &BenchSpec) -> (Vec<String>, Vec<String>) {
        self.args(spec, true)
    }

    /// The arguments for OSU's own binary of `spec`: OSU options only; a
    /// note for each suite option left out (placement, `--timeout`).
    pub(crate) fn for_osu_binary(&self, spec: &BenchSpec) -> (Vec<String>, Vec<String>) {
        self.args(spec, false)
    }

    fn args(&self, spec: &BenchSpec, ours: bool) -> (Vec<String>, Vec<String>) {
        let mut args = Vec::new();
        let mut notes = Vec::new();
        for (letter, value) in &self.osu {
            if spec.takes(*letter) {
                args.push(format!("-{letter}"));
                args.extend(value.clone());
            } else {
                notes.push(format!("-{letter} left out: {} does not take it", spec.name));
            }
        }
        args.extend(self.verbatim.iter().cloned());
        for (name, extra) in &self.per_bench {
            if name == spec.name {
                args.extend(extra.iter().cloned());
            }
        }
        let precision = self.precision.get(..2).map(|p| p.join(" ")).unwrap_or_default();
        if ours {
            args.extend(self.placement.iter().cloned());
            if let Some(t) = &self.timeout {
                args.extend(["--timeout".to_string(), t.clone()]);
            }
            match spec.precision_refusal() {
                None => args.extend(self.precision.iter().cloned()),
                Some(why) if !self.precision.is_empty() => notes
                    .push(format!("{precision} left out: {} cannot use it ({why}); it ran OSU's counts", spec.name)),
                Some(_) => {}
            }
            if let Some(pct) = &self.min_efficiency {
                if crate::bench::engine::efficiency::reports_bandwidth(spec) {
                    args.extend(["--min-efficiency".to_string(), pct.clone()]);
                }
            }
        } else {
            if !self.precision.is_empty() {
                notes.push(format!("{precision} left out: OSU's own binaries run fixed counts"));
            }
            if !self.placement.is_empty() {
                notes.push(format!(
                    "{} left out: OSU's own binaries do not take it (the launcher placed the ranks)",
                    self.placement.join(" ")
                ));
            }
            if let Some(t) = &self.timeout {
                notes.push(format!("--timeout {t} left out: OSU's own binaries have no watchdog"));
            }
            if let (Some(pct), true) = (&self.min_efficiency, crate::bench::engine::efficiency::reports_bandwidth(spec))
            {
                notes.push(format!("--min-efficiency {pct} left out: OSU's own binaries know no path's peak"));
            }
        }
        (args, notes)
    }
}

/// Splits `NAME=ARGS` of `--bench-args` into the benchmark and its words.
pub(crate) fn parse_bench_args(v: &str) -> Result<(String, Vec<String>), PlanError> {
    let (name, rest) = v.split_once('=').ok_or_else(|| PlanError::BenchArgsForm(v.to_string()))?;
    let spec = lookup(name).ok_or_else(|| PlanError::BenchArgsBenchmark { name: name.to_string() })?;
    Ok((spec.name.to_string(), split_words(rest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn names_of(specs: &[&BenchSpec]) -> Vec<&'static str> {
        specs.iter().map(|s| s.name).collect()
    }

    #[test]
    fn default_set_is_the_eight() {
        let s = select(&[], &[]).unwrap();
        assert_eq!(
            names_of(&s),
            [
                "osu_latency",
                "osu_bw",
                "osu_bibw",
                "osu_mbw_mr",
                "osu_barrier",
                "osu_allreduce",
                "osu_allgather",
                "osu_alltoall"
            ]
        );
    }

    #[test]
    fn start_up_and_congestion_layouts() {
        let one = Shape { np: 1, ppn: None, nodes: 1 };
        let init = lookup("init").unwrap();
        assert_eq!(layout_for(init, &one), Ok(Layout { np: 1, ppn: None, nodes: Some(1) }));
        let fan = lookup("bw_fan_in").unwrap();
        assert_eq!(layout_for(fan, &one), Err(PlanError::NeedsTwoNodes { nodes: 1 }));
        let two = Shape { np: 8, ppn: Some(4), nodes: 2 };
        assert_eq!(layout_for(fan, &two), Ok(Layout { np: 8, ppn: Some(4), nodes: Some(2) }));
    }

    #[test]
    fn choose_and_add() {
        assert_eq!(names_of(&select(&v(&["bw", "osu_latency", "bw"]), &[]).unwrap()), ["osu_latency", "osu_bw"]);
        let s = select(&[], &v(&["bcast", "reduce", "latency"])).unwrap();
        assert_eq!(s.len(), 10);
        assert_eq!(s.last().unwrap().name, "osu_reduce");
        let e = select(&v(&["latnecy"]), &[]).unwrap_err().to_string();
        // every benchmark's short name, in the suite's order
        let known: Vec<&str> = crate::bench::registry::specs().map(|s| s.name.trim_start_matches("osu_")).collect();
        assert_eq!(&known[..4], ["latency", "bw", "bibw", "mbw_mr"]);
        assert_eq!(e, format!("unknown benchmark 'latnecy' (known: {})", known.join(", ")));
        assert_eq!(select(&v(&[" "]), &[]).unwrap_err(), PlanError::NoneChosen);
        assert_eq!(PlanError::NoneChosen.to_string(), "no benchmarks chosen");
    }

    #[test]
    fn layouts() {
        let one = Shape { np: 2, ppn: None, nodes: 1 };
        assert_eq!(
            layout_for(&crate::bench::pt2pt::latency::SPEC, &one),
            Ok(Layout { np: 2, ppn: None, nodes: Some(1) })
        );
        assert_eq!(
            layout_for(&crate::bench::collective::allreduce::SPEC, &one),
            Ok(Layout { np: 2, ppn: None, nodes: Some(1) })
        );
        let many = Shape { np: 128, ppn: Some(64), nodes: 2 };
        assert_eq!(
            layout_for(&crate::bench::pt2pt::bw::SPEC, &many),
            Ok(Layout { np: 2, ppn: Some(1), nodes: Some(2) })
        );
        assert_eq!(
            layout_for(&crate::bench::pt2pt::mbw_mr::SPEC, &many),
            Ok(Layout { np: 128, ppn: Some(64), nodes: Some(2) })
        );
        let odd = Shape { np: 5, ppn: None, nodes: 4 };
        assert_eq!(
            layout_for(&crate::bench::pt2pt::multi_lat::SPEC, &odd),
            Ok(Layout { np: 4, ppn: None, nodes: None })
        );
        assert_eq!(
            layout_for(&crate::bench::collective::barrier::SPEC, &odd),
            Ok(Layout { np: 5, ppn: None, nodes: None })
        );
        let tiny = Shape { np: 1, ppn: None, nodes: 1 };
        assert_eq!(
            layout_for(&crate::bench::pt2pt::mbw_mr::SPEC, &tiny).unwrap_err().to_string(),
            "needs an even number of ranks, at least 2 (--np is 1)"
        );
        assert_eq!(
            layout_for(&crate::bench::collective::allgather::SPEC, &tiny).unwrap_err().to_string(),
            "needs at least 2 ranks (--np is 1)"
        );
    }

    #[test]
    fn args_per_benchmark() {
        let a = BenchArgs {
            osu: vec![('m', Some("1:4096".into())), ('W', Some("512".into())), ('f', None)],
            verbatim: v(&["-i", "100"]),
            per_bench: vec![("osu_bibw".into(), v(&["-x", "5"]))],
            placement: v(&["--bind", "nic"]),
            timeout: Some("60".into()),
            precision: Vec::new(),
            min_efficiency: None,
        };
        let (args, notes) = a.for_bench(&crate::bench::pt2pt::bibw::SPEC);
        assert_eq!(args, v(&["-m", "1:4096", "-W", "512", "-i", "100", "-x", "5", "--bind", "nic", "--timeout", "60"]));
        assert_eq!(notes, ["-f left out: osu_bibw does not take it"]);
        let (args, notes) = a.for_bench(&crate::bench::collective::allreduce::SPEC);
        assert_eq!(args, v(&["-m", "1:4096", "-f", "-i", "100", "--bind", "nic", "--timeout", "60"]));
        assert_eq!(notes, ["-W left out: osu_allreduce does not take it"]);
        let (args, notes) = a.for_osu_binary(&crate::bench::pt2pt::bibw::SPEC);
        assert_eq!(args, v(&["-m", "1:4096", "-W", "512", "-i", "100", "-x", "5"]));
        assert_eq!(
            notes,
            [
                "-f left out: osu_bibw does not take it",
                "--bind nic left out: OSU's own binaries do not take it (the launcher placed the ranks)",
                "--timeout 60 left out: OSU's own binaries have no watchdog"
            ]
        );
    }

    /// --precision goes to the benchmarks that can judge it; the others
    /// (and OSU's own binaries) run fixed counts, with a note saying so.
    #[test]
    fn precision_per_benchmark() {
        let a = BenchArgs { precision: v(&["--precision", "2%", "--min-iterations", "50"]), ..BenchArgs::default() };
        // --min-efficiency goes to the benchmarks with a bandwidth only.
        let e = BenchArgs { min_efficiency: Some("80".into()), ..BenchArgs::default() };
        let (bw, lat) = (lookup("osu_bw").unwrap(), lookup("osu_latency").unwrap());
        assert_eq!(e.for_bench(bw).0, v(&["--min-efficiency", "80"]));
        assert_eq!(e.for_bench(lat).0, Vec::<String>::new());
        assert_eq!(e.for_osu_binary(bw).1, ["--min-efficiency 80 left out: OSU's own binaries know no path's peak"]);
        let (args, notes) = a.for_bench(&crate::bench::pt2pt::latency::SPEC);
        assert_eq!((args, notes.len()), (v(&["--precision", "2%", "--min-iterations", "50"]), 0));
        let (args, notes) = a.for_bench(&crate::bench::nonblocking::iallreduce::SPEC);
        assert!(args.is_empty());
        assert_eq!(
            notes,
            ["--precision 2% left out: osu_iallreduce cannot use it (its overlap figures come from two passes of the \
              full count); it ran OSU's counts"]
        );
        let (args, notes) = a.for_osu_binary(&crate::bench::pt2pt::latency::SPEC);
        assert!(args.is_empty());
        assert_eq!(notes, ["--precision 2% left out: OSU's own binaries run fixed counts"]);
    }

    #[test]
    fn bench_args_option() {
        assert_eq!(parse_bench_args("mbw_mr=-W 512").unwrap(), ("osu_mbw_mr".to_string(), v(&["-W", "512"])));
        assert_eq!(parse_bench_args("osu_bw=").unwrap(), ("osu_bw".to_string(), vec![]));
        assert_eq!(parse_bench_args("-W 512").unwrap_err().to_string(), "--bench-args '-W 512' is not NAME=ARGS");
        let e = parse_bench_args("nope=-x 1").unwrap_err().to_string();
        assert!(e.starts_with("--bench-args: unknown benchmark 'nope' (known: latency, bw,"), "{e}");
    }
}
