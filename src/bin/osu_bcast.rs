//! osu_bcast, OSU 7.4 compatible.
use commbench::bench::{collective::bcast::Bcast, engine::runner};

fn main() {
    runner::main::<Bcast>()
}
