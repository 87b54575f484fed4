"""The A/A band of a quantity measured once a round, for the benchmark
scripts that time their own rounds: asked of `commbench ab --band-of`, so
that a wall time is judged by the same band as `commbench ab` judges a size
(the larger of the two medians' distance and the 95th percentile of the
distances between medians resampled from both runs' values)."""

import subprocess


def aa_band(commbench, a, control):
    """The band as a fraction (0.05 for 5%) of A's values against the
    control's, or None without a control. Exits 2 with commbench's line
    when it refuses the values."""
    if not control:
        return None
    argv = [commbench, "ab", "--band-of", " ".join(repr(float(x)) for x in a), " ".join(repr(float(x)) for x in control)]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])}: {done.stderr.strip() or f'exit {done.returncode}'}")
    return float(done.stdout) / 100
