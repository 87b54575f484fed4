//! osu_get_mbw: multi-pair MPI_Get bandwidth (OSU 7.4 ships it broken; see bench/rma/get_mbw.rs).
use commbench::bench::{engine::runner, rma::get_mbw::GetMbw};

fn main() {
    runner::main_rma::<GetMbw>()
}
