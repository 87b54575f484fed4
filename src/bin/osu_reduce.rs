//! osu_reduce, OSU 7.4 compatible.
use commbench::bench::{reduce, runner, spec};

fn main() {
    runner::main(&spec::REDUCE, reduce::new)
}
