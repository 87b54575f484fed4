//! osu_ineighbor_allgather, OSU 7.4 compatible.
use commbench::{bench::neighborhood::ineighbor_allgather::IneighborAllgather, runner};

fn main() {
    runner::main::<IneighborAllgather>()
}
