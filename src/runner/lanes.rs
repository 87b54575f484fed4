//! `--backend nccl` for a collective, over every GPU this process drives:
//! one lane per GPU (nccl-tests' `-t` threads x `-g` GPUs; one lane
//! unless they say more), each a thread with its own rank of the team
//! (src/backend/team.rs), its own communicator rank, kernel and timed
//! loop. Lane 0 is the thread that started the job: it alone does the
//! job's part (MPI between processes, the memory check, the outputs, the
//! record, the verdicts); the other lanes follow the same team operations
//! in the same order, so the measurement is one and the same loop on
//! every GPU.
//!
//! nccl-tests drives a thread's `-g` GPUs from that one thread, issuing
//! their calls inside one `ncclGroupStart`/`ncclGroupEnd`; here each GPU
//! has a thread of its own, as NCCL's one-thread-per-GPU mode has it, so
//! `-g` and `-t` differ only in the host threads that issue the calls.
//! Each lane's time counts as a rank's for `-a` (nccl-tests counts a
//! thread's).

use super::{setup_failed, Session};
use crate::backend::nccl::{Nccl, NcclSetup};
use crate::backend::team::{Shared, Team};
use crate::backend::world::World;
use crate::backend::{Control, Transport};
use crate::bench::engine::plan::Plan;
use crate::bench::engine::{efficiency, measure, memory};
use crate::bench::{BenchOn, Kernel, Pt2ptBench, Setup};
use crate::buffer::AllocError;
use crate::gpu::cuda::Gpu;
use crate::job::watchdog::{Progress, Step};
use crate::job::{everywhere, Ending};

/// How a benchmark makes its kernel over NCCL: a collective's own
/// ([`Collective`]) or a point-to-point benchmark's ([`PointToPoint`]).
pub(super) trait NcclKernel {
    type K<'w>: Kernel<Nccl<'w>>;
    fn build<'w>(s: &Setup<'_, Nccl<'w>>) -> Result<Self::K<'w>, AllocError>;
}

/// [`BenchOn`]'s kernel of a collective `B`.
pub(super) struct Collective<B>(std::marker::PhantomData<B>);

impl<B: for<'w> BenchOn<Nccl<'w>>> NcclKernel for Collective<B> {
    type K<'w> = <B as BenchOn<Nccl<'w>>>::Kernel;
    fn build<'w>(s: &Setup<'_, Nccl<'w>>) -> Result<Self::K<'w>, AllocError> {
        <B as BenchOn<Nccl<'w>>>::kernel(s)
    }
}

/// [`Pt2ptBench`]'s kernel of a point-to-point benchmark `B`.
pub(super) struct PointToPoint<B>(std::marker::PhantomData<B>);

impl<B: Pt2ptBench> NcclKernel for PointToPoint<B> {
    type K<'w> = B::P2pKernel<Nccl<'w>>;
    fn build<'w>(s: &Setup<'_, Nccl<'w>>) -> Result<Self::K<'w>, AllocError> {
        B::p2p_kernel(s)
    }
}

impl Session<'_> {
    /// The run over this process's lanes, lane 0 on this thread;
    /// `message_bytes` is the benchmark's [`crate::bench::Bench::message_bytes`].
    pub(super) fn run_nccl<B: NcclKernel>(&self, message_bytes: fn(&Plan, usize) -> u128) -> Ending {
        let (job, spec, plan) = (self.job, self.spec, self.plan);
        let Some(gpu) = job.gpu.as_ref() else {
            return setup_failed();
        };
        if plan.collective.is_some_and(|c| c.op.reduces()) {
            // Every GPU of the job must reduce the run's types.
            let refused = std::iter::once(gpu).chain(&job.lane_gpus).find_map(|g| {
                plan.datatypes.iter().find_map(|&dt| crate::backend::nccl::can_reduce(dt, &g.info).err())
            });
            if job.everywhere(refused.map_or(Ok(()), Err)).is_none() {
                return setup_failed();
            }
        }
        job.step(Step::Startup);
        let lanes = self.opts.lanes();
        let np = self.np();
        let rank = job.world.rank() * lanes;
        let estimate = memory::estimate(plan, np, Some(rank), message_bytes(plan, np));
        // Each lane holds its own buffers on the host side too.
        let more = estimate.more().saturating_mul(lanes as u128);
        if job.everywhere(job.memory_check_parts(more, &estimate.parts(), "lower -m, -W or -i")).is_none() {
            return setup_failed();
        }
        // Before the kernel's buffers exist, so the copy's never add to them.
        let end =
            efficiency::rank_end(job, spec, plan, Some((&gpu.info, crate::backend::cuda_memory::Place::Device.name())));
        let shared = Shared::new(lanes, &job.world);
        std::thread::scope(|scope| {
            let name = job.name;
            for (i, g) in job.lane_gpus.iter().enumerate() {
                let shared = &shared;
                scope.spawn(move || follow::<B>(shared, i + 1, g, plan, name));
            }
            let team = Team::leader(&shared, &job.world);
            let Some((t, mut kernel)) = start::<B>(&team, gpu, plan, job.name) else {
                return setup_failed();
            };
            let details = t.record_info();
            let outputs = self.open_outputs::<Nccl>(details, Some(&estimate), end);
            // The other lanes wait for the word to go on.
            if team.bcast_u64(u64::from(outputs.is_some())) == 0 {
                return setup_failed();
            }
            let Some((sinks, record)) = outputs else {
                return setup_failed();
            };
            self.measure_and_end(&t, &mut kernel, sinks, record, &estimate)
        })
    }

    /// Ranks of the run: the processes of this process's communicator
    /// (all of the job's without NCCL_TESTS_SPLIT) times their lanes.
    pub(super) fn np(&self) -> usize {
        self.opts.split.group_of(self.job.world.rank(), self.job.world.size()).1 * self.opts.lanes()
    }
}

/// What every lane does first, lane 0 included, each step agreed over
/// the team: its GPU current on this thread, the communicator, the kernel.
/// None (said by the team's rank 0) where any lane failed.
fn start<'w, B: NcclKernel>(
    team: &'w Team<'w, World>,
    gpu: &Gpu,
    plan: &Plan,
    name: &str,
) -> Option<(Nccl<'w>, B::K<'w>)> {
    everywhere(team, name, gpu.make_current())?;
    let t = everywhere(team, name, Nccl::new(team, &gpu.info, nccl_setup(plan.opts)))?;
    let kernel = everywhere(team, name, B::build(&Setup::new(&t, plan)))?;
    t.buffers_made();
    Some((t, kernel))
}

/// How the run's options make each lane's communicator.
fn nccl_setup(opts: &crate::options::Options) -> NcclSetup {
    NcclSetup {
        default_stream: opts.default_stream,
        unalign: opts.unalign,
        cta_policy: opts.cta_policy,
        nccl_memory: opts.format == crate::options::Format::NcclTests,
        split: opts.split,
        lanes: opts.lanes(),
        register: opts.registration.map(|r| r == crate::options::Registration::Symmetric),
    }
}

/// Lane `lane` of this process (1 or more), on its own thread: the same
/// team operations as lane 0 in the same order, without the job's part;
/// its results reach rank 0 through the kernel's gathers.
fn follow<B: NcclKernel>(shared: &Shared, lane: usize, gpu: &Gpu, plan: &Plan, name: &str) {
    let team = Team::follower(shared, lane);
    let Some((t, mut kernel)) = start::<B>(&team, gpu, plan, name) else {
        return;
    };
    // Lane 0 gathers every lane's description for the record.
    let _ = t.record_info();
    if team.bcast_u64(0) == 0 {
        return;
    }
    // The watchdog follows lane 0; a lane that stalls stalls it too.
    let progress = Progress::default();
    // Only rank 0 holds outputs, so nothing here can fail to be written.
    let _ = measure::run(&t, &mut kernel, plan, name, None, &progress, || {});
}
