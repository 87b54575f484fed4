use super::*;
use crate::compare::model::Table;
use crate::history::key::SeriesKey;

fn key() -> SeriesKey {
    SeriesKey {
        system: "n1".into(),
        benchmark: "osu_latency".into(),
        backend: "mpi".into(),
        memory: "host".into(),
        datatype: "MPI_CHAR".into(),
        np: 2,
        placement: "none".into(),
        mpi_library: "Open MPI v4.1.4".into(),
        options: "{}".into(),
    }
}

const SIZES: [u64; 5] = [1, 2, 4, 8, 16];

/// A run whose latency means are `means` and medians `medians` (empty: none).
fn stored(means: &[f64], medians: &[f64]) -> StoredRun {
    StoredRun {
        id: 1,
        run_key: String::new(),
        started_utc: String::new(),
        label: String::new(),
        key: key(),
        points: SIZES.iter().zip(means).map(|(s, v)| (*s, Quantity::Latency, *v, None)).collect(),
        medians: SIZES.iter().zip(medians).map(|(s, v)| (*s, *v, None)).collect(),
    }
}

fn incoming(means: &[f64], medians: &[f64]) -> Incoming {
    let r = stored(means, medians);
    Incoming {
        key: key(),
        run_key: "new".into(),
        started_utc: String::new(),
        label: "new".into(),
        hosts: "n1".into(),
        status: "complete".into(),
        source: String::new(),
        points: r.points,
        medians: r.medians,
        busy: None,
        max_load1: None,
        online_cpus: None,
        table: Table { benchmark: "osu_latency".into(), ..Table::default() },
    }
}

/// Five like runs: each a level (a common factor) times a fixed shape.
fn baseline() -> Vec<StoredRun> {
    let shape = [1.0, 1.1, 1.2, 1.3, 1.4];
    [1.00, 1.02, 0.99, 1.01, 0.98]
        .iter()
        .map(|l| {
            let v: Vec<f64> = shape.iter().map(|s| s * l).collect();
            stored(&v, &v)
        })
        .collect()
}

#[test]
fn a_shift_of_the_whole_curve_fails_and_a_like_run_passes() {
    let base = baseline();
    let shape = [1.0, 1.1, 1.2, 1.3, 1.4];
    let scaled = |f: f64| shape.iter().map(|s| s * f).collect::<Vec<_>>();
    // Levels of the five runs against the others' centres: about +0.0,
    // +2.5, -1.3, +1.2, -2.5%; 1.4826 times their median absolute
    // deviation (1.26%) is 1.86%; t(0.975; 4) = 2.776 and sqrt(1 - 1/25): a
    // like run is below about +5.2%.
    let like = judge(&incoming(&scaled(1.01), &scaled(1.01)), &base, |_| 10.0).unwrap();
    assert!(!like.failed, "{like:?}");
    assert_eq!((like.sizes, like.runs, like.statistic.as_str()), (5, 5, "latency (median iteration)"));
    assert!((like.shift_pct - 1.0).abs() < 0.05, "{like:?}");
    assert!(like.band_pct > 5.0 && like.band_pct < 7.5, "{like:?}");
    let slow = judge(&incoming(&scaled(1.3), &scaled(1.3)), &base, |_| 10.0).unwrap();
    assert!(slow.failed && (slow.shift_pct - 30.0).abs() < 0.05, "{slow:?}");
    assert!(slow
        .line()
        .starts_with("osu_latency MPI_CHAR: the whole curve (latency (median iteration), 5 sizes) is +30.0%"));
    assert!(slow.line().contains("a like run is below +5.2% (5 runs), tolerance 10%: FAIL"), "{}", slow.line());
    // Outside the band but within the tolerance: passes.
    assert!(!judge(&incoming(&scaled(1.08), &scaled(1.08)), &base, |_| 10.0).unwrap().failed);
    // Faster is never a failure.
    assert!(!judge(&incoming(&scaled(0.5), &scaled(0.5)), &base, |_| 10.0).unwrap().failed);
}

#[test]
fn stalls_at_a_few_sizes_do_not_move_the_level() {
    let base = baseline();
    // Two sizes of five stalled 50 times: the median over sizes is not
    // moved, whichever statistic is pooled.
    let means = [50.0, 1.1, 60.0, 1.3, 1.4];
    let c = judge(&incoming(&means, &[]), &base, |_| 10.0).unwrap();
    assert_eq!(c.statistic, "latency");
    assert!(!c.failed && c.shift_pct.abs() < 1.0, "{c:?}");
    // The medians are pooled where both sides have them: the means'
    // stalls do not count at all.
    let c = judge(&incoming(&means, &[1.0, 1.1, 1.2, 1.3, 1.4]), &base, |_| 10.0).unwrap();
    assert!(!c.failed && c.shift_pct.abs() < 0.05, "{c:?}");
}

#[test]
fn too_few_runs_or_sizes_make_no_test() {
    let base = baseline();
    let v = [1.0, 1.1, 1.2, 1.3, 1.4];
    assert_eq!(judge(&incoming(&v, &v), &base[..2], |_| 10.0), None);
    let mut two = incoming(&v, &v);
    two.points.truncate(2);
    two.medians.truncate(2);
    assert_eq!(judge(&two, &base, |_| 10.0), None);
}

#[test]
fn a_lower_bandwidth_is_the_worse_side() {
    let shape = [1.0, 2.0, 4.0, 8.0, 16.0];
    let run = |l: f64| {
        let mut r = stored(&[], &[]);
        r.points = SIZES.iter().zip(shape).map(|(s, v)| (*s, Quantity::Bandwidth, v * l, None)).collect();
        r
    };
    let base: Vec<StoredRun> = [1.00, 1.02, 0.99, 1.01, 0.98].iter().map(|l| run(*l)).collect();
    let inc = |l: f64| {
        let mut i = incoming(&[], &[]);
        i.points = run(l).points;
        i
    };
    let low = judge(&inc(0.7), &base, |_| 10.0).unwrap();
    assert!(low.failed && (low.shift_pct + 30.0).abs() < 0.05 && low.band_pct < 0.0, "{low:?}");
    assert_eq!(low.statistic, "bandwidth");
    assert!(low.line().contains("is -30.0% against the baseline; a like run is above -"), "{}", low.line());
    assert!(!judge(&inc(1.3), &base, |_| 10.0).unwrap().failed);
}
