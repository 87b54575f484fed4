//! osu_hello: says how many processes came up once MPI has started; it
//! measures nothing. It takes osu_init's start-up path (bench/startup/init.rs), so
//! its CSV row and run record carry the same MPI_Init times and placement.

use crate::bench::registry::{Entry, Registered};
use crate::bench::startup::init::INIT;
use crate::spec::{BenchSpec, MetricKind};

pub(crate) const HELLO: BenchSpec = BenchSpec {
    name: "osu_hello",
    title: "OSU MPI Hello World Test",
    letters: "hv",
    metric: MetricKind::Hello,
    ..INIT
};

/// osu_hello.
pub struct Hello;

impl Registered for Hello {
    const ENTRY: Entry = Entry { spec: &HELLO, needs: None, collective: None };
}
