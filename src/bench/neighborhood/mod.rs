//! What the neighbourhood collectives share (osu_neighbor_allgather[v],
//! osu_neighbor_alltoall[v|w] and their osu_ineighbor_* forms): the
//! process topology `-N` chooses, worked out on each rank ([`adjacency`]:
//! a periodic Cartesian grid as OSU builds it, or a graph file's edges)
//! and checked against the job's size ([`fits`]); [`Nbr`], the collective
//! over it (buffers, fills, checks, layouts and the call, for the shared
//! blocking kernel and, as the twin, the overlap kernel); and the two
//! macros that declare a program in a few lines.
//!
//! As in OSU, the topology becomes a distributed-graph communicator
//! (MPI_Dist_graph_create_adjacent, weights 1, no reordering) before the
//! first size, outside any timed region, and rank 0 prints the grid's
//! shape and the average time that creation took above the table.

pub mod ineighbor_allgather;
pub mod ineighbor_allgatherv;
pub mod ineighbor_alltoall;
pub mod ineighbor_alltoallv;
pub mod ineighbor_alltoallw;
pub mod neighbor_allgather;
pub mod neighbor_allgatherv;
pub mod neighbor_alltoall;
pub mod neighbor_alltoallv;
pub mod neighbor_alltoallw;

use std::io::Write;
use std::marker::PhantomData;

use crate::backend::NonBlockingCollectives;
use crate::backend::{Adjacency, Blocks, ByteBlocks, Control, NeighborCollectives, NeighborGraph, ReduceOp};
use crate::bench::collective::{Call, Collective, Ranks};
use crate::bench::{needs, Setup, SizeCase};
use crate::buffer::{check_values, fill_zero, write_values, AllocError, Mismatch};
use crate::options::Neighborhood;
use crate::spec::{BenchSpec, JobShapeError, Op};

/// The most edges a graph file may list: far beyond OSU's (500 per
/// rank), and few enough that the run record, which keeps the edges,
/// stays well within what `commbench compare` and `history` read back.
pub(crate) const MAX_GRAPH_EDGES: usize = 1_000_000;

/// Why a graph file's text is refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EdgesError {
    /// A line that is not an edge, or an edge listed again: what and where.
    Pattern(String),
    /// More than [`MAX_GRAPH_EDGES`] edges: the line of the first one over.
    TooMany { line: usize },
}

/// Reads a graph file's edges: one `from,to` pair of ranks a line, lines
/// starting with `#` and blank lines skipped. An edge listed twice is
/// refused (so no rank has more neighbours than the job has ranks), and so
/// is a file of more than [`MAX_GRAPH_EDGES`]. Linear in the file's size.
pub(crate) fn parse_edges(text: &str) -> Result<Vec<(usize, usize)>, EdgesError> {
    parse_edges_within(text, MAX_GRAPH_EDGES)
}

/// [`parse_edges`] with at most `max` edges.
fn parse_edges_within(text: &str, max: usize) -> Result<Vec<(usize, usize)>, EdgesError> {
    let mut edges = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let rank = |w: &str| w.trim().parse::<usize>().ok().filter(|&r| r < i32::MAX as usize);
        let edge = match line.split_once(',') {
            Some((a, b)) => rank(a).zip(rank(b)),
            None => None,
        };
        let edge =
            edge.ok_or_else(|| EdgesError::Pattern(format!("line {} is not two ranks 'from,to': {line:?}", n + 1)))?;
        if edges.len() == max {
            return Err(EdgesError::TooMany { line: n + 1 });
        }
        if !seen.insert(edge) {
            return Err(EdgesError::Pattern(format!("line {} lists the edge {},{} again", n + 1, edge.0, edge.1)));
        }
        edges.push(edge);
    }
    Ok(edges)
}

/// MPI_Dims_create(np, d) for dimensions all free: the d factors of `np`
/// closest to each other (the smallest largest factor, then the largest
/// smallest), in non-increasing order.
pub(crate) fn dims_create(np: usize, d: usize) -> Vec<usize> {
    /// Every way to write `left` as `slots` factors, none above `cap`,
    /// in non-increasing order, each passed to `found`.
    fn each(left: usize, slots: usize, cap: usize, cur: &mut Vec<usize>, found: &mut dyn FnMut(&[usize])) {
        if slots == 1 {
            if left <= cap {
                cur.push(left);
                found(cur);
                cur.pop();
            }
            return;
        }
        for f in (1..=cap.min(left)).filter(|f| left % f == 0) {
            cur.push(f);
            each(left / f, slots - 1, f, cur, found);
            cur.pop();
        }
    }
    let (np, d) = (np.max(1), d.max(1));
    let mut best: Option<Vec<usize>> = None;
    each(np, d, np, &mut Vec::new(), &mut |dims| {
        let spread = |v: &[usize]| (v[0] - v[v.len() - 1], v[0]);
        if best.as_deref().is_none_or(|b| spread(dims) < spread(b)) {
            best = Some(dims.to_vec());
        }
    });
    best.unwrap_or_else(|| vec![np])
}

/// Whether the topology can be built on `np` ranks: a Cartesian radius no
/// more than (smallest dimension - 1) / 2, so that no rank is its own
/// neighbour or another's twice (OSU's rule); a graph naming only ranks
/// the job has.
pub fn fits(n: &Neighborhood, np: usize) -> Result<(), JobShapeError> {
    match n {
        Neighborhood::Cart { dims, radius } => {
            let shape = dims_create(np, *dims);
            let max = (shape.iter().copied().min().unwrap_or(1) - 1) / 2;
            if *radius > max {
                let shape = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
                return Err(JobShapeError::NeighborhoodRadius { dims: *dims, radius: *radius, np, shape, max });
            }
            Ok(())
        }
        Neighborhood::Graph { path, edges } => match edges.iter().map(|&(a, b)| a.max(b)).max() {
            Some(node) if node >= np => {
                Err(JobShapeError::NeighborhoodNodes { path: path.display().to_string(), node })
            }
            _ => Ok(()),
        },
    }
}

/// Rank `rank`'s neighbours among `np` ranks, which [`fits`] accepted.
///
/// On the grid (row-major ranks, every dimension periodic) both lists are
/// the ranks at every displacement in [-R, R] along each dimension but
/// none, in lexicographic order of the displacements, the last dimension
/// varying fastest (OSU's order). In a graph, the destinations are the
/// `rank,to` edges and the sources the `from,rank` edges, in file order.
pub fn adjacency(n: &Neighborhood, rank: usize, np: usize) -> Adjacency {
    match n {
        Neighborhood::Cart { dims, radius } => {
            let shape = dims_create(np, *dims);
            let r = *radius as isize;
            let mut coords = vec![0usize; shape.len()];
            let mut left = rank;
            for (c, &d) in coords.iter_mut().zip(&shape).rev() {
                *c = left % d;
                left /= d;
            }
            let mut disp = vec![-r; shape.len()];
            let mut ranks = Vec::new();
            loop {
                let mut at = 0usize;
                for ((&c, &d), &x) in coords.iter().zip(&shape).zip(&disp) {
                    at = at * d + (c as isize + x).rem_euclid(d as isize) as usize;
                }
                if at != rank {
                    ranks.push(at);
                }
                // The next displacement, the last dimension fastest.
                let Some(k) = (0..disp.len()).rev().find(|&k| disp[k] < r) else { break };
                disp[k] += 1;
                disp[k + 1..].iter_mut().for_each(|x| *x = -r);
            }
            Adjacency { sources: ranks.clone(), destinations: ranks }
        }
        Neighborhood::Graph { edges, .. } => Adjacency {
            sources: edges.iter().filter(|e| e.1 == rank).map(|e| e.0).collect(),
            destinations: edges.iter().filter(|e| e.0 == rank).map(|e| e.1).collect(),
        },
    }
}

/// OSU's line above the table for a grid: `Dimensions size = 3 1 `.
pub(crate) fn shape_line(n: &Neighborhood, np: usize) -> Option<String> {
    match n {
        Neighborhood::Cart { dims, .. } => {
            Some(dims_create(np, *dims).iter().fold("Dimensions size = ".to_string(), |s, d| s + &format!("{d} ")))
        }
        Neighborhood::Graph { .. } => None,
    }
}

/// What one neighbourhood program times ([`Nbr`] does the rest).
pub trait NeighborOp {
    const SPEC: &'static BenchSpec;
    /// One of `Op::Neighbor*`.
    const OP: Op;
}

/// Whether `op` sends one block to every neighbour (allgather forms)
/// rather than a block each (all-to-all forms).
const fn gathers(op: Op) -> bool {
    matches!(op, Op::NeighborAllgather | Op::NeighborAllgatherv)
}

/// The value every element rank `from` sends rank `to` carries in
/// iteration i (the gathers send `to = from` to all).
fn sent(from: usize, to: usize, np: usize, i: usize) -> u64 {
    let f = (from * np) as u64;
    f + to as u64 + (i as u64 + 1) * (f + 1) * (to as u64 + 2)
}

/// A neighbourhood collective over its topology: the collective the
/// shared kernels drive.
pub struct Nbr<K: NeighborOp> {
    graph: NeighborGraph,
    np: usize,
    /// The v form's layouts at the current size (send, receive).
    blocks: (Blocks, Blocks),
    /// The w form's.
    byte_blocks: (ByteBlocks, ByteBlocks),
    op: PhantomData<K>,
}

impl<K: NeighborOp> Nbr<K> {
    /// The collective over `graph` in a job of `np` ranks.
    pub fn over(graph: NeighborGraph, np: usize) -> Nbr<K> {
        Nbr { graph, np, blocks: Default::default(), byte_blocks: Default::default(), op: PhantomData }
    }

    /// Works out this rank's neighbours, builds the topology on every
    /// rank (timed, as OSU times it, and averaged over ranks) and, where
    /// stdout has OSU's layout, prints on rank 0 the grid's shape and that
    /// time above the table.
    pub fn build<T: NeighborCollectives>(s: &Setup<T>) -> Result<Nbr<K>, AllocError> {
        let (t, n, np) = (s.t, &s.opts.neighborhood, s.np());
        let w = t.world();
        let printing = w.rank() == 0 && s.opts.format.osu_preamble();
        if let (true, Some(line)) = (printing, shape_line(n, np)) {
            let _ = writeln!(std::io::stdout(), "{line}");
        }
        let adj = adjacency(n, s.rank(), np);
        let t0 = t.now();
        let graph = t.neighbor_graph(adj);
        let secs = w.reduce_f64(t.now() - t0, ReduceOp::Sum);
        if printing {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "Time took to create topology graph:{:.2} us.", secs * 1e6 / np as f64);
            let _ = out.flush();
        }
        Ok(Nbr::over(graph, np))
    }

    fn degrees(&self) -> (usize, usize) {
        let a = self.graph.adjacency();
        (a.sources.len(), a.destinations.len())
    }

    /// Starts the non-blocking form (the twin's call, without waiting).
    ///
    /// # Safety
    /// `send`, `recv` and this collective stay untouched until `t.nb_wait()`.
    #[inline(always)]
    pub unsafe fn start<T: NonBlockingCollectives>(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase) {
        let (g, c, dt) = (&self.graph, case.count, case.datatype);
        // SAFETY: passed on from the caller.
        unsafe {
            match K::OP {
                Op::NeighborAllgather => t.start(|t| t.neighbor_allgather(g, send, recv, c, dt)),
                Op::NeighborAllgatherv => t.start(|t| t.neighbor_allgatherv(g, send, recv, c, &self.blocks.1, dt)),
                Op::NeighborAlltoall => t.start(|t| t.neighbor_alltoall(g, send, recv, c, dt)),
                Op::NeighborAlltoallv => {
                    t.start(|t| t.neighbor_alltoallv(g, send, recv, &self.blocks.0, &self.blocks.1, dt))
                }
                Op::NeighborAlltoallw => {
                    t.start(|t| t.neighbor_alltoallw(g, send, recv, &self.byte_blocks.0, &self.byte_blocks.1, dt))
                }
                _ => unreachable!("{:?} is not a neighbourhood collective", K::OP),
            }
        }
    }
}

impl<K: NeighborOp> Collective for Nbr<K> {
    const SPEC: &'static BenchSpec = K::SPEC;
    type Needs = needs::NeighborCollectives;
    const OP: Op = K::OP;

    /// No neighbours: what the blanket benchmark of a bare collective
    /// would run; the programs build theirs with [`Nbr::build`].
    fn new(np: usize) -> Self {
        Nbr::over(NeighborGraph::detached(Adjacency::default()), np)
    }

    /// OSU's buffers hold a block per rank of the job (and the send
    /// buffer of the gathers one block); a graph may give a rank as many
    /// neighbours as ranks, itself included.
    fn buffer_bytes(&self, size: usize, np: usize) -> (usize, usize) {
        let (i, o) = self.degrees();
        let n = np.max(i).max(o);
        (if gathers(K::OP) { size } else { size * n }, size * n)
    }

    fn prepare(&mut self, case: &SizeCase, _job: &Ranks) {
        let ((i, o), (c, dt)) = (self.degrees(), (case.count, case.datatype));
        self.blocks = (Blocks::end_to_end(o, c, dt, false), Blocks::end_to_end(i, c, dt, false));
        self.byte_blocks = (ByteBlocks::end_to_end(o, c, dt), ByteBlocks::end_to_end(i, c, dt));
    }

    /// OSU's validation repetitions write into the real receive buffer.
    fn warm_up_elsewhere(&self) -> bool {
        false
    }

    fn sync_after_loop(&self) -> bool {
        true
    }

    /// nccl-tests has no neighbourhood test.
    fn bandwidth(&self, _size: usize, _np: usize) -> Option<(f64, f64)> {
        None
    }

    fn fill(&self, send: &mut [u8], recv: &mut [u8], case: &SizeCase, job: &Ranks, i: usize) {
        let (c, dt, me, adj) = (case.count, case.datatype, job.rank, self.graph.adjacency());
        if gathers(K::OP) {
            write_values(send, dt, 0..c, |_| sent(me, me, self.np, i));
        } else {
            write_values(send, dt, 0..c * adj.destinations.len(), |k| sent(me, adj.destinations[k / c], self.np, i));
        }
        fill_zero(recv, dt, c * adj.sources.len());
    }

    /// Block k of the output came from source k.
    fn check(&self, recv: &[u8], case: &SizeCase, job: &Ranks, i: usize) -> Option<Mismatch> {
        let (c, adj) = (case.count, self.graph.adjacency());
        let to = |from: usize| if gathers(K::OP) { from } else { job.rank };
        let want = |k: usize| {
            let from = adj.sources[k / c];
            sent(from, to(from), self.np, i)
        };
        check_values(recv, case.datatype, 0..c * adj.sources.len(), want, 1)
    }
}

impl<K: NeighborOp, T: NeighborCollectives> Call<T> for Nbr<K> {
    #[inline(always)]
    fn call(&self, t: &T, send: &T::Buf, recv: &mut T::Buf, case: &SizeCase, _job: &Ranks, _i: usize) {
        let (g, c, dt) = (&self.graph, case.count, case.datatype);
        match K::OP {
            Op::NeighborAllgather => t.neighbor_allgather(g, send, recv, c, dt),
            Op::NeighborAllgatherv => t.neighbor_allgatherv(g, send, recv, c, &self.blocks.1, dt),
            Op::NeighborAlltoall => t.neighbor_alltoall(g, send, recv, c, dt),
            Op::NeighborAlltoallv => t.neighbor_alltoallv(g, send, recv, &self.blocks.0, &self.blocks.1, dt),
            Op::NeighborAlltoallw => t.neighbor_alltoallw(g, send, recv, &self.byte_blocks.0, &self.byte_blocks.1, dt),
            _ => unreachable!("{:?} is not a neighbourhood collective", K::OP),
        }
    }
}

/// The message buffers one rank allocates, as OSU sizes them (a block per
/// rank of the job).
pub(crate) fn message_bytes<K: NeighborOp>(plan: &crate::bench::engine::plan::Plan, np: usize) -> u128 {
    let (send, recv) = Nbr::<K>::new(np).buffer_bytes(plan.max_size, np);
    (send + recv) as u128
}

/// Declares a blocking neighbourhood program: the unit type, its
/// [`NeighborOp`] and its benchmark (the shared collective kernel over
/// [`Nbr`], built with its topology).
macro_rules! neighbor_collective {
    ($(#[$doc:meta])* $name:ident, $spec:expr, $op:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::bench::neighborhood::NeighborOp for $name {
            const SPEC: &'static $crate::spec::BenchSpec = &$spec;
            const OP: $crate::spec::Op = $op;
        }

        impl $crate::bench::Bench for $name {
            const SPEC: &'static $crate::spec::BenchSpec = &$spec;
            type Needs = $crate::bench::needs::NeighborCollectives;
            const COLLECTIVE: Option<$crate::spec::CollectiveCall> =
                Some($crate::spec::CollectiveCall { op: $op, nonblocking: false });

            fn message_bytes(plan: &$crate::bench::engine::plan::Plan, np: usize) -> u128 {
                $crate::bench::neighborhood::message_bytes::<$name>(plan, np)
            }
        }

        impl<T: $crate::backend::NeighborCollectives> $crate::bench::BenchOn<T> for $name {
            type Kernel = $crate::bench::collective::CollKernel<$crate::bench::neighborhood::Nbr<$name>, T>;

            fn kernel(s: &$crate::bench::Setup<T>) -> Result<Self::Kernel, $crate::buffer::AllocError> {
                let c = $crate::bench::neighborhood::Nbr::build(s)?;
                $crate::bench::collective::CollKernel::new(s, c)
            }
        }
    };
}
pub(crate) use neighbor_collective;

/// Declares a non-blocking neighbourhood program over its blocking twin:
/// the unit type, its non-blocking start (the twin's operation) and its
/// benchmark (the overlap kernel over the twin's [`Nbr`]).
macro_rules! ineighbor_collective {
    ($(#[$doc:meta])* $name:ident over $twin:ty, $spec:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::bench::nonblocking::NonBlocking for $name {
            const SPEC: &'static $crate::spec::BenchSpec = &$spec;
            type Blocking = $crate::bench::neighborhood::Nbr<$twin>;

            #[inline(always)]
            unsafe fn start<T: $crate::backend::NonBlockingCollectives>(
                c: &Self::Blocking,
                t: &T,
                send: &T::Buf,
                recv: &mut T::Buf,
                case: &$crate::bench::SizeCase,
                _job: &$crate::bench::collective::Ranks,
                _i: usize,
            ) {
                // SAFETY: passed on from the caller.
                unsafe { c.start(t, send, recv, case) }
            }
        }

        impl $crate::bench::Bench for $name {
            const SPEC: &'static $crate::spec::BenchSpec = &$spec;
            type Needs = $crate::bench::needs::NonBlockingCollectives;
            const COLLECTIVE: Option<$crate::spec::CollectiveCall> = Some($crate::spec::CollectiveCall {
                op: <$twin as $crate::bench::neighborhood::NeighborOp>::OP,
                nonblocking: true,
            });

            fn message_bytes(plan: &$crate::bench::engine::plan::Plan, np: usize) -> u128 {
                $crate::bench::neighborhood::message_bytes::<$twin>(plan, np)
            }
        }

        impl<T: $crate::backend::NonBlockingCollectives> $crate::bench::BenchOn<T> for $name {
            type Kernel = $crate::bench::nonblocking::NbcKernel<$name, T>;

            fn kernel(s: &$crate::bench::Setup<T>) -> Result<Self::Kernel, $crate::buffer::AllocError> {
                let c = $crate::bench::neighborhood::Nbr::build(s)?;
                $crate::bench::nonblocking::NbcKernel::with(s, c)
            }
        }
    };
}
pub(crate) use ineighbor_collective;

#[cfg(test)]
mod tests;
