//! osu_hello, OSU 7.4 compatible.
use commbench::bench::{engine::runner, startup::hello};

fn main() {
    runner::main_startup(&hello::HELLO)
}
