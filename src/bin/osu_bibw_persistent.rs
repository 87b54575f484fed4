//! osu_bibw_persistent, OSU 7.4 compatible.
use commbench::{bench::pt2pt::bibw_persistent::BibwPersistent, runner};

fn main() {
    runner::main::<BibwPersistent>()
}
