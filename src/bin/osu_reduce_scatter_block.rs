//! osu_reduce_scatter_block, OSU 7.4 compatible.
use commbench::{bench::collective::reduce_scatter_block::ReduceScatterBlock, runner};

fn main() {
    runner::main::<ReduceScatterBlock>()
}
