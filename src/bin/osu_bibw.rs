//! osu_bibw, OSU 7.4 compatible.
use commbench::bench::{bibw::Bibw, runner, spec};

fn main() {
    runner::main(&spec::BIBW, Bibw::new)
}
