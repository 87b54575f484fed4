//! osu_latency, OSU 7.4 compatible.
use commbench::{bench::pt2pt::latency::Latency, runner};

fn main() {
    runner::main::<Latency>()
}
