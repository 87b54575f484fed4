//! osu_iallreduce, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::iallreduce::Iallreduce};

fn main() {
    runner::main::<Iallreduce>()
}
