//! osu_init: how long MPI_Init took across ranks (min, max and average,
//! whole milliseconds, as OSU 7.4 prints them); the start-up path it shares
//! with osu_hello (bench/startup/hello.rs).
//!
//! Why these are not on the shared loop: what they measure happens once,
//! before any communicator exists, so there is no kernel to repeat and no
//! transport to time it with. [`crate::job::Job::start`] reads the clock
//! around MPI's initialisation on every rank (two reads, kept for every
//! job); the runner's start-up path ([`crate::runner::run_startup`]) then
//! gathers those times and writes one row through the same outputs as
//! every other benchmark (OSU's lines on stdout, the CSV, the run record
//! with every rank's placement). Options, job start, placement, result
//! files and the record's end are the shared ones.
//!
//! OSU's arithmetic, kept: each rank's time is truncated to whole
//! milliseconds; min and max are over those; the average is their sum
//! divided by the number of processes, in integers. The CSV carries these
//! same values (in microseconds, as every latency column), and the exact
//! per-rank times as the distribution columns (`iter_*_us`).

use crate::bench::registry::{Entry, Registered};
use crate::report::Row;
use crate::spec::{BenchSpec, IterDefaults, MetricKind, ProcRule};
use crate::stats::{RankSpread, Summary};

const ONCE: IterDefaults = IterDefaults { small_iterations: 1, small_warmup: 0, large_iterations: 1, large_warmup: 0 };

pub(crate) const INIT: BenchSpec = BenchSpec {
    name: "osu_init",
    title: "OSU MPI Init Test",
    letters: "hvI",
    procs: ProcRule::Any,
    metric: MetricKind::Startup,
    defaults: ONCE,
    max_size: 0,
    from_zero: true,
    ..BenchSpec::DEFAULT
};

/// osu_init.
pub struct Init;

impl Registered for Init {
    const ENTRY: Entry = Entry { spec: &INIT, needs: None, collective: None };
}

/// One rank's time in MPI_Init as OSU reports it: whole milliseconds,
/// truncated.
pub(crate) fn whole_ms(secs: f64) -> u64 {
    (secs * 1e3).max(0.0) as u64
}

/// The row of a start-up run from every rank's seconds in MPI_Init (rank
/// order): OSU's min, max and average in whole milliseconds (given in
/// microseconds), which ranks they were, and the exact spread.
pub fn row(secs: &[f64]) -> Row {
    let ms: Vec<u64> = secs.iter().map(|&s| whole_ms(s)).collect();
    let np = ms.len().max(1) as u64;
    let avg = ms.iter().sum::<u64>() / np;
    let us: Vec<f64> = ms.iter().map(|&m| m as f64 * 1e3).collect();
    Row {
        size: 0,
        iterations: 1,
        warmup: 0,
        avg_lat_us: Some(avg as f64 * 1e3),
        spread: RankSpread::of(&us),
        iter: Summary::from_secs(secs, 1.0),
        ..Row::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::startup::hello::HELLO;
    use crate::report::osu::{OsuTable, TableLayout};
    use crate::report::Sink;

    #[test]
    fn osu_arithmetic() {
        assert_eq!(whole_ms(0.2719), 271);
        assert_eq!(whole_ms(0.000_999), 0);
        // 271 + 276 + 274 = 821, / 3 = 273 (integer division, as OSU).
        let r = row(&[0.2712, 0.2768, 0.2749]);
        assert_eq!(r.avg_lat_us, Some(273_000.0));
        let s = r.spread.unwrap();
        assert_eq!((s.fastest, s.slowest), ((0, 271_000.0), (1, 276_000.0)));
        let iter = r.iter.unwrap();
        assert_eq!(iter.samples, 3);
        assert!((iter.max_us - 276_800.0).abs() < 1e-6);
    }

    fn render(spec: &'static BenchSpec, np: usize, r: &Row) -> String {
        let layout = TableLayout {
            validation: false,
            tails: vec![],
            print_rate: false,
            vary_window: false,
            window: 1,
            pairs: 0,
            full: false,
            accel: None,
            backend: crate::options::Backend::Mpi,
            np,
            one_sided: None,
            workers: None,
        };
        let mut t = OsuTable::new(Vec::new(), spec, layout);
        t.preamble().unwrap();
        t.row(r).unwrap();
        String::from_utf8(t.into_inner()).unwrap()
    }

    #[test]
    fn osu_lines() {
        let r = row(&[0.242, 0.2441]);
        assert_eq!(
            render(&INIT, 2, &r),
            "# OSU MPI Init Test v7.4\nnprocs: 2, min: 242 ms, max: 244 ms, avg: 243 ms\n"
        );
        assert_eq!(render(&HELLO, 1, &r), "# OSU MPI Hello World Test v7.4\nThis is a test with 1 processes\n");
    }
}
