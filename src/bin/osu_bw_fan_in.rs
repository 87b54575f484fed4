//! osu_bw_fan_in, OSU 7.4 compatible.
use commbench::{bench::pt2pt::bw_fan_in::BwFanIn, runner};

fn main() {
    runner::main::<BwFanIn>()
}
