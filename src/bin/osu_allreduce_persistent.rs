//! osu_allreduce_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, persistent::allreduce_persistent::AllreducePersistent};

fn main() {
    runner::main::<AllreducePersistent>()
}
