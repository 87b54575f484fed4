use super::*;
use crate::stats::synthetic::{bimodal, constant, drifting, gaussian, heavy_tailed};

fn pct(p: f64) -> Precision {
    Precision::from_fraction(p / 100.0).unwrap()
}

/// How a size ended: iterations run, why, and every batch asked for.
#[derive(Debug)]
struct Outcome {
    iterations: u64,
    reason: StopReason,
    batches: Vec<u64>,
    mean: f64,
}

/// Runs `rule` over `stream` (seconds per iteration, as timed; each
/// iteration also takes that long against the time limit), batch by batch
/// as the rule asks. The stream is longer than any ceiling used here.
fn drive(rule: StoppingRule, stream: &[f64]) -> Outcome {
    let mut run = rule.start();
    let mut at = 0usize;
    let mut batch = run.first_batch();
    let mut batches = vec![batch];
    loop {
        let values = &stream[at..at + batch as usize];
        at += batch as usize;
        let took = Duration::from_secs_f64(values.iter().sum());
        match run.record_values(values, took) {
            Decision::Continue(n) => {
                assert!(n >= 1);
                batch = n;
                batches.push(n);
            }
            Decision::Stop(reason) => {
                assert_eq!(run.iterations(), at as u64);
                return Outcome { iterations: run.iterations(), reason, batches, mean: run.moments().mean() };
            }
        }
    }
}

const N: usize = 40_000;

#[test]
fn constant_samples_stop_at_the_floor() {
    let o = drive(StoppingRule::new(pct(1.0), 100, 10_000, None), &constant(N, 1e-6));
    assert_eq!((o.iterations, o.reason), (100, StopReason::Precision), "{o:?}");
    assert_eq!(o.batches, [100]);
    // A floor below the fewest values precision is judged from.
    let o = drive(StoppingRule::new(pct(1.0), 1, 10_000, None), &constant(N, 1e-6));
    assert_eq!((o.iterations, o.reason), (MIN_OBSERVATIONS, StopReason::Precision), "{o:?}");
}

#[test]
fn quiet_samples_stop_early_and_near_the_true_mean() {
    for seed in 1..=5 {
        // 10% spread: about (1.96 * 0.1 / 0.01)^2 = 384 iterations for 1%.
        let o = drive(StoppingRule::new(pct(1.0), 100, 10_000, None), &gaussian(N, 2e-6, 0.2e-6, seed));
        assert_eq!(o.reason, StopReason::Precision, "{o:?}");
        assert!((300..=1000).contains(&o.iterations), "seed {seed}: {o:?}");
        assert!((o.mean / 2e-6 - 1.0).abs() < 0.02, "seed {seed}: {o:?}");
    }
}

#[test]
fn noisy_samples_run_to_the_ceiling_and_not_past_it() {
    // 100% spread would need about 38000 iterations for 1%.
    let o = drive(StoppingRule::new(pct(1.0), 100, 10_000, None), &gaussian(N, 1e-6, 1e-6, 3));
    assert_eq!((o.iterations, o.reason), (10_000, StopReason::Ceiling), "{o:?}");
    // Rare long stalls: the interval stays wide.
    let o = drive(StoppingRule::new(pct(1.0), 100, 10_000, None), &heavy_tailed(N, 1e-6, 0.03, 4));
    assert_eq!((o.iterations, o.reason), (10_000, StopReason::Ceiling), "{o:?}");
}

#[test]
fn looser_targets_stop_sooner() {
    let two_levels = bimodal(N, 0.2e-6, 0.7e-6, 0.4, 0.02e-6, 5);
    let tight = drive(StoppingRule::new(pct(1.0), 100, 10_000, None), &two_levels);
    let loose = drive(StoppingRule::new(pct(5.0), 100, 10_000, None), &two_levels);
    assert_eq!(loose.reason, StopReason::Precision, "{loose:?}");
    assert!(loose.iterations < tight.iterations / 4, "{loose:?} {tight:?}");
}

#[test]
fn never_below_the_floor_nor_past_the_ceiling() {
    let streams = [
        constant(N, 1e-6),
        gaussian(N, 1e-6, 0.05e-6, 6),
        gaussian(N, 1e-6, 2e-6, 7),
        bimodal(N, 1e-6, 3e-6, 0.3, 0.1e-6, 8),
        drifting(N, 1e-6, 2e-6, 0.05e-6, 9),
        heavy_tailed(N, 1e-6, 0.05, 10),
    ];
    for (i, s) in streams.iter().enumerate() {
        for (floor, ceiling, target) in [(100, 10_000, 1.0), (1000, 1000, 1.0), (500, 2000, 0.1), (5000, 100, 50.0)] {
            let rule = StoppingRule::new(pct(target), floor, ceiling, None);
            let o = drive(rule, s);
            assert!(o.iterations >= rule.floor && o.iterations <= rule.ceiling, "stream {i} {rule:?}: {o:?}");
            // After the floor, each batch is between an eighth of and as
            // many as the iterations done.
            let mut done = o.batches[0];
            for &b in &o.batches[1..] {
                assert!(b <= done && (b >= done / 8 || done + b == rule.ceiling), "stream {i}: {o:?}");
                done += b;
            }
        }
    }
}

#[test]
fn the_time_limit_stops_a_noisy_size_after_its_floor() {
    // Each iteration takes about 1 ms; half a second per size.
    let noisy = gaussian(N, 1e-3, 1e-3, 11);
    let rule = StoppingRule::new(pct(1.0), 100, 10_000, Some(Duration::from_millis(500)));
    let o = drive(rule, &noisy);
    assert_eq!(o.reason, StopReason::TimeLimit, "{o:?}");
    let spent: f64 = noisy[..o.iterations as usize].iter().sum();
    assert!(spent <= 0.5 * 1.1 && o.iterations >= 100, "{spent} {o:?}");
    // A floor that takes longer than the limit still runs in full.
    let rule = StoppingRule::new(pct(1.0), 1000, 10_000, Some(Duration::from_millis(500)));
    let o = drive(rule, &noisy);
    assert_eq!((o.iterations, o.reason), (1000, StopReason::TimeLimit), "{o:?}");
    // Quiet samples stop on precision well inside the limit.
    let o = drive(rule, &gaussian(N, 1e-3, 0.01e-3, 12));
    assert_eq!(o.reason, StopReason::Precision, "{o:?}");
}

#[test]
fn batch_means_as_values() {
    // A caller timing batches of 50 calls as one value each.
    let rule = StoppingRule::new(pct(1.0), 500, 10_000, None);
    let mut run = rule.start();
    let values = gaussian(1000, 1e-6, 0.02e-6, 13);
    let mut d = Decision::Continue(run.first_batch());
    let mut used = 0;
    while let Decision::Continue(n) = d {
        let k = (n as usize).div_ceil(50);
        d = run.record(&Moments::of(&values[used..used + k]), 50 * k as u64, Duration::ZERO);
        used += k;
    }
    assert_eq!(d, Decision::Stop(StopReason::Precision));
    assert!(run.moments().count() >= MIN_OBSERVATIONS && run.iterations() >= 500);
    let ci = run.interval().unwrap();
    assert!(ci.relative_half_width() <= 0.01);
}

#[test]
fn rule_limits_are_brought_in_range() {
    let r = StoppingRule::new(pct(1.0), 5000, 100, None);
    assert_eq!((r.floor, r.ceiling), (100, 100));
    let r = StoppingRule::new(pct(1.0), 0, 0, None);
    assert_eq!((r.floor, r.ceiling), (1, 1));
    assert_eq!(suggested_floor(10_000), 1000);
    assert_eq!(suggested_floor(100), 10);
    assert_eq!(suggested_floor(5), 5);
    assert_eq!(suggested_floor(0), 1);
    assert_eq!(StopReason::TimeLimit.as_str(), "time_limit");
    assert_eq!(serde_json::to_value(StopReason::Precision).unwrap(), "precision");
}

#[test]
fn precision_option_grammar() {
    assert_eq!(parse_precision("1%").unwrap().fraction(), 0.01);
    assert_eq!(parse_precision(" 0.5 %").unwrap().percent(), 0.5);
    assert_eq!(parse_precision("100%").unwrap().fraction(), 1.0);
    for bad in ["", "%", "1", "0.01", "0%", "-1%", "100.5%", "NaN%", "inf%", "1%%", "one%", "1e400%"] {
        let e = parse_precision(bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "--precision '{bad}': give a percentage above 0 and at most 100, with its % sign (e.g. 1% or 0.5%)"
            )
        );
    }
}

#[test]
fn floor_and_time_option_grammar() {
    assert_eq!(parse_min_iterations("200"), Ok(200));
    assert_eq!(parse_min_iterations(" 1 "), Ok(1));
    for bad in ["0", "-5", "1.5", "", "2147483648", "1e3", "+3"] {
        assert_eq!(
            parse_min_iterations(bad).unwrap_err().to_string(),
            format!("--min-iterations '{bad}': give a whole number of iterations from 1 to 2147483647")
        );
    }
    assert_eq!(parse_max_time_per_size("2"), Ok(Duration::from_secs(2)));
    assert_eq!(parse_max_time_per_size("0.5s"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_max_time_per_size("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(parse_max_time_per_size("2m"), Ok(Duration::from_secs(120)));
    for bad in ["0", "-1", "", "s", "fast", "NaN", "inf", "99999999m"] {
        assert!(
            parse_max_time_per_size(bad)
                .unwrap_err()
                .to_string()
                .starts_with(&format!("--max-time-per-size '{bad}': ")),
            "{bad}"
        );
    }
}
