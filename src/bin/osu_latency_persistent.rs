//! osu_latency_persistent, OSU 7.4 compatible.
use commbench::{bench::pt2pt::latency_persistent::LatencyPersistent, runner};

fn main() {
    runner::main::<LatencyPersistent>()
}
