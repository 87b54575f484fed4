//! osu_gatherv, OSU 7.4 compatible.
use commbench::bench::{collective::gatherv::Gatherv, engine::runner};

fn main() {
    runner::main::<Gatherv>()
}
