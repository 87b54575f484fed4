//! osu_reduce_scatter_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::reduce_scatter_persistent::ReduceScatterPersistent};

fn main() {
    runner::main::<ReduceScatterPersistent>()
}
