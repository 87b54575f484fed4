//! osu_ireduce_scatter, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ireduce_scatter::IreduceScatter};

fn main() {
    runner::main::<IreduceScatter>()
}
