//! osu_reduce, OSU 7.4 compatible.
use commbench::{bench::collective::reduce::Reduce, runner};

fn main() {
    runner::main::<Reduce>()
}
