//! osu_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::latency::Latency};

fn main() {
    runner::main::<Latency>()
}
