//! osu_bcast, OSU 7.4 compatible.
use commbench::bench::{bcast, runner, spec};

fn main() {
    runner::main(&spec::BCAST, bcast::new)
}
