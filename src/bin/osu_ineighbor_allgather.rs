//! osu_ineighbor_allgather, OSU 7.4 compatible.
use commbench::bench::{ineighbor_allgather::IneighborAllgather, runner};

fn main() {
    runner::main::<IneighborAllgather>()
}
