//! osu_ireduce_scatter_block, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::ireduce_scatter_block::IreduceScatterBlock};

fn main() {
    runner::main::<IreduceScatterBlock>()
}
