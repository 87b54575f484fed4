//! osu_latency, OSU 7.4 compatible.
use commbench::bench::{latency::Latency, runner, spec};

fn main() {
    runner::main(&spec::LATENCY, Latency::new)
}
