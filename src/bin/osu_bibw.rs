//! osu_bibw, OSU 7.4 compatible.
use commbench::bench::{bibw::Bibw, runner};

fn main() {
    runner::main::<Bibw>()
}
