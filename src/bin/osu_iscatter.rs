//! osu_iscatter, OSU 7.4 compatible.
use commbench::{bench::nonblocking::iscatter::Iscatter, runner};

fn main() {
    runner::main::<Iscatter>()
}
