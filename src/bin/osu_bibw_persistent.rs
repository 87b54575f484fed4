//! osu_bibw_persistent, OSU 7.4 compatible.
use commbench::bench::{bibw_persistent::BibwPersistent, runner};

fn main() {
    runner::main::<BibwPersistent>()
}
