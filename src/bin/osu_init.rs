//! osu_init, OSU 7.4 compatible.
use commbench::{bench::startup::init, runner};

fn main() {
    runner::main_startup::<init::Init>()
}
