//! osu_latency, OSU 7.4 compatible.
use commbench::bench::{latency::Latency, runner};

fn main() {
    runner::main_p2p::<Latency>()
}
