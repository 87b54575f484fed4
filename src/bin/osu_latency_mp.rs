//! osu_latency_mp, OSU 7.4 compatible.
use commbench::{bench::pt2pt::latency_mp::LatencyMp, runner};

fn main() {
    runner::main::<LatencyMp>()
}
