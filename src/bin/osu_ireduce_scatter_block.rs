//! osu_ireduce_scatter_block, OSU 7.4 compatible.
use commbench::{bench::nonblocking::ireduce_scatter_block::IreduceScatterBlock, runner};

fn main() {
    runner::main::<IreduceScatterBlock>()
}
