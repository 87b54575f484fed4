//! Deterministic synthetic sample streams for the statistics tests: a
//! small seeded generator (SplitMix64) and the shapes timing samples take
//! (flat, normal and log-normal noise, autocorrelated noise, two levels, a
//! level that moves, rare long stalls).

pub use super::rng::Rng;

/// `n` copies of `v`.
pub(crate) fn constant(n: usize, v: f64) -> Vec<f64> {
    vec![v; n]
}

/// Normal around `mean` with standard deviation `sd`, kept above 0.
pub(crate) fn gaussian(n: usize, mean: f64, sd: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| (mean + sd * r.normal()).max(mean * 1e-3)).collect()
}

/// Two levels: `hi` with probability `p_hi`, else `lo`, each with normal
/// noise of `sd`, in random order.
pub(crate) fn bimodal(n: usize, lo: f64, hi: f64, p_hi: f64, sd: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let level = if r.uniform() < p_hi { hi } else { lo };
            (level + sd * r.normal()).max(lo * 1e-3)
        })
        .collect()
}

/// A level that moves linearly from `start` to `end` over the stream, with
/// normal noise of `sd`.
pub(crate) fn drifting(n: usize, start: f64, end: f64, sd: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|i| {
            let level = start + (end - start) * i as f64 / n.max(2) as f64;
            (level + sd * r.normal()).max(start.min(end) * 1e-3)
        })
        .collect()
}

/// `base` with 2% normal noise, and with probability `p_stall` a stall of
/// a Pareto-distributed length (shape 1.5, at least `base`) on top.
pub(crate) fn heavy_tailed(n: usize, base: f64, p_stall: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let mut x = base * (1.0 + 0.02 * r.normal());
            if r.uniform() < p_stall {
                x += base * r.uniform().powf(-1.0 / 1.5);
            }
            x.max(base * 1e-3)
        })
        .collect()
}

/// Log-normal around the median `median`: `median * exp(sigma * z)`, `z`
/// standard normal (right-skewed, as timings are).
pub(crate) fn log_normal(n: usize, median: f64, sigma: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| median * (sigma * r.normal()).exp()).collect()
}

/// Steady but autocorrelated: `mean` plus a first-order autoregressive
/// noise of standard deviation `sd` whose successive values correlate by
/// `rho` (a busy spell slows several iterations in a row), kept above 0.
pub(crate) fn autocorrelated(n: usize, mean: f64, sd: f64, rho: f64, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    let innovation = sd * (1.0 - rho * rho).sqrt();
    let mut e = sd * r.normal();
    (0..n)
        .map(|_| {
            let x = (mean + e).max(mean * 1e-3);
            e = rho * e + innovation * r.normal();
            x
        })
        .collect()
}
