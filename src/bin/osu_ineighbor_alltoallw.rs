//! osu_ineighbor_alltoallw, OSU 7.4 compatible.
use commbench::bench::{ineighbor_alltoallw::IneighborAlltoallw, runner};

fn main() {
    runner::main::<IneighborAlltoallw>()
}
