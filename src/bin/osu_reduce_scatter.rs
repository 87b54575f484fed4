//! osu_reduce_scatter, OSU 7.4 compatible.
use commbench::bench::{reduce_scatter, runner, spec};

fn main() {
    runner::main(&spec::REDUCE_SCATTER, reduce_scatter::new)
}
