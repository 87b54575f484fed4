//! osu_barrier, OSU 7.4 compatible.
use commbench::bench::{barrier, runner, spec};

fn main() {
    runner::main(&spec::BARRIER, barrier::new)
}
