//! osu_scatter, OSU 7.4 compatible.
use commbench::bench::{runner, scatter::Scatter};

fn main() {
    runner::main::<Scatter>()
}
