//! osu_allreduce_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::allreduce_persistent::AllreducePersistent, runner};

fn main() {
    runner::main::<AllreducePersistent>()
}
