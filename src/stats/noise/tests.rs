use super::*;
use crate::stats::synthetic::{bimodal, constant, drifting, gaussian, heavy_tailed};

fn flags(samples: &[f64]) -> Vec<NoiseFlag> {
    assess(samples, &NoiseThresholds::default()).unwrap().flags
}

#[test]
fn constant_samples_are_ok() {
    let r = assess(&constant(1000, 1.5e-6), &NoiseThresholds::default()).unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.cell(), "ok");
    assert_eq!((r.cv, r.rel_ci, r.outlier_share), (Some(0.0), Some(0.0), Some(0.0)));
    assert_eq!(r.split_explained, None);
}

#[test]
fn quiet_normal_noise_is_ok() {
    for seed in 1..=5 {
        assert_eq!(flags(&gaussian(10_000, 1.0, 0.05, seed)), [], "seed {seed}");
    }
}

#[test]
fn wide_normal_noise_is_noisy_and_nothing_else() {
    let r = assess(&gaussian(10_000, 1.0, 0.4, 7), &NoiseThresholds::default()).unwrap();
    assert_eq!(r.flags, [NoiseFlag::Noisy], "{r:?}");
    assert!(r.robust_cv.unwrap() > 0.3);
    // Few samples of moderate noise: the interval of the mean is what is wide.
    let r = assess(&gaussian(12, 1.0, 0.2, 3), &NoiseThresholds::default()).unwrap();
    assert!(r.rel_ci.unwrap() > 0.05 && r.robust_cv.unwrap() < 0.25, "{r:?}");
    assert_eq!(r.flags, [NoiseFlag::Noisy]);
}

#[test]
fn two_levels_are_bimodal() {
    // 8-byte latency jumping between 0.2 and 0.7 us, as on this machine.
    let r = assess(&bimodal(5000, 0.2, 0.7, 0.4, 0.02, 11), &NoiseThresholds::default()).unwrap();
    assert!(r.flags.contains(&NoiseFlag::Bimodal), "{r:?}");
    assert!(!r.flags.contains(&NoiseFlag::Drift), "{r:?}");
    assert!(r.split_explained.unwrap() > 0.95);
    assert!((r.split_minor_share.unwrap() - 0.4).abs() < 0.05);
    // A 20% second mode six standard deviations away is still found ...
    assert!(flags(&bimodal(5000, 1.0, 1.6, 0.2, 0.1, 12)).contains(&NoiseFlag::Bimodal));
    // ... one mode is not, whatever its spread.
    for seed in 1..=5 {
        assert!(!flags(&gaussian(5000, 1.0, 0.4, seed)).contains(&NoiseFlag::Bimodal));
    }
}

#[test]
fn a_moving_level_is_drift() {
    let r = assess(&drifting(4000, 1.0, 1.3, 0.02, 5), &NoiseThresholds::default()).unwrap();
    assert_eq!(r.primary(), Some(NoiseFlag::Drift), "{r:?}");
    assert!(r.drift_rel.unwrap() > 0.1 && r.drift_significant == Some(true));
    // Significant but below 2% of the mean: not flagged.
    let r = assess(&drifting(100_000, 1.0, 1.01, 0.01, 5), &NoiseThresholds::default()).unwrap();
    assert_eq!(r.drift_significant, Some(true));
    assert!(!r.flags.contains(&NoiseFlag::Drift), "{r:?}");
    // Too few samples to test.
    let r = assess(&drifting(10, 1.0, 2.0, 0.01, 5), &NoiseThresholds::default()).unwrap();
    assert_eq!((r.drift_rel, r.split_explained), (None, None));
    assert!(!r.flags.contains(&NoiseFlag::Drift));
}

#[test]
fn explanations_name_the_numbers() {
    let th = NoiseThresholds::default();
    assert_eq!(assess(&constant(100, 1.0), &th).unwrap().explain(), "ok");
    let r = assess(&drifting(4000, 1.0, 1.3, 0.02, 5), &th).unwrap();
    assert!(r.explain().starts_with("drift (second half +"), "{}", r.explain());
    let r = assess(&heavy_tailed(10_000, 1.0, 0.03, 9), &th).unwrap();
    assert!(
        r.explain().contains("outliers (") && r.explain().contains("% of samples beyond the fence)"),
        "{}",
        r.explain()
    );
    let r = assess(&bimodal(5000, 0.2, 0.7, 0.4, 0.02, 11), &th).unwrap();
    assert!(r.explain().starts_with("bimodal (two groups explain 9"), "{}", r.explain());
}

#[test]
fn rare_long_stalls_are_outliers_not_modes() {
    let r = assess(&heavy_tailed(10_000, 1.0, 0.03, 9), &NoiseThresholds::default()).unwrap();
    assert!(r.flags.contains(&NoiseFlag::Outliers), "{r:?}");
    assert!(!r.flags.contains(&NoiseFlag::Bimodal) && !r.flags.contains(&NoiseFlag::Drift), "{r:?}");
    assert!(r.outlier_share.unwrap() > 0.02);
    // One stall in ten thousand is within the allowed share, and the
    // interval of the mean stays narrow.
    let mut v = gaussian(10_000, 1.0, 0.02, 4);
    v[5000] = 50.0;
    assert_eq!(flags(&v), []);
}

#[test]
fn quantised_samples_are_not_all_outliers() {
    // A coarse clock: nearly every sample the same tick, a few one tick up.
    let mut v = constant(1000, 1.0);
    for x in v.iter_mut().step_by(50) {
        *x = 1.005;
    }
    assert!(!flags(&v).contains(&NoiseFlag::Outliers));
}

#[test]
fn cells_list_flags_in_order_and_read_back() {
    assert_eq!(format_flags(&[]), "ok");
    assert_eq!(format_flags(&[NoiseFlag::Noisy, NoiseFlag::Drift, NoiseFlag::Noisy]), "drift;noisy");
    assert_eq!(parse_flags("noisy; drift").unwrap(), [NoiseFlag::Drift, NoiseFlag::Noisy]);
    assert_eq!(parse_flags(" ok ").unwrap(), []);
    for f in NoiseFlag::ALL {
        assert_eq!(f.as_str().parse::<NoiseFlag>(), Ok(f));
    }
    let all = format_flags(&NoiseFlag::ALL);
    assert_eq!(all, "drift;bimodal;noisy;outliers");
    assert_eq!(parse_flags(&all).unwrap(), NoiseFlag::ALL);
    assert_eq!(
        parse_flags("noisy;loud").unwrap_err().to_string(),
        "'noisy;loud' is not a noise verdict (ok, or drift, bimodal, noisy, outliers joined by ';')"
    );
    assert!(parse_flags("").is_err() && parse_flags("ok;noisy").is_err());
}

#[test]
fn thresholds_and_reports_serialise() {
    let th = NoiseThresholds::default();
    let v = serde_json::to_value(&th).unwrap();
    assert_eq!(v["max_cv"], 0.25);
    assert_eq!(v["min_samples"], 20);
    let back: NoiseThresholds = serde_json::from_value(v).unwrap();
    assert_eq!(back, th);
    let r = assess(&drifting(1000, 1.0, 2.0, 0.01, 1), &th).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["flags"][0], "drift");
    assert!(assess(&[], &th).is_none());
}
