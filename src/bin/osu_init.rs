//! osu_init, OSU 7.4 compatible.
use commbench::bench::{engine::runner, startup::init};

fn main() {
    runner::main_startup(&init::INIT)
}
