//! The golden runner every layout test shares: a table of commands, each
//! with OSU 7.4's own stdout for it (tests/golden/<name>.txt, cut from
//! OSU's binaries by scripts/build-osu.sh), run [`short_jobs_at_once`] at a
//! time; each stdout must match its file byte for byte once measured
//! values are masked.

use super::{each_at_once, golden, launch, mask, short_jobs_at_once, Launch, Mpi};

/// (golden file, benchmark, np, arguments), as the tables are written.
pub type Case = (&'static str, &'static str, usize, &'static [&'static str]);

/// One command and the golden file its stdout must match.
#[derive(Clone, Debug)]
pub struct GoldenRun {
    pub name: String,
    pub bench: String,
    pub np: usize,
    pub args: Vec<String>,
}

impl GoldenRun {
    pub fn new(name: &str, bench: &str, np: usize, args: &[&str]) -> GoldenRun {
        GoldenRun { name: name.into(), bench: bench.into(), np, args: args.iter().map(|a| a.to_string()).collect() }
    }

    /// The runs of a table, each at its own np.
    pub fn table(cases: &[Case]) -> Vec<GoldenRun> {
        cases.iter().map(|(name, bench, np, args)| GoldenRun::new(name, bench, *np, args)).collect()
    }

    /// The same command at another number of ranks (the layout does not
    /// depend on it).
    pub fn at_np(mut self, np: usize) -> GoldenRun {
        self.np = np;
        self
    }

    /// The same command with `more` arguments after its own.
    pub fn with(mut self, more: &[&str]) -> GoldenRun {
        self.args.extend(more.iter().map(|a| a.to_string()));
        self
    }
}

/// What every run of a batch shares.
#[derive(Clone, Debug, Default)]
pub struct GoldenEnv {
    pub env: Vec<(String, String)>,
    /// Whether stderr must be empty too (nothing beside OSU's stdout).
    pub quiet_stderr: bool,
}

/// Runs every command under `mpi` (the caller holds `mpi_lock`): exit
/// status 0, no panic, and stdout equal to the golden file, digits masked.
pub fn check_goldens(mpi: Mpi, runs: &[GoldenRun], shared: &GoldenEnv) {
    let cwd = tempfile::tempdir().unwrap();
    each_at_once(runs, short_jobs_at_once(mpi), |g| {
        let args: Vec<&str> = g.args.iter().map(String::as_str).collect();
        let o = Launch { cwd: Some(cwd.path().to_path_buf()), env: shared.env.clone(), ..Launch::default() };
        let run = launch(mpi, g.np, &g.bench, &args, &o);
        let what = format!("{mpi:?} np={} {} {args:?}", g.np, g.bench);
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        run.assert_no_panic();
        if shared.quiet_stderr {
            assert!(run.our_stderr_lines().is_empty(), "{what}: {}", run.stderr);
        }
        assert_eq!(mask(&run.stdout), mask(&golden(&g.name)), "{what} differs from OSU's {}.txt", g.name);
    });
}
