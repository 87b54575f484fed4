//! osu_latency, OSU 7.4 compatible.
use commbench::bench::{latency::Latency, runner};

fn main() {
    runner::main::<Latency>()
}
