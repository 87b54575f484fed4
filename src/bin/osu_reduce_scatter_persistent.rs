//! osu_reduce_scatter_persistent, OSU 7.4 compatible.
use commbench::{bench::persistent::reduce_scatter_persistent::ReduceScatterPersistent, runner};

fn main() {
    runner::main::<ReduceScatterPersistent>()
}
