//! osu_get_bw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::get_bw::GetBw};

fn main() {
    runner::main_rma::<GetBw>()
}
