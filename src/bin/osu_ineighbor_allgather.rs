//! osu_ineighbor_allgather, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::ineighbor_allgather::IneighborAllgather};

fn main() {
    runner::main::<IneighborAllgather>()
}
