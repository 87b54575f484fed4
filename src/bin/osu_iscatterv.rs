//! osu_iscatterv, OSU 7.4 compatible.
use commbench::{bench::nonblocking::iscatterv::Iscatterv, runner};

fn main() {
    runner::main::<Iscatterv>()
}
