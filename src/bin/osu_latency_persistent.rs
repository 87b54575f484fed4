//! osu_latency_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::latency_persistent::LatencyPersistent};

fn main() {
    runner::main::<LatencyPersistent>()
}
