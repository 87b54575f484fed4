//! osu_latency_mp: osu_latency with forked processes beside the ranks
//! (`-t S:R`). Once MPI is up the sender forks S processes that only sleep
//! two seconds and leave, or end with the sender if it ends first; the
//! ranks then ping-pong with a barrier before every exchange, as
//! osu_multi_lat does with one pair. As in OSU, the receiver forks none
//! (OSU forks the receiver's *thread* count there, which this program
//! never sets), and `-t R` leaves the sender none either.

use crate::backend::Transport;
use crate::bench::pt2pt::latency::{PingPong, PingPongBench};
use crate::bench::{Pt2ptBench, Setup};
use crate::buffer::AllocError;
use crate::spec::{BenchSpec, ProcRule, Workers};

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_latency_mp",
    title: "OSU MPI Multi-process Latency Test",
    letters: "hvmxitcuGDPTIz",
    procs: ProcRule::ExactlyTwo,
    // OSU starts at 0 but skips the empty message.
    min_size: 1,
    from_zero: false,
    accel_slot: false,
    workers: Some(Workers::Processes),
    duplex: false,
    ..crate::bench::pt2pt::latency::SPEC
};

/// How long each forked process lives, as OSU's.
const CHILD_SECONDS: u32 = 2;

pub struct LatencyMp;

crate::bench::point_to_point_bench!(LatencyMp, PingPongBench);

impl Pt2ptBench for LatencyMp {
    type P2pKernel<T: Transport> = PingPongBench<T>;

    fn p2p_kernel<T: Transport>(s: &Setup<T>) -> Result<PingPongBench<T>, AllocError> {
        let rank = s.rank();
        if rank == 0 {
            let n = s.opts.workers.map_or(0, |w| w.sender_processes());
            fork_sleepers(n, rank);
        }
        let pp = PingPong::new(s.t, rank == 0, 1 - rank, s.max_size, s.opts.buffers)?;
        Ok(PingPongBench::new(pp, 1, true))
    }
}

/// Forks `n` processes that sleep [`CHILD_SECONDS`] and exit, or end
/// with the rank if it ends first (PR_SET_PDEATHSIG): a rank that ends
/// early (a signal, a failed peer) leaves none behind its job. A process
/// that cannot be forked is said once; the benchmark goes on without it,
/// as OSU's does.
fn fork_sleepers(n: usize, rank: usize) {
    use std::io::Write;
    // Nothing buffered may be written twice by a child.
    let _ = std::io::stdout().flush();
    // SAFETY: getpid on this process.
    let me = unsafe { libc::getpid() };
    for _ in 0..n {
        // SAFETY: the child calls only async-signal-safe functions (prctl,
        // getppid, sleep, _exit) before it ends, so the locks and threads
        // it was forked without cannot matter; the parent goes on as
        // before.
        match unsafe { libc::fork() } {
            0 => unsafe {
                // SIGKILL, which the mask inherited from the rank (its
                // signal thread's signals blocked) cannot hold back.
                let tied = libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) == 0;
                if tied && libc::getppid() == me {
                    libc::sleep(CHILD_SECONDS);
                }
                libc::_exit(0);
            },
            -1 => {
                let err = std::io::Error::last_os_error();
                crate::job::say(&format!("osu_latency_mp: rank {rank} could not fork a process: {err}"));
                return;
            }
            _ => {}
        }
    }
}
