//! osu_multi_lat, OSU 7.4 compatible.
use commbench::{bench::pt2pt::multi_lat::MultiLat, runner};

fn main() {
    runner::main::<MultiLat>()
}
