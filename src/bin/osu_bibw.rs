//! osu_bibw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, pt2pt::bibw::Bibw};

fn main() {
    runner::main::<Bibw>()
}
