//! osu_allgather, OSU 7.4 compatible.
use commbench::{bench::collective::allgather::Allgather, runner};

fn main() {
    runner::main::<Allgather>()
}
