//! osu_ireduce, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ireduce::Ireduce};

fn main() {
    runner::main::<Ireduce>()
}
