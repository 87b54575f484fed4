//! osu_ireduce_scatter, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ireduce_scatter::IreduceScatter, runner};

fn main() {
    runner::main::<IreduceScatter>()
}
