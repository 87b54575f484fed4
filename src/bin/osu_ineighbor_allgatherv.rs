//! osu_ineighbor_allgatherv, OSU 7.4 compatible.
use commbench::{bench::neighborhood::ineighbor_allgatherv::IneighborAllgatherv, runner};

fn main() {
    runner::main::<IneighborAllgatherv>()
}
