//! osu_get_mbw: multi-pair MPI_Get bandwidth. With np/2 pairs, every rank
//! i < np/2 gets a window (-W) of messages from its own target i + np/2 per
//! epoch, all pairs at once (osu_mbw_mr's pairing), under osu_get_bw's
//! windows and synchronisations (bench/rma/mod.rs has the kernel). The row
//! is the aggregate bandwidth: each origin's bytes over its own time,
//! summed over the pairs at rank 0. np must be even.
//!
//! OSU 7.4's own osu_get_mbw.c is broken, and its Makefile does not build
//! it: it names itself osu_get_bw, refuses any np but 2, and under its
//! default synchronisation (flush) it hangs, since rank 1 never makes the
//! window that rank 0 makes collectively. Under every other `-s` it is
//! osu_get_bw. Ours is what it was meant to be: at np 2 its output is
//! osu_get_bw's (the same title, options and layout), flush included, and
//! at any even np the same layout with the pairs' sum. OSU's unfinished
//! flush code divides the pairs' bytes by their mean time, as osu_mbw_mr
//! does; ours sums each pair's bandwidth, the same when the pairs take
//! equal times and more when they do not (a slow pair lowers only its own
//! share). `-c` is refused as OSU's is: osu_get_bw's options have no `c`.

use crate::bench::rma::{self, Op, Shape};
use crate::spec::{BenchSpec, ProcRule};

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_get_mbw", procs: ProcRule::Pairs, ..crate::bench::rma::get_bw::SPEC };

rma::one_sided_bench!(GetMbw, Op::Get, Shape::MultiBandwidth);
