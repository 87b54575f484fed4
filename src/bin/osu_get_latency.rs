//! osu_get_latency, OSU 7.4 compatible.
use commbench::{bench::rma::get_latency::GetLatency, runner};

fn main() {
    runner::main_rma::<GetLatency>()
}
