//! osu_cas_latency, OSU 7.4 compatible.
use commbench::{bench::rma::cas_latency::CasLatency, runner};

fn main() {
    runner::main_rma::<CasLatency>()
}
