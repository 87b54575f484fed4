//! osu_mbw_mr, OSU 7.4 compatible.
use commbench::bench::{mbw_mr::MbwMr, runner, spec};

fn main() {
    runner::main(&spec::MBW_MR, MbwMr::new)
}
