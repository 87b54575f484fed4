//! osu_fop_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::fop_latency::FopLatency};

fn main() {
    runner::main_rma::<FopLatency>()
}
