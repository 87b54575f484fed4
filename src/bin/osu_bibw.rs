//! osu_bibw, OSU 7.4 compatible.
use commbench::{bench::pt2pt::bibw::Bibw, runner};

fn main() {
    runner::main::<Bibw>()
}
