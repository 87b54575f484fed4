//! osu_ireduce, OSU 7.4 compatible.
use commbench::bench::{ireduce::Ireduce, runner};

fn main() {
    runner::main::<Ireduce>()
}
