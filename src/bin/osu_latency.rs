//! osu_latency, OSU 7.4 compatible.
use commbench::bench::{latency, runner, spec};

fn main() {
    runner::main(&spec::LATENCY, latency::new)
}
