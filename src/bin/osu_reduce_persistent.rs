//! osu_reduce_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::reduce_persistent::ReducePersistent};

fn main() {
    runner::main::<ReducePersistent>()
}
