//! osu_multi_lat, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::multi_lat::MultiLat};

fn main() {
    runner::main::<MultiLat>()
}
