//! osu_fop_latency, OSU 7.4 compatible.
use commbench::{bench::rma::fop_latency::FopLatency, runner};

fn main() {
    runner::main_rma::<FopLatency>()
}
