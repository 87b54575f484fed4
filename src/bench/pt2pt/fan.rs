//! What osu_bw_fan_in and osu_bw_fan_out share: which rank talks to which
//! across nodes, and the windowed kernel they time.
//!
//! Nodes are told apart by the ranks' host names (MPI's processor names)
//! and taken in name order; within a node, ranks in rank order. The first
//! node is the "parent": its rank with local index l exchanges with the
//! rank of local index l on every other node. Every node must hold the same
//! number of ranks (OSU's "same ppn"), and there must be two nodes or more.
//!
//! One iteration is OSU's window of bw.rs in many directions at once: the
//! senders (the children for fan-in, the parents for fan-out) post a window
//! of messages to each of their peers, wait for them, and take a one-byte
//! acknowledgement from each peer; only the senders keep time. As OSU does,
//! every timed window is preceded by five untimed ones (OSU's validation
//! warm-up count, which these benchmarks run without `-c`). Bandwidth is all
//! bytes moved (size x window x iterations x ranks per node x child nodes)
//! over the senders' average time.
//!
//! A sender posts its windows peer by peer (OSU posts them message by
//! message across peers); every message is posted before the first wait
//! either way. With the parent node chosen by name as OSU does, a job whose
//! rank 0 is not on that node still works here (OSU's own start-up assumes
//! it is).

use crate::backend::buffer_set::BufferSet;
use crate::backend::{Control, Envelope, Memory, ReduceOp, Transport};
use crate::bench::pt2pt::bw::mb_per_s;
use crate::bench::{Kernel, Metric, Setup, SizeCase};
use crate::buffer::{AllocError, Mismatch, RECV_FILL, SEND_FILL};
use crate::datatype::Datatype;
use crate::spec::{JobShapeError, DEFAULT_VALIDATION_WARMUP};
use crate::stats::Samples;

const TAG_DATA: i32 = 100;
const TAG_ACK: i32 = 101;

/// The ranks of a job by node: `grid[node][local]` is a rank; node 0 is
/// the parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FanLayout {
    pub grid: Vec<Vec<usize>>,
}

impl FanLayout {
    /// From every rank's host name, in rank order.
    pub(crate) fn from_names(names: &[String]) -> Result<FanLayout, JobShapeError> {
        let mut hosts: Vec<&str> = names.iter().map(String::as_str).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let grid: Vec<Vec<usize>> =
            hosts.iter().map(|h| (0..names.len()).filter(|&r| names[r] == *h).collect()).collect();
        if grid.len() < 2 {
            return Err(JobShapeError::OneNode { np: names.len() });
        }
        if grid.iter().any(|n| n.len() != grid[0].len()) {
            let counts = hosts.iter().zip(&grid).map(|(h, n)| format!("{h} {}", n.len())).collect::<Vec<_>>();
            return Err(JobShapeError::UnevenNodes { counts: counts.join(", ") });
        }
        Ok(FanLayout { grid })
    }

    /// The job's layout, from every rank's host name (collective).
    pub fn of<C: Control>(world: &C) -> Result<FanLayout, JobShapeError> {
        let names = world.gather_bytes(world.host_name().as_bytes());
        let joined = names.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect::<Vec<_>>().join("\n");
        let all = world.bcast_bytes(joined.as_bytes());
        let names: Vec<String> = String::from_utf8_lossy(&all).split('\n').map(String::from).collect();
        FanLayout::from_names(&names)
    }

    pub fn nodes(&self) -> usize {
        self.grid.len()
    }

    /// Ranks per node.
    pub fn ppn(&self) -> usize {
        self.grid[0].len()
    }

    /// Node and local index of `rank`.
    fn place(&self, rank: usize) -> (usize, usize) {
        self.grid
            .iter()
            .enumerate()
            .find_map(|(n, ranks)| ranks.iter().position(|&r| r == rank).map(|l| (n, l)))
            .unwrap_or((0, 0))
    }

    pub(crate) fn is_parent(&self, rank: usize) -> bool {
        self.place(rank).0 == 0
    }

    /// Who `rank` exchanges with: for a parent, the ranks of its local
    /// index on every other node, in node order; for a child, its parent.
    pub fn peers(&self, rank: usize) -> Vec<usize> {
        let (node, local) = self.place(rank);
        if node == 0 {
            self.grid[1..].iter().map(|n| n[local]).collect()
        } else {
            vec![self.grid[0][local]]
        }
    }

    /// Bytes of one window to every child node from every local index:
    /// what OSU counts per iteration.
    pub(crate) fn window_bytes(&self, case: &SizeCase) -> f64 {
        (case.size * case.window * self.ppn() * (self.nodes() - 1)) as f64
    }
}

impl FanLayout {
    /// OSU's figure: every byte of every timed window over the senders'
    /// average time (`sum_secs` their timed seconds added up).
    pub fn mbps(&self, case: &SizeCase, sum_secs: f64, senders: f64) -> f64 {
        mb_per_s(self.window_bytes(case) * case.iterations as f64, sum_secs / senders.max(1.0))
    }
}

/// Which way the data flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Every child node sends to the parent node (osu_bw_fan_in).
    In,
    /// The parent node sends to every child node (osu_bw_fan_out).
    Out,
}

pub(crate) struct FanKernel<T: Transport> {
    layout: FanLayout,
    sender: bool,
    peers: Vec<usize>,
    /// The rank whose per-iteration times `-z` and the CSV describe, as in
    /// OSU: the first child's for fan-in, rank 0's (a parent) for fan-out.
    reporter: usize,
    data: BufferSet<T::Buf>,
    ack: T::Buf,
    reqs: T::Requests,
}

impl<T: Transport> FanKernel<T> {
    pub fn new(s: &Setup<T>, dir: Direction) -> Result<FanKernel<T>, AllocError> {
        // The job's start checked the layout (one line from rank 0 if it
        // was wrong); host names do not change since.
        let layout = FanLayout::of(s.t.world()).map_err(|_| AllocError { bytes: 0 })?;
        let rank = s.rank();
        let parent = layout.is_parent(rank);
        let sender = parent == (dir == Direction::Out);
        let peers = layout.peers(rank);
        let reporter = if dir == Direction::In { layout.grid[1][0] } else { layout.grid[0][0] };
        let multiple = s.opts.buffers == crate::options::BufferMode::Multiple;
        let bytes = if multiple { 1 } else { s.max_size };
        Ok(FanKernel {
            sender,
            reporter,
            data: BufferSet::new(s.t, bytes, s.max_window, multiple)?,
            ack: s.t.memory().alloc(1)?,
            reqs: s.t.requests(s.max_window * peers.len()),
            peers,
            layout,
        })
    }

    /// One window to or from every peer; a sender returns its time.
    #[inline(always)]
    fn window(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        let w = case.window;
        let env = |peer: usize| Envelope { count: case.count, datatype: case.datatype, peer, tag: TAG_DATA };
        let ack = |peer: usize| Envelope { count: 1, datatype: Datatype::Char, peer, tag: TAG_ACK };
        if self.sender {
            let t0 = t.now();
            for (n, &p) in self.peers.iter().enumerate() {
                t.isend_window(&self.data, env(p), &mut self.reqs, n * w);
            }
            t.waitall(&mut self.reqs, 0, w * self.peers.len());
            for &p in &self.peers {
                t.recv(&mut self.ack, ack(p));
            }
            t.complete();
            Some(t.now() - t0)
        } else {
            for (n, &p) in self.peers.iter().enumerate() {
                t.irecv_window(&mut self.data, env(p), &mut self.reqs, n * w);
            }
            t.waitall(&mut self.reqs, 0, w * self.peers.len());
            for &p in &self.peers {
                t.send(&self.ack, ack(p));
            }
            None
        }
    }
}

impl<T: Transport> Kernel<T> for FanKernel<T> {
    fn prepare(&mut self, t: &T, case: &SizeCase) -> Result<(), AllocError> {
        self.data.reshape(t, case.size, case.window)?;
        self.data.fill(t, case.size, if self.sender { SEND_FILL } else { RECV_FILL });
        Ok(())
    }

    /// OSU repeats the window untimed before each timed one, `-c` or not
    /// (these benchmarks have no `-c`).
    fn begin_iteration(&mut self, t: &T, case: &SizeCase, _i: usize, _validation: Option<usize>) {
        for _ in 0..DEFAULT_VALIDATION_WARMUP {
            self.window(t, case);
        }
    }

    fn fill_validation(&mut self, _t: &T, _case: &SizeCase, _i: usize) {}

    #[inline(always)]
    fn step(&mut self, t: &T, case: &SizeCase) -> Option<f64> {
        self.window(t, case)
    }

    fn check(&self, _t: &T, _case: &SizeCase, _i: usize) -> Option<Mismatch> {
        None
    }

    fn per_iteration(&self, case: &SizeCase, secs: f64) -> f64 {
        mb_per_s(self.layout.window_bytes(case), secs)
    }

    fn metric(&mut self, t: &T, case: &SizeCase, samples: &Samples) -> Metric {
        let w = t.world();
        let senders = if self.sender { 1 } else { 0 };
        let count = w.allreduce_sum_u64(senders) as f64;
        let sum = w.reduce_f64(if self.sender { samples.total() } else { 0.0 }, ReduceOp::Sum);
        let mine: Vec<u8> = if w.rank() == self.reporter {
            samples.as_slice().iter().flat_map(|s| s.to_le_bytes()).collect()
        } else {
            Vec::new()
        };
        let all = w.gather_bytes(&mine);
        let secs = all.get(self.reporter).map(|b| {
            b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect::<Vec<f64>>()
        });
        Metric { value: self.layout.mbps(case, sum, count), iteration_secs: secs, ..Metric::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn layout_by_host_name() {
        // rank order b, a, b, a: node "a" (ranks 1, 3) is the parent.
        let l = FanLayout::from_names(&names(&["b", "a", "b", "a"])).unwrap();
        assert_eq!(l.grid, vec![vec![1, 3], vec![0, 2]]);
        assert_eq!((l.nodes(), l.ppn()), (2, 2));
        assert!(l.is_parent(3) && !l.is_parent(0));
        assert_eq!((l.peers(1), l.peers(3), l.peers(2)), (vec![0], vec![2], vec![3]));
        let l = FanLayout::from_names(&names(&["n1", "n1", "n2", "n2", "n3", "n3"])).unwrap();
        assert_eq!(l.peers(0), vec![2, 4]);
        assert_eq!(l.peers(1), vec![3, 5]);
        assert_eq!(l.peers(5), vec![1]);
    }

    #[test]
    fn one_node_or_uneven_nodes_are_refused() {
        assert_eq!(
            FanLayout::from_names(&names(&["a", "a"])).unwrap_err().to_string(),
            "Please run this benchmark on more than 1 node (all 2 processes are on one node)"
        );
        assert_eq!(
            FanLayout::from_names(&names(&["a", "b", "a"])).unwrap_err().to_string(),
            "Please run this benchmark with same ppn for all nodes (processes per node: a 2, b 1)"
        );
    }

    #[test]
    fn bytes_counted_as_osu() {
        let l = FanLayout::from_names(&names(&["a", "a", "b", "b", "c", "c"])).unwrap();
        let case = SizeCase {
            datatype: Datatype::Char,
            size: 1000,
            count: 1000,
            iterations: 10,
            warmup: 1,
            window: 64,
            calls: crate::bench::Calls::ALONE,
        };
        // 1000 B x 64 x 2 per node x 2 child nodes
        assert_eq!(l.window_bytes(&case), 256_000.0);
        // fan-in: four senders whose 10 timed windows took 0.2 s in all
        // each (0.8 s summed): 2.56 MB over 0.2 s.
        assert!((l.mbps(&case, 0.8, 4.0) - 12.8).abs() < 1e-9);
        // fan-out: the two parents, 0.1 s each: the same bytes in half the time.
        assert!((l.mbps(&case, 0.2, 2.0) - 25.6).abs() < 1e-9);
    }
}
