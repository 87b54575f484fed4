//! A team: the ranks of a job whose processes each drive several GPUs
//! (nccl-tests' `-t` threads times `-g` GPUs), one host thread, a *lane*,
//! per GPU. Each lane is a rank of its own, numbered as nccl-tests numbers
//! its GPUs: process rank x lanes + lane. The team is the control plane
//! of such a job: between the lanes of one process it is shared memory,
//! between processes the leader's [`Control`] (MPI), which only lane 0
//! calls, the thread that started MPI, so MPI needs no more thread support
//! than a benchmark of one rank per process asks. With one lane the team
//! is its leader, call for call.
//!
//! Every lane must call the team's operations in the same order, as with
//! any collective; a lane that stops calling leaves the others waiting,
//! which is the watchdog's to end, as with a rank that hangs.

use std::any::Any;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::{Control, ReduceOp};

/// What the lanes of one process share; made by the process's main
/// thread before the lanes start.
pub(crate) struct Shared {
    lanes: usize,
    /// The process's rank and size in the leader's world, its host.
    proc_rank: usize,
    procs: usize,
    host: String,
    round: Mutex<Round>,
    moved: Condvar,
}

type Parcel = Box<dyn Any + Send>;

/// The operation under way: each lane's input, then each lane's output.
struct Round {
    /// Counts finished rounds: a lane waits for it to move.
    generation: u64,
    inputs: Vec<Option<Parcel>>,
    arrived: usize,
    outputs: Vec<Option<Parcel>>,
    /// Outputs of the last round not yet taken.
    untaken: usize,
}

impl Shared {
    /// The lanes of this process (`lanes` of them, 1 or more) in the
    /// world `leader` belongs to.
    pub fn new<C: Control>(lanes: usize, leader: &C) -> Shared {
        let lanes = lanes.max(1);
        Shared {
            lanes,
            proc_rank: leader.rank(),
            procs: leader.size(),
            host: leader.host_name(),
            round: Mutex::new(Round {
                generation: 0,
                inputs: (0..lanes).map(|_| None).collect(),
                arrived: 0,
                outputs: (0..lanes).map(|_| None).collect(),
                untaken: 0,
            }),
            moved: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Round> {
        self.round.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, Round>) -> MutexGuard<'a, Round> {
        self.moved.wait(g).unwrap_or_else(|p| p.into_inner())
    }
}

/// One lane's view of the team: a rank of the job.
pub(crate) struct Team<'a, C> {
    shared: &'a Shared,
    lane: usize,
    /// The leader's world: lane 0's only.
    leader: Option<&'a C>,
}

impl<'a, C: Control> Team<'a, C> {
    /// Lane 0, on the thread that owns `leader`.
    pub fn leader(shared: &'a Shared, leader: &'a C) -> Team<'a, C> {
        Team { shared, lane: 0, leader: Some(leader) }
    }

    /// Lane `lane` (1 or more), on a thread of its own.
    pub fn follower(shared: &'a Shared, lane: usize) -> Team<'a, C> {
        assert!(lane > 0 && lane < shared.lanes, "lane {lane} of {}", shared.lanes);
        Team { shared, lane, leader: None }
    }

    /// One operation of the team: every lane gives `mine`; lane 0, once all
    /// have, calls `on_leader` with them in lane order and the leader's
    /// world, and each lane gets the output at its place.
    fn round<T: Send + 'static, R: Send + 'static>(&self, mine: T, on_leader: impl FnOnce(&C, Vec<T>) -> Vec<R>) -> R {
        let sh = self.shared;
        if sh.lanes == 1 {
            let leader = self.leader.unwrap_or_else(|| unreachable!("a team of one lane is its leader"));
            return on_leader(leader, vec![mine]).pop().unwrap_or_else(|| unreachable!("one output per lane"));
        }
        let mut r = sh.lock();
        // The last round's outputs all taken before this one's are made.
        while r.untaken > 0 {
            r = sh.wait(r);
        }
        let generation = r.generation;
        r.inputs[self.lane] = Some(Box::new(mine));
        r.arrived += 1;
        sh.moved.notify_all();
        if let Some(leader) = self.leader {
            while r.arrived < sh.lanes {
                r = sh.wait(r);
            }
            let inputs: Vec<T> = r.inputs.iter_mut().map(|p| take::<T>(p)).collect();
            r.arrived = 0;
            // MPI may block on other processes: the lanes wait unlocked.
            drop(r);
            let outputs = on_leader(leader, inputs);
            assert_eq!(outputs.len(), sh.lanes, "one output per lane");
            let mut r = sh.lock();
            for (slot, out) in r.outputs.iter_mut().zip(outputs) {
                *slot = Some(Box::new(out));
            }
            r.untaken = sh.lanes - 1;
            r.generation += 1;
            sh.moved.notify_all();
            return take::<R>(&mut r.outputs[0]);
        }
        while r.generation == generation {
            r = sh.wait(r);
        }
        let out = take::<R>(&mut r.outputs[self.lane]);
        r.untaken -= 1;
        if r.untaken == 0 {
            sh.moved.notify_all();
        }
        out
    }
}

/// The parcel in `slot`, as the type every lane of a round gives.
fn take<T: 'static>(slot: &mut Option<Parcel>) -> T {
    let parcel = slot.take().unwrap_or_else(|| unreachable!("every lane's parcel is there"));
    *parcel.downcast::<T>().unwrap_or_else(|_| panic!("lanes called different team operations at once"))
}

/// Element-wise `op` of `b` into `a`.
fn combine(a: &mut [f64], b: &[f64], op: ReduceOp) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = match op {
            ReduceOp::Sum => *x + y,
            ReduceOp::Min => x.min(y),
            ReduceOp::Max => x.max(y),
        };
    }
}

/// `items` as one byte string (each length first), and back.
fn pack(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in items {
        out.extend_from_slice(&(i.len() as u64).to_le_bytes());
        out.extend_from_slice(i);
    }
    out
}

fn unpack(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while bytes.len() >= 8 {
        let (len, rest) = bytes.split_at(8);
        let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap_or([0; 8]))).unwrap_or(usize::MAX);
        let len = len.min(rest.len());
        out.push(rest[..len].to_vec());
        bytes = &rest[len..];
    }
    out
}

impl<C: Control> Control for Team<'_, C> {
    fn rank(&self) -> usize {
        self.shared.proc_rank * self.shared.lanes + self.lane
    }

    fn size(&self) -> usize {
        self.shared.procs * self.shared.lanes
    }

    fn barrier(&self) {
        let n = self.shared.lanes;
        self.round((), |c, _| {
            c.barrier();
            vec![(); n]
        })
    }

    fn gather_f64(&self, x: f64) -> Vec<f64> {
        self.gather_f64_slice(&[x])
    }

    fn gather_f64_slice(&self, xs: &[f64]) -> Vec<f64> {
        let n = self.shared.lanes;
        self.round(xs.to_vec(), |c, all| {
            let mut out = vec![Vec::new(); n];
            out[0] = c.gather_f64_slice(&all.concat());
            out
        })
    }

    fn reduce_f64(&self, x: f64, op: ReduceOp) -> f64 {
        self.reduce_f64_slice(&[x], op)[0]
    }

    fn reduce_f64_slice(&self, xs: &[f64], op: ReduceOp) -> Vec<f64> {
        let n = self.shared.lanes;
        self.round(xs.to_vec(), |c, all| {
            let mut here = all[0].clone();
            all[1..].iter().for_each(|other| combine(&mut here, other, op));
            vec![c.reduce_f64_slice(&here, op); n]
        })
    }

    fn allreduce_sum_u64(&self, x: u64) -> u64 {
        let n = self.shared.lanes;
        self.round(x, |c, all| vec![c.allreduce_sum_u64(all.iter().sum()); n])
    }

    fn bcast_u64(&self, x: u64) -> u64 {
        let n = self.shared.lanes;
        self.round(x, |c, all| vec![c.bcast_u64(all[0]); n])
    }

    fn bcast_bytes(&self, mine: &[u8]) -> Vec<u8> {
        let n = self.shared.lanes;
        self.round(mine.to_vec(), |c, all| vec![c.bcast_bytes(&all[0]); n])
    }

    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.shared.lanes;
        self.round(mine.to_vec(), |c, all| {
            let mut out = vec![Vec::new(); n];
            out[0] = c.gather_bytes(&pack(&all)).iter().flat_map(|p| unpack(p)).collect();
            out
        })
    }

    fn node_ranks(&self) -> (usize, usize) {
        let n = self.shared.lanes;
        self.round((), |c, _| {
            let (on_node, index) = c.node_ranks();
            (0..n).map(|lane| (on_node * n, index * n + lane)).collect()
        })
    }

    fn host_name(&self) -> String {
        self.shared.host.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::{self, Model};
    use crate::backend::Transport;

    /// Runs `f` on every lane of `lanes` per process over `procs` mock
    /// processes; what each lane returned, in team rank order.
    fn teams<R: Send>(procs: usize, lanes: usize, f: impl Fn(&Team<mock::MockWorld>) -> R + Sync) -> Vec<R> {
        let per_proc = mock::run(procs, Model::default(), |t| {
            let shared = Shared::new(lanes, t.world());
            std::thread::scope(|s| {
                let followers: Vec<_> = (1..lanes)
                    .map(|lane| {
                        let (shared, f) = (&shared, &f);
                        s.spawn(move || f(&Team::follower(shared, lane)))
                    })
                    .collect();
                let mut out = vec![f(&Team::leader(&shared, t.world()))];
                out.extend(followers.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))));
                out
            })
        });
        per_proc.into_iter().flatten().collect()
    }

    #[test]
    fn lanes_are_ranks_in_nccl_tests_order() {
        let out = teams(2, 3, |t| (t.rank(), t.size(), t.node_ranks()));
        let ranks: Vec<_> = out.iter().map(|o| o.0).collect();
        assert_eq!(ranks, vec![0, 1, 2, 3, 4, 5]);
        assert!(out.iter().all(|o| o.1 == 6));
        // Both mock processes are on one node: six ranks there.
        let node: Vec<_> = out.iter().map(|o| o.2).collect();
        assert_eq!(node, (0..6).map(|i| (6, i)).collect::<Vec<_>>());
    }

    #[test]
    fn gathers_come_in_rank_order_at_rank_zero() {
        let out = teams(2, 3, |t| {
            let r = t.rank();
            (t.gather_f64(r as f64), t.gather_bytes(format!("r{r}").as_bytes()), t.gather_f64_slice(&[r as f64, -1.0]))
        });
        assert_eq!(out[0].0, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let names: Vec<_> = out[0].1.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
        assert_eq!(names, vec!["r0", "r1", "r2", "r3", "r4", "r5"]);
        assert_eq!(out[0].2.len(), 12);
        assert_eq!(out[0].2[10], 5.0);
        assert!(out[1..].iter().all(|o| o.0.is_empty() && o.1.is_empty() && o.2.is_empty()));
    }

    #[test]
    fn reductions_and_broadcasts_reach_every_lane() {
        let out = teams(3, 2, |t| {
            let r = t.rank() as u64;
            let sum = t.allreduce_sum_u64(r);
            let from_root = t.bcast_u64(100 + r);
            let bytes = t.bcast_bytes(format!("from {r}").as_bytes());
            let max = t.reduce_f64_slice(&[r as f64, -(r as f64)], ReduceOp::Max);
            let min = t.reduce_f64(r as f64, ReduceOp::Min);
            t.barrier();
            (sum, from_root, bytes, max, min)
        });
        for (sum, from_root, bytes, _, _) in &out {
            assert_eq!(*sum, 15);
            assert_eq!(*from_root, 100);
            assert_eq!(bytes, b"from 0");
        }
        assert_eq!(out[0].3, vec![5.0, 0.0]);
        assert_eq!(out[0].4, 0.0);
    }

    #[test]
    fn one_lane_is_its_leader() {
        let out = teams(2, 1, |t| (t.rank(), t.size(), t.allreduce_sum_u64(1)));
        assert_eq!(out, vec![(0, 2, 2), (1, 2, 2)]);
    }

    #[test]
    fn many_rounds_back_to_back_stay_in_step() {
        // Fast lanes start the next round while slow ones still collect.
        let out = teams(2, 4, |t| (0..200u64).map(|i| t.allreduce_sum_u64(i + t.rank() as u64)).sum::<u64>());
        let want: u64 = (0..200u64).map(|i| 8 * i + 28).sum();
        assert!(out.iter().all(|&s| s == want));
    }
}
