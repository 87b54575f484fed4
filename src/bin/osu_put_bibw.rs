//! osu_put_bibw, OSU 7.4 compatible.
use commbench::{bench::rma::put_bibw::PutBibw, runner};

fn main() {
    runner::main_rma::<PutBibw>()
}
