//! osu_bw, OSU 7.4 compatible.
use commbench::bench::{bw::Bw, runner, spec};

fn main() {
    runner::main(&spec::BW, Bw::new)
}
