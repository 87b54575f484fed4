//! osu_init, OSU 7.4 compatible.
use commbench::bench::{init, runner};

fn main() {
    runner::main_startup(&init::INIT)
}
