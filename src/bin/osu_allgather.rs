//! osu_allgather, OSU 7.4 compatible.
use commbench::bench::{collective::allgather::Allgather, engine::runner};

fn main() {
    runner::main::<Allgather>()
}
