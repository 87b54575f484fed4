//! osu_get_mbw: multi-pair MPI_Get bandwidth (OSU 7.4 ships it broken; see bench/rma/get_mbw.rs).
use commbench::{bench::rma::get_mbw::GetMbw, runner};

fn main() {
    runner::main_rma::<GetMbw>()
}
