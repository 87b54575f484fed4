//! osu_bw_fan_out, OSU 7.4 compatible.
use commbench::{bench::pt2pt::bw_fan_out::BwFanOut, runner};

fn main() {
    runner::main::<BwFanOut>()
}
