//! osu_allreduce, OSU 7.4 compatible.
use commbench::bench::{allreduce, runner, spec};

fn main() {
    runner::main(&spec::ALLREDUCE, allreduce::new)
}
