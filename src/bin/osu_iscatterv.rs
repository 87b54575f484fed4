//! osu_iscatterv, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::iscatterv::Iscatterv};

fn main() {
    runner::main::<Iscatterv>()
}
