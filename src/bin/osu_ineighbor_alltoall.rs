//! osu_ineighbor_alltoall, OSU 7.4 compatible.
use commbench::bench::{engine::runner, neighborhood::ineighbor_alltoall::IneighborAlltoall};

fn main() {
    runner::main::<IneighborAlltoall>()
}
