//! osu_get_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::get_latency::GetLatency};

fn main() {
    runner::main_rma::<GetLatency>()
}
