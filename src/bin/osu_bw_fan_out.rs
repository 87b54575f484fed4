//! osu_bw_fan_out, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::bw_fan_out::BwFanOut};

fn main() {
    runner::main::<BwFanOut>()
}
