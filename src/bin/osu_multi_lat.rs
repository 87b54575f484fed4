//! osu_multi_lat, OSU 7.4 compatible.
use commbench::bench::{multi_lat, runner, spec};

fn main() {
    runner::main(&spec::MULTI_LAT, multi_lat::new)
}
