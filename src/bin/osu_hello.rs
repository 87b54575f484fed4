//! osu_hello, OSU 7.4 compatible.
use commbench::{bench::startup::hello, runner};

fn main() {
    runner::main_startup::<hello::Hello>()
}
