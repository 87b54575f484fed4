//! osu_put_bw, OSU 7.4 compatible.
use commbench::{bench::rma::put_bw::PutBw, runner};

fn main() {
    runner::main_rma::<PutBw>()
}
