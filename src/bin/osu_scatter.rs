//! osu_scatter, OSU 7.4 compatible.
use commbench::{bench::collective::scatter::Scatter, runner};

fn main() {
    runner::main::<Scatter>()
}
