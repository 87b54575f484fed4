//! osu_put_bw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::put_bw::PutBw};

fn main() {
    runner::main_rma::<PutBw>()
}
