//! osu_latency_mt, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::latency_mt::LatencyMt};

fn main() {
    runner::main::<LatencyMt>()
}
