//! osu_barrier_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::barrier_persistent::BarrierPersistent, runner};

fn main() {
    runner::main::<BarrierPersistent>()
}
