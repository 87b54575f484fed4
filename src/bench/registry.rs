//! Every benchmark commbench has, in the order the suite runs them: its
//! spec (name, title, options, process rule, metric) and its entry point.
//! The binaries, the suite, compare, plot and the tests all read this list;
//! a new benchmark is one file in src/bench, one binary in src/bin and one
//! line in the `benchmarks!` list of src/bench/mod.rs.

use crate::backend::Capability;
use crate::bench::{Bench, Need};
use crate::options::Backend;
use crate::spec::{BenchSpec, CollectiveCall};

/// One benchmark. Its binary (src/bin) calls the runner that fits it:
/// `runner::main`, `main_rma` or `main_startup`.
#[derive(Clone, Copy)]
pub struct Entry {
    pub spec: &'static BenchSpec,
    /// What its kernel needs of a transport (from its [`Bench::Needs`]);
    /// None for osu_init and osu_hello, which time MPI's own start-up.
    pub needs: Option<Capability>,
    /// The collective operation it times (None for the others).
    pub collective: Option<CollectiveCall>,
}

/// What the `benchmarks!` list takes: every [`Bench`], and the start-up
/// benchmarks (bench/startup/init.rs, bench/startup/hello.rs) and one-sided ones
/// (bench/rma/mod.rs), which have their own runners.
pub trait Registered {
    const ENTRY: Entry;
}

impl<B: Bench> Registered for B {
    const ENTRY: Entry =
        Entry { spec: B::SPEC, needs: Some(<B::Needs as Need>::CAPABILITY), collective: B::COLLECTIVE };
}

/// The benchmarks `commbench suite` and `scripts/run.sh` run by default,
/// in the suite's order: the tuning guide's runs plus alltoall (`commbench
/// list --default`).
pub const DEFAULT_SET: &[&str] = &[
    crate::bench::pt2pt::latency::SPEC.name,
    crate::bench::pt2pt::bw::SPEC.name,
    crate::bench::pt2pt::bibw::SPEC.name,
    crate::bench::pt2pt::mbw_mr::SPEC.name,
    crate::bench::collective::barrier::SPEC.name,
    crate::bench::collective::allreduce::SPEC.name,
    crate::bench::collective::allgather::SPEC.name,
    crate::bench::collective::alltoall::SPEC.name,
];

impl Entry {
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The backends whose transports have what this benchmark needs.
    pub(crate) fn backends(&self) -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|&b| match self.needs {
                Some(cap) => crate::backend::provides(b, cap),
                None => b == Backend::Mpi,
            })
            .collect()
    }

    /// Whether every rank takes part in one collective operation (rather
    /// than pairs of ranks exchanging messages, or MPI's start-up).
    pub fn is_collective(&self) -> bool {
        !self.spec.is_point_to_point() && !self.spec.is_startup()
    }
}

pub use crate::bench::BENCHMARKS;

/// Every benchmark's spec, in the suite's order.
pub fn specs() -> impl Iterator<Item = &'static BenchSpec> {
    BENCHMARKS.iter().map(|e| e.spec)
}

/// A benchmark by its name: an OSU one with or without the `osu_`
/// prefix, or one of [`NCCL_TESTS_ONLY`] by its exact name.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    let n = name.trim();
    let osu = n.strip_prefix("osu_").unwrap_or(n);
    BENCHMARKS
        .iter()
        .find(|e| e.spec.name.strip_prefix("osu_") == Some(osu))
        .or_else(|| NCCL_TESTS_ONLY.iter().find(|e| e.spec.name == n))
}

/// The benchmarks only the nccl-tests front end runs (a `*_perf` binary
/// with no OSU twin): outside the OSU list, the suite and `commbench
/// list`, but found by [`lookup`] so that the core and the readers of
/// their results treat them as any other.
pub const NCCL_TESTS_ONLY: &[Entry] = &[
    <crate::bench::collective::sendrecv::SendRecv as Registered>::ENTRY,
    <crate::bench::collective::hypercube::HyperCube as Registered>::ENTRY,
    <crate::bench::collective::alltoallv_traffic::AlltoallvTraffic as Registered>::ENTRY,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, e) in BENCHMARKS.iter().enumerate() {
            assert!(e.name().starts_with("osu_"), "{}", e.name());
            assert!(BENCHMARKS[..i].iter().all(|o| o.name() != e.name()), "{} twice", e.name());
            assert_eq!(lookup(e.name()).map(Entry::name), Some(e.name()));
            assert_eq!(lookup(e.name().trim_start_matches("osu_")).map(Entry::name), Some(e.name()));
        }
        assert!(lookup("nope").is_none() && lookup("osu_").is_none());
        for e in NCCL_TESTS_ONLY {
            assert!(!e.name().starts_with("osu_") && BENCHMARKS.iter().all(|o| o.name() != e.name()), "{}", e.name());
            assert_eq!(lookup(e.name()).map(Entry::name), Some(e.name()));
            assert!(lookup(&format!("osu_{}", e.name())).is_none(), "{}", e.name());
        }
        assert!(lookup("allreduce").unwrap().is_collective() && !lookup("bw").unwrap().is_collective());
        assert!(DEFAULT_SET.iter().all(|n| lookup(n).is_some_and(|e| e.name() == *n)), "{DEFAULT_SET:?}");
    }

    /// A spec spread from `BenchSpec::DEFAULT` still names what only it
    /// can say: its title, its letters (always -h and -v) and, when it
    /// measures sizes, its largest.
    #[test]
    fn every_spec_names_its_own_fields() {
        for e in BENCHMARKS {
            let s = e.spec;
            assert!(s.title.starts_with("OSU MPI"), "{}: title '{}'", s.name, s.title);
            assert!(s.takes('h') && s.takes('v'), "{}: letters '{}'", s.name, s.letters);
            let startup = matches!(s.name, "osu_init" | "osu_hello");
            assert!(startup || s.max_size >= s.min_size.max(1), "{}: sizes {}..{}", s.name, s.min_size, s.max_size);
        }
    }
}
