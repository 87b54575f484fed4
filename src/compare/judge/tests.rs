use super::*;
use crate::compare::model::SizeRow;
use crate::compare::tolerance::{parse_limit, parse_tolerance};

fn table(bench: &str, label: &str, metric: Quantity, pts: &[(u64, f64)]) -> Table {
    let points = pts
        .iter()
        .map(|&(size, v)| {
            let mut p = SizeRow { size, ..SizeRow::default() };
            match metric {
                Quantity::Latency => p.latency_us = Some(v),
                Quantity::Bandwidth => p.bw_mbps = Some(v),
                Quantity::MessageRate => p.msg_rate = Some(v),
                Quantity::Efficiency => p.efficiency_pct = Some(v),
            }
            p
        })
        .collect();
    Table {
        benchmark: bench.into(),
        sized: true,
        points,
        path: label.into(),
        run_label: label.into(),
        ..Table::default()
    }
}

fn rules(tol: &[&str]) -> Rules {
    Rules { tolerances: tol.iter().map(|t| parse_tolerance(t).unwrap()).collect(), ..Rules::default() }
}

fn verdicts(rep: &Report) -> Vec<Verdict> {
    rep.blocks.iter().flat_map(|b| b.rows.iter().map(|r| r.verdict)).collect()
}

#[test]
fn bandwidth_exactly_at_ten_percent_passes_just_over_fails() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 100.0), (2, 100.0), (4, 100.0), (8, 24636.01)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 90.0), (2, 89.99), (4, 111.0), (8, 24636.01 * 0.9)]);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Fail, Verdict::Better, Verdict::Pass]);
    let fail = &rep.blocks[0].rows[1];
    assert!(fail.reasons[0].contains("10.0% lower"), "{:?}", fail.reasons);
    assert_eq!(rep.summary.failed, 1);
    assert!(!rep.summary.ok);
}

#[test]
fn latency_direction_is_reversed() {
    let r = table("osu_latency", "ref", Quantity::Latency, &[(1, 1.0), (2, 1.0), (4, 1.0), (8, 2.0)]);
    let m = table("osu_latency", "run", Quantity::Latency, &[(1, 1.1), (2, 1.1001), (4, 0.5), (8, 1.0)]);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Fail, Verdict::Better, Verdict::Better]);
    assert!(rep.blocks[0].rows[1].reasons[0].contains("higher than the reference"));
    // The same numbers as bandwidth judge the other way round.
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 1.0)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 0.5)]);
    assert_eq!(verdicts(&compare(&[r], &[m], &rules(&["10%"]))), [Verdict::Fail]);
}

#[test]
fn message_rate_is_higher_is_better() {
    let r = table("osu_mbw_mr", "ref", Quantity::MessageRate, &[(1, 1e6)]);
    let m = table("osu_mbw_mr", "run", Quantity::MessageRate, &[(1, 0.8e6)]);
    assert_eq!(
        verdicts(&compare(std::slice::from_ref(&r), std::slice::from_ref(&m), &rules(&["20%"]))),
        [Verdict::Pass]
    );
    assert_eq!(verdicts(&compare(&[r], &[m], &rules(&["19.9%"]))), [Verdict::Fail]);
}

#[test]
fn per_size_range_tolerances_edges() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(8192, 100.0), (8193, 100.0)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(8192, 80.0), (8193, 80.0)]);
    let rep = compare(std::slice::from_ref(&r), std::slice::from_ref(&m), &rules(&["1-8192:20%", "8193-:10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Fail]);
    assert_eq!((rep.blocks[0].rows[0].tolerance_pct, rep.blocks[0].rows[1].tolerance_pct), (20.0, 10.0));
    // A later rule overrides an earlier one where they overlap.
    let rep = compare(&[r], &[m], &rules(&["-8K:20%", "8K:5%"]));
    assert_eq!(verdicts(&rep), [Verdict::Fail, Verdict::Fail]);
}

#[test]
fn default_tolerance_is_ten_percent() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 100.0), (2, 100.0)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 90.0), (2, 89.0)]);
    assert_eq!(verdicts(&compare(&[r], &[m], &Rules::default())), [Verdict::Pass, Verdict::Fail]);
}

#[test]
fn allowed_failures_edge() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 100.0), (2, 100.0), (4, 100.0)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 50.0), (2, 50.0), (4, 100.0)]);
    let mut ru = rules(&["10%"]);
    ru.allowed_failures = 2;
    let rep = compare(std::slice::from_ref(&r), std::slice::from_ref(&m), &ru);
    assert_eq!((rep.summary.failed, rep.summary.ok), (2, true));
    ru.allowed_failures = 1;
    assert!(!compare(&[r], &[m], &ru).summary.ok);
}

#[test]
fn absolute_floor_and_ceiling_edges() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 10.0), (4194304, 24000.0), (2097152, 24000.0)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 10.0), (4194304, 24000.0), (2097152, 23999.0)]);
    let mut ru = rules(&["10%"]);
    ru.limits.push(parse_limit(Quantity::Bandwidth, "1M-:24000").unwrap());
    let rep = compare(&[r], &[m], &ru);
    // Size 1 is outside the floor's range; 4 MiB sits exactly on it.
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Fail, Verdict::Pass]);
    assert!(rep.blocks[0].rows[1].reasons.iter().any(|s| s.contains("below the floor 24000 MB/s")));

    let r = table("osu_latency", "ref", Quantity::Latency, &[(8, 1.0), (16, 1.0)]);
    let m = table("osu_latency", "run", Quantity::Latency, &[(8, 1.05), (16, 1.0)]);
    let mut ru = rules(&["10%"]);
    ru.limits.push(parse_limit(Quantity::Latency, "1.0").unwrap());
    assert_eq!(verdicts(&compare(&[r], &[m], &ru)), [Verdict::Fail, Verdict::Pass]);
}

#[test]
fn several_runs_compare_by_their_median() {
    let r = table("osu_latency", "ref", Quantity::Latency, &[(8, 1.0)]);
    let runs = [
        table("osu_latency", "a", Quantity::Latency, &[(8, 0.9)]),
        table("osu_latency", "b", Quantity::Latency, &[(8, 5.0)]),
        table("osu_latency", "c", Quantity::Latency, &[(8, 1.05)]),
    ];
    let rep = compare(&[r], &runs, &rules(&["10%"]));
    let row = &rep.blocks[0].rows[0];
    assert_eq!((row.measured, row.runs, row.measured_min, row.measured_max), (Some(1.05), 3, Some(0.9), Some(5.0)));
    assert_eq!(row.verdict, Verdict::Pass);
    assert_eq!(rep.blocks[0].runs, ["a", "b", "c"]);
    assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
}

#[test]
fn matching_by_benchmark_and_datatype_and_missing_sizes() {
    let mut r = table("osu_latency", "ref", Quantity::Latency, &[(0, 1.0), (1, 1.0)]);
    r.datatype = None; // pre-7 output: bytes
    let mut m = table("osu_latency", "run", Quantity::Latency, &[(1, 1.0), (2, 1.0)]);
    m.datatype = Some("MPI_CHAR".into());
    let mut other = table("osu_latency", "run", Quantity::Latency, &[(4, 9.0)]);
    other.datatype = Some("MPI_INT".into());
    let bw = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 1.0)]);
    let rep = compare(&[r.clone(), bw], &[m.clone(), other], &rules(&["10%"]));
    assert_eq!(rep.blocks.len(), 1);
    assert_eq!(verdicts(&rep), [Verdict::Missing, Verdict::Pass]);
    assert!(rep.summary.ok, "missing sizes do not fail by default");
    assert_eq!(rep.summary.unmatched, 1);
    assert!(rep.notes.iter().any(|n| n.contains("osu_bw MPI_CHAR: in the reference but in no run")));
    assert!(rep.notes.iter().any(|n| n.contains("osu_latency MPI_INT: measured but not in the reference")));
    let mut ru = rules(&["10%"]);
    ru.require_all = true;
    let rep = compare(&[r], &[m], &ru);
    assert_eq!((rep.summary.counted_failures, rep.summary.ok), (1, false));
}

#[test]
fn failed_validation_fails_the_size() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 1.0)]);
    let mut m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 1.0)]);
    m.points[0].validation = Some(false);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Fail]);
    assert!(rep.blocks[0].rows[0].reasons[0].contains("validation"));
}

#[test]
fn zero_reference_is_skipped_not_divided() {
    let r = table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 0.0)]);
    let m = table("osu_bw", "run", Quantity::Bandwidth, &[(1, 5.0)]);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Skipped]);
    assert_eq!(rep.blocks[0].rows[0].ratio, None);
    assert!(rep.summary.ok);
}

#[test]
fn mbw_mr_compares_bandwidth_and_message_rate() {
    let mut r = table("osu_mbw_mr", "ref", Quantity::Bandwidth, &[(1, 100.0)]);
    r.points[0].msg_rate = Some(1e8);
    let mut m = table("osu_mbw_mr", "run", Quantity::Bandwidth, &[(1, 100.0)]);
    m.points[0].msg_rate = Some(0.5e8);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    let metrics: Vec<Quantity> = rep.blocks.iter().map(|b| b.metric).collect();
    assert_eq!(metrics, [Quantity::Bandwidth, Quantity::MessageRate]);
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Fail]);
}

/// `table` with a spread (`ci95_rel_pct`) on every point.
fn spread(mut t: Table, pct: f64) -> Table {
    for p in &mut t.points {
        p.ci95_rel_pct = Some(pct);
    }
    t
}

fn rules_of(rep: &Report) -> Vec<Rule> {
    rep.blocks.iter().flat_map(|b| b.rows.iter().map(|r| r.rule)).collect()
}

#[test]
fn a_difference_inside_both_spreads_is_within_noise() {
    // 15% slower, each side ±10%: the difference's band is ±15.2%.
    let r = spread(table("osu_latency", "ref", Quantity::Latency, &[(8, 1.0)]), 10.0);
    let m = spread(table("osu_latency", "run", Quantity::Latency, &[(8, 1.15)]), 10.0);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    let row = &rep.blocks[0].rows[0];
    assert_eq!((row.verdict, row.rule), (Verdict::WithinNoise, Rule::Noise));
    let band = (0.1f64.powi(2) + 0.115f64.powi(2)).sqrt() * 100.0;
    assert!((row.noise_pct.unwrap() - band).abs() < 1e-9, "{row:?}");
    assert_eq!(row.reasons, ["+15.0% is inside the combined 95% uncertainty ±15.2%"]);
    let s = &rep.summary;
    assert_eq!((s.passed, s.within_noise, s.failed, s.ok), (1, 1, 0, true));
    // Better than the reference beyond tolerance, but inside the noise.
    let r = spread(table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 100.0)]), 8.0);
    let m = spread(table("osu_bw", "run", Quantity::Bandwidth, &[(1, 112.0)]), 8.0);
    assert_eq!(verdicts(&compare(&[r], &[m], &rules(&["10%"]))), [Verdict::WithinNoise]);
}

#[test]
fn a_difference_beyond_the_spreads_is_judged_by_the_tolerance() {
    // ±0.5% each: the band is ±0.7%; 5% slower passes, 12% fails, 20%
    // faster is better, each decided by the tolerance.
    let r = spread(table("osu_latency", "ref", Quantity::Latency, &[(1, 1.0), (2, 1.0), (4, 1.0)]), 0.5);
    let m = spread(table("osu_latency", "run", Quantity::Latency, &[(1, 1.05), (2, 1.12), (4, 0.8)]), 0.5);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Fail, Verdict::Better]);
    assert_eq!(rules_of(&rep), [Rule::Tolerance; 3]);
    assert!(rep.blocks[0].rows.iter().all(|r| r.noise_pct.is_some_and(|u| u < 1.0)));
    assert!(rep.blocks[0].rows[1].reasons[0].contains("12.0% higher than the reference"));
}

#[test]
fn without_a_spread_on_either_side_the_old_rule_decides_exactly() {
    let bare_r = table("osu_latency", "ref", Quantity::Latency, &[(8, 1.0), (16, 1.0)]);
    let bare_m = table("osu_latency", "run", Quantity::Latency, &[(8, 1.15), (16, 1.05)]);
    let old = compare(std::slice::from_ref(&bare_r), std::slice::from_ref(&bare_m), &rules(&["10%"]));
    for (r, m) in [(bare_r.clone(), spread(bare_m.clone(), 50.0)), (spread(bare_r, 50.0), bare_m)] {
        let rep = compare(&[r], &[m], &rules(&["10%"]));
        assert_eq!(verdicts(&rep), [Verdict::Fail, Verdict::Pass]);
        assert_eq!(rules_of(&rep), [Rule::Tolerance; 2]);
        for (a, b) in rep.blocks[0].rows.iter().zip(&old.blocks[0].rows) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(a.noise_pct, None);
        }
        assert_eq!(rep.summary, old.summary);
    }
}

#[test]
fn every_run_needs_a_spread_and_their_median_is_used() {
    let r = spread(table("osu_latency", "ref", Quantity::Latency, &[(8, 1.0)]), 10.0);
    let runs = [
        spread(table("osu_latency", "a", Quantity::Latency, &[(8, 1.15)]), 2.0),
        table("osu_latency", "b", Quantity::Latency, &[(8, 1.15)]),
    ];
    let rep = compare(std::slice::from_ref(&r), &runs, &rules(&["10%"]));
    assert_eq!((verdicts(&rep), rules_of(&rep)), (vec![Verdict::Fail], vec![Rule::Tolerance]));
    // Spreads 2%, 10% and 30%: the median, 10%, is the runs' spread.
    let runs = [2.0, 10.0, 30.0].map(|p| spread(table("osu_latency", "x", Quantity::Latency, &[(8, 1.15)]), p));
    let rep = compare(&[r], &runs, &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::WithinNoise]);
    let band = (0.1f64.powi(2) + 0.115f64.powi(2)).sqrt() * 100.0;
    assert!((rep.blocks[0].rows[0].noise_pct.unwrap() - band).abs() < 1e-9);
}

#[test]
fn limits_and_validation_fail_inside_the_noise() {
    let r = spread(table("osu_bw", "ref", Quantity::Bandwidth, &[(1, 100.0), (2, 100.0)]), 20.0);
    let mut m = spread(table("osu_bw", "run", Quantity::Bandwidth, &[(1, 95.0), (2, 100.0)]), 20.0);
    m.points[1].validation = Some(false);
    let mut ru = rules(&["10%"]);
    ru.limits.push(parse_limit(Quantity::Bandwidth, "1:96").unwrap());
    let rep = compare(&[r], &[m], &ru);
    assert_eq!(verdicts(&rep), [Verdict::Fail, Verdict::Fail]);
    let rows = &rep.blocks[0].rows;
    assert_eq!(rows[0].rule, Rule::Tolerance);
    assert!(rows[0].reasons.iter().any(|s| s.contains("below the floor 96 MB/s")), "{:?}", rows[0].reasons);
    assert!(rows[1].reasons.iter().any(|s| s.contains("validation")), "{:?}", rows[1].reasons);
}

#[test]
fn the_band_edge_is_within_noise() {
    // 0.08 of 1 and 0.06 of 1.1: the band is 10%, and 10% is inside it.
    let (band, within) = noise_band(1.0, 1.1, (0.08, 0.06 / 1.1));
    assert!((band - 10.0).abs() < 1e-9 && within, "{band}");
    // The band scales each side's share by its own value: 10% of 1.2.
    let (band, within) = noise_band(1.0, 1.2, (0.1, 0.1));
    assert!((band - 0.1f64.hypot(0.12) * 100.0).abs() < 1e-9 && !within);
    let (_, within) = noise_band(100.0, 90.0, (0.05, 0.05));
    assert!(!within);
    // No spread on both sides: any difference is beyond the band.
    assert_eq!(noise_band(1.0, 1.0, (0.0, 0.0)), (0.0, true));
    assert!(!noise_band(1.0, 1.000001, (0.0, 0.0)).1);
}

/// The allowance is the reference's to give: a run's own spread counts at
/// most as much as the reference's, so a run cannot widen it by being, or
/// claiming to be, noisier; huge values do not overflow it.
#[test]
fn the_noise_allowance_is_bounded_by_the_reference() {
    // A reference without spread allows none, whatever the run claims.
    assert_eq!(noise_band(1.0, 1.1, (0.0, 0.5)), (0.0, false));
    // 50 times slower with a claimed interval of 1e300: judged as if the
    // run were as noisy as the reference (2%): ±100%, far below +4900%.
    let (band, within) = noise_band(3.0, 150.0, (0.02, 1e298));
    assert!(!within && (band - 0.02f64.hypot(1.0) * 100.0).abs() < 1e-6, "{band}");
    // 1e308 us against 3 us: no overflow to an infinite band.
    let (band, within) = noise_band(3.0, 1e308, (0.02, 0.02));
    assert!(band.is_finite() && !within, "{band}");
    let r = spread(table("osu_latency", "ref", Quantity::Latency, &[(8, 3.0)]), 2.0);
    let m = spread(table("osu_latency", "run", Quantity::Latency, &[(8, 150.0)]), 90.0);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!((verdicts(&rep), rules_of(&rep)), (vec![Verdict::Fail], vec![Rule::Tolerance]));
}

/// Values no machine measures fail the size (measured) or are not judged
/// (reference), each with its line; they never pass.
#[test]
fn implausible_values_never_pass() {
    let r = table("osu_latency", "ref", Quantity::Latency, &[(1, 3.0), (2, 3.0), (4, 1e308), (8, 3.0)]);
    let m = table("osu_latency", "run", Quantity::Latency, &[(1, 1e308), (2, 1e160), (4, 3.0), (8, 1e-310)]);
    let rep = compare(&[r], &[m], &rules(&["10%"]));
    assert_eq!(verdicts(&rep), [Verdict::Fail, Verdict::Fail, Verdict::Skipped, Verdict::Fail]);
    let reasons: Vec<&str> = rep.blocks[0].rows.iter().map(|r| r.reasons[0].as_str()).collect();
    assert_eq!(
        reasons,
        [
            "measured 1e308 is not a plausible latency (above 1e12 us)",
            "measured 1e160 is not a plausible latency (above 1e12 us)",
            "reference 1e308 is not a plausible latency (above 1e12 us): not judged",
            "measured 1e-310 is not a plausible latency (below 1e-9 us)",
        ]
    );
    assert!(!rep.summary.ok);
}

/// Two machines whose links differ: the raw bandwidths are far apart, but
/// each reached the same share of its own path's peak, which is what
/// `--by-efficiency` judges; without it the bandwidth fails. The bandwidth
/// block shows the runs' efficiency beside the values.
#[test]
fn by_efficiency_judges_shares_of_each_machines_peak() {
    let both = |bw: &[(u64, f64)], eff: &[(u64, f64)], label: &str| {
        let mut t = table("osu_bw", label, Quantity::Bandwidth, bw);
        for (p, (_, e)) in t.points.iter_mut().zip(eff) {
            p.efficiency_pct = Some(*e);
        }
        t
    };
    let r = both(&[(1 << 20, 24_000.0), (4 << 20, 24_500.0)], &[(1 << 20, 96.0), (4 << 20, 98.0)], "hdr");
    let m = both(&[(1 << 20, 11_900.0), (4 << 20, 12_000.0)], &[(1 << 20, 95.2), (4 << 20, 96.0)], "edr");
    let plain = compare(std::slice::from_ref(&r), std::slice::from_ref(&m), &rules(&["5%"]));
    assert_eq!(verdicts(&plain), [Verdict::Fail, Verdict::Fail]);
    assert_eq!(plain.blocks[0].rows[1].efficiency_pct, Some(96.0));
    let by = Rules { by_efficiency: true, ..rules(&["5%"]) };
    let rep = compare(std::slice::from_ref(&r), &[m], &by);
    assert_eq!((rep.blocks.len(), rep.blocks[0].metric), (1, Quantity::Efficiency));
    assert_eq!(verdicts(&rep), [Verdict::Pass, Verdict::Pass]);
    // One that fell to half its peak fails.
    let half = both(&[(1 << 20, 6_000.0), (4 << 20, 6_000.0)], &[(1 << 20, 48.0), (4 << 20, 48.0)], "slow");
    assert_eq!(verdicts(&compare(std::slice::from_ref(&r), &[half], &by)), [Verdict::Fail, Verdict::Fail]);
    // A side without efficiency (OSU's text, an unknown peak) is said.
    let bare = table("osu_bw", "osu", Quantity::Bandwidth, &[(1 << 20, 1.0)]);
    let rep = compare(&[bare], &[r], &by);
    assert_eq!(rep.summary.unmatched, 1);
    assert!(
        rep.notes[0].contains("not compared: --by-efficiency needs an efficiency on both sides"),
        "{:?}",
        rep.notes
    );
}
