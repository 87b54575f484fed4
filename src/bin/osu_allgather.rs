//! osu_allgather, OSU 7.4 compatible.
use commbench::bench::{allgather, runner, spec};

fn main() {
    runner::main(&spec::ALLGATHER, allgather::new)
}
