//! osu_get_bw, OSU 7.4 compatible.
use commbench::{bench::rma::get_bw::GetBw, runner};

fn main() {
    runner::main_rma::<GetBw>()
}
