//! osu_put_bibw, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::put_bibw::PutBibw};

fn main() {
    runner::main_rma::<PutBibw>()
}
