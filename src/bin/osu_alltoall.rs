//! osu_alltoall, OSU 7.4 compatible.
use commbench::bench::{alltoall, runner, spec};

fn main() {
    runner::main(&spec::ALLTOALL, alltoall::new)
}
