//! osu_bibw_persistent, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::bibw_persistent::BibwPersistent};

fn main() {
    runner::main::<BibwPersistent>()
}
