//! osu_hello: says how many processes came up once MPI has started; it
//! measures nothing. It takes osu_init's start-up path (bench/startup/init.rs), so
//! its CSV row and run record carry the same MPI_Init times and placement.

use super::init::INIT;
use super::registry::{Entry, Registered};
use super::spec::{BenchSpec, MetricKind};

pub const HELLO: BenchSpec =
    BenchSpec { name: "osu_hello", title: "OSU MPI Hello World Test", letters: "hv", metric: MetricKind::Hello, ..INIT };

/// osu_hello.
pub struct Hello;

impl Registered for Hello {
    const ENTRY: Entry = Entry { spec: &HELLO, needs: None, collective: None };
}
