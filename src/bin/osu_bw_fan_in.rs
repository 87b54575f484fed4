//! osu_bw_fan_in, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::bw_fan_in::BwFanIn};

fn main() {
    runner::main::<BwFanIn>()
}
