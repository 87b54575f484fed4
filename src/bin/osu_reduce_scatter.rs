//! osu_reduce_scatter, OSU 7.4 compatible.
use commbench::{bench::collective::reduce_scatter::ReduceScatter, runner};

fn main() {
    runner::main::<ReduceScatter>()
}
