//! osu_iscatter, OSU 7.4 compatible.
use commbench::bench::{engine::runner, nonblocking::iscatter::Iscatter};

fn main() {
    runner::main::<Iscatter>()
}
