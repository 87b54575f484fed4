//! osu_latency_mt, OSU 7.4 compatible.
use commbench::bench::{latency_mt::LatencyMt, runner};

fn main() {
    runner::main::<LatencyMt>()
}
