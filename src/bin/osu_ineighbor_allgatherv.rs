//! osu_ineighbor_allgatherv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::ineighbor_allgatherv::IneighborAllgatherv};

fn main() {
    runner::main::<IneighborAllgatherv>()
}
