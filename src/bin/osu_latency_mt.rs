//! osu_latency_mt, OSU 7.4 compatible.
use commbench::{bench::pt2pt::latency_mt::LatencyMt, runner};

fn main() {
    runner::main::<LatencyMt>()
}
