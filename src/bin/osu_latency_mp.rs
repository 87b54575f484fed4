//! osu_latency_mp, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::latency_mp::LatencyMp};

fn main() {
    runner::main::<LatencyMp>()
}
