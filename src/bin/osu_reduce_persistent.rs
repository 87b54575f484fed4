//! osu_reduce_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::reduce_persistent::ReducePersistent, runner};

fn main() {
    runner::main::<ReducePersistent>()
}
