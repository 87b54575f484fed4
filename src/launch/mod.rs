//! Launching a job through a launcher (mpirun, mpiexec, srun): the library
//! the suite, locate and every front end that starts MPI jobs share, so none
//! of them imports another subcommand. This file: which launcher to start
//! the binaries with for the MPI they use (asked for, or detected: srun
//! inside a Slurm allocation, otherwise the library's own mpirun /
//! mpiexec), and the exact command line for one job with a given rank
//! layout, including switching the launcher's binding off when commbench
//! places the ranks. exec.rs runs one such command (keeper.rs passing the
//! caller's death on), progress.rs shows it, hostfile.rs reads the hosts
//! and checks their names, run_dir.rs makes the run directory.

pub mod exec;
pub mod hostfile;
pub mod keeper;
pub mod progress;
pub mod run_dir;

use std::path::Path;

use serde::Serialize;

/// The MPI library the binaries were built against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MpiFlavor {
    OpenMpi,
    Mpich,
    Unknown,
}

impl MpiFlavor {
    /// From an `MPI_Get_library_version` string.
    pub(crate) fn from_library_version(v: &str) -> MpiFlavor {
        if v.contains("Open MPI") {
            MpiFlavor::OpenMpi
        } else if v.contains("MPICH") {
            MpiFlavor::Mpich
        } else {
            MpiFlavor::Unknown
        }
    }

    /// The library this executable is linked with (what the binaries use
    /// when they say nothing else; see `binaries::mpi_of`). MPI allows
    /// asking before MPI_Init.
    pub(crate) fn of_this_build() -> (MpiFlavor, String) {
        let v = mpi::environment::library_version().unwrap_or_default();
        (MpiFlavor::from_library_version(&v), v)
    }

    /// srun's `--mpi` plugin for this library: PMIx for Open MPI, PMI-2
    /// for MPICH.
    fn srun_mpi(self) -> Option<&'static str> {
        match self {
            MpiFlavor::OpenMpi => Some("pmix"),
            MpiFlavor::Mpich => Some("pmi2"),
            MpiFlavor::Unknown => None,
        }
    }
}

/// How a launcher takes its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum LauncherKind {
    /// Open MPI's mpirun / mpiexec.
    OpenMpi,
    /// MPICH's hydra (mpiexec.mpich, mpiexec.hydra, or MPICH's mpirun).
    Hydra,
    Srun,
}

/// A launcher program and how to talk to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Launcher {
    pub program: String,
    pub kind: LauncherKind,
}

/// Launcher names `--launcher` accepts (a path ending in one works too).
pub(crate) const KNOWN: &[&str] = &[
    "mpirun",
    "mpiexec",
    "mpirun.openmpi",
    "mpiexec.openmpi",
    "mpirun.mpich",
    "mpiexec.mpich",
    "mpiexec.hydra",
    "srun",
];

impl Launcher {
    /// The launcher named by `--launcher`. Plain mpirun/mpiexec are what
    /// they resolve to on PATH (Debian's alternatives link them to one MPI's
    /// launcher), else taken to belong to the binaries' MPI.
    pub fn named(program: &str, flavor: MpiFlavor) -> Result<Launcher, String> {
        let base = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
        let kind = match base {
            "srun" => LauncherKind::Srun,
            "mpiexec.mpich" | "mpiexec.hydra" | "mpirun.mpich" => LauncherKind::Hydra,
            "mpirun.openmpi" | "mpiexec.openmpi" => LauncherKind::OpenMpi,
            "mpirun" | "mpiexec" => match (locate(program).and_then(|p| kind_of_file(&p)), flavor) {
                (Some(kind), _) => kind,
                (None, MpiFlavor::Mpich) => LauncherKind::Hydra,
                (None, MpiFlavor::OpenMpi | MpiFlavor::Unknown) => LauncherKind::OpenMpi,
            },
            _ => return Err(format!("unknown launcher '{program}' (one of: {})", KNOWN.join(", "))),
        };
        Ok(Launcher { program: program.to_string(), kind })
    }

    /// The launcher to use when none was named: srun inside a Slurm
    /// allocation (where it exists), else the library's own launcher.
    pub(crate) fn detect(flavor: MpiFlavor, in_allocation: bool, on_path: &dyn Fn(&str) -> bool) -> Launcher {
        if in_allocation && on_path("srun") {
            return Launcher { program: "srun".into(), kind: LauncherKind::Srun };
        }
        match flavor {
            MpiFlavor::Mpich => {
                let program = if on_path("mpiexec.mpich") { "mpiexec.mpich" } else { "mpiexec" };
                Launcher { program: program.into(), kind: LauncherKind::Hydra }
            }
            MpiFlavor::OpenMpi | MpiFlavor::Unknown => {
                Launcher { program: "mpirun".into(), kind: LauncherKind::OpenMpi }
            }
        }
    }

    /// Whether this launcher can start binaries built against `flavor`
    /// (srun can start either, through the matching PMI).
    pub fn matches(&self, flavor: MpiFlavor) -> bool {
        !matches!(
            (self.kind, flavor),
            (LauncherKind::OpenMpi, MpiFlavor::Mpich) | (LauncherKind::Hydra, MpiFlavor::OpenMpi)
        )
    }
}

/// Where the ranks of one benchmark go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    pub np: usize,
    /// Ranks per node (None: the launcher's default placement).
    pub ppn: Option<usize>,
    /// Nodes to use (None: the launcher's default).
    pub nodes: Option<usize>,
}

/// Everything besides the layout that goes on the launcher's command line.
#[derive(Clone, Debug, Default)]
pub struct LaunchContext<'a> {
    pub flavor: Option<MpiFlavor>,
    /// Hosts of the hostfile, in order (srun gets the first `nodes` of them).
    pub hostfile: Option<(&'a Path, &'a [String])>,
    /// Passed to the launcher verbatim, before the binary.
    pub launcher_args: &'a [String],
    /// Placement belongs to commbench (`--bind`, `--cpu-list`, `--nic`,
    /// `--gpu`): the launcher's own binding is switched off, unless the
    /// launcher arguments already say how to bind.
    pub unbind: bool,
}

/// Launcher options that choose a binding: with one of these among the
/// launcher arguments, the suite adds none of its own.
const BINDING_OPTIONS: &[&str] = &["--bind-to", "-bind-to", "-binding", "--cpu-bind", "--cpu_bind"];

/// Whether `args` already choose the launcher's binding.
pub fn binds(args: &[String]) -> bool {
    args.iter().any(|a| BINDING_OPTIONS.iter().any(|o| a == o || a.starts_with(&format!("{o}="))))
}

/// The launcher's options for "do not bind the ranks".
pub(crate) fn binding_off(kind: LauncherKind) -> &'static [&'static str] {
    match kind {
        LauncherKind::OpenMpi => &["--bind-to", "none"],
        LauncherKind::Hydra => &["-bind-to", "none"],
        LauncherKind::Srun => &["--cpu-bind=none"],
    }
}

/// The full command line: launcher, its options, the binary, its arguments.
pub fn command(l: &Launcher, layout: &Layout, ctx: &LaunchContext, binary: &Path, args: &[String]) -> Vec<String> {
    let mut c = vec![l.program.clone()];
    let mut push = |a: &str, b: String| {
        c.push(a.to_string());
        c.push(b);
    };
    match l.kind {
        LauncherKind::OpenMpi => {
            push("-np", layout.np.to_string());
            if let Some((path, _)) = ctx.hostfile {
                push("--hostfile", path.display().to_string());
            }
            if let Some(ppn) = layout.ppn {
                push("--map-by", format!("ppr:{ppn}:node"));
            }
        }
        LauncherKind::Hydra => {
            push("-n", layout.np.to_string());
            if let Some((path, _)) = ctx.hostfile {
                push("-f", path.display().to_string());
            }
            if let Some(ppn) = layout.ppn {
                push("-ppn", ppn.to_string());
            }
        }
        LauncherKind::Srun => {
            let user_mpi = ctx.launcher_args.iter().any(|a| a == "--mpi" || a.starts_with("--mpi="));
            if let (false, Some(m)) = (user_mpi, ctx.flavor.and_then(MpiFlavor::srun_mpi)) {
                c.push(format!("--mpi={m}"));
            }
            let mut push = |a: &str, b: String| {
                c.push(a.to_string());
                c.push(b);
            };
            push("-n", layout.np.to_string());
            if let Some(nodes) = layout.nodes {
                push("-N", nodes.to_string());
            }
            if let Some(ppn) = layout.ppn {
                push("--ntasks-per-node", ppn.to_string());
            }
            if let Some((_, hosts)) = ctx.hostfile {
                let n = layout.nodes.unwrap_or(hosts.len()).min(hosts.len());
                push("-w", hosts[..n].join(","));
            }
        }
    }
    if ctx.unbind && !binds(ctx.launcher_args) {
        c.extend(binding_off(l.kind).iter().map(|a| a.to_string()));
    }
    c.extend(ctx.launcher_args.iter().cloned());
    c.push(binary.display().to_string());
    c.extend(args.iter().cloned());
    c
}

/// Environment the launcher needs from us: Open MPI's mpirun refuses to
/// run as root unless told twice that it is meant.
pub(crate) fn extra_env(l: &Launcher, is_root: bool, get: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    if l.kind != LauncherKind::OpenMpi || !is_root {
        return Vec::new();
    }
    ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"]
        .iter()
        .filter(|k| get(k).is_none())
        .map(|k| (k.to_string(), "1".to_string()))
        .collect()
}

/// [`extra_env`] for this process (root or not, its environment).
pub(crate) fn env_for(l: &Launcher) -> Vec<(String, String)> {
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    extra_env(l, is_root, &|k| std::env::var(k).ok())
}

/// A TMPDIR of the launcher's own for one suite or locate, made inside the
/// user's, added to `env`; the directory goes when the value is dropped.
/// Open MPI's mpirun keeps its session directory, `ompi.<host>.<uid>` (or
/// PRRTE's `prte.<host>.<uid>`), under TMPDIR: one per user and host,
/// which every mpirun creates when it is missing and removes when it
/// leaves it empty, so two started at once (two suites side by side, a
/// suite beside the user's other jobs) race on it and one fails to start
/// (`A call to mkdir was unable to create the desired directory`). Only
/// for Open MPI: MPICH's hydra keeps nothing there, and srun and hydra
/// pass TMPDIR on to every rank on every host, where this directory does
/// not exist (mpirun passes it to the ranks on its own host only). When it
/// cannot be made, one line says so and the launcher keeps the user's.
pub fn own_tmpdir(l: &Launcher, env: &mut Vec<(String, String)>) -> Option<crate::report::safe_file::PrivateDir> {
    if l.kind != LauncherKind::OpenMpi {
        return None;
    }
    let parent = std::env::temp_dir();
    match crate::report::safe_file::PrivateDir::new_in(&parent, "commbench-mpirun") {
        Ok(d) => {
            env.push(("TMPDIR".to_string(), d.path().display().to_string()));
            Some(d)
        }
        Err(e) => {
            crate::say!(
                "commbench: cannot make a TMPDIR for {} in {}: {e}; it keeps yours",
                crate::diag::printable(&l.program),
                parent.display()
            );
            None
        }
    }
}

/// Whether `program` can be run: a path that exists, or a name on PATH.
pub(crate) fn on_path(program: &str) -> bool {
    locate(program).is_some()
}

/// The file `program` runs: a path that exists, or the first on PATH.
fn locate(program: &str) -> Option<std::path::PathBuf> {
    if program.contains('/') {
        return Some(std::path::PathBuf::from(program)).filter(|p| p.is_file());
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file())
}

/// Which launcher a file is, by the name it resolves to through its links
/// (`mpirun` -> `orterun`, `mpiexec` -> `mpiexec.hydra`); None when the
/// name says nothing.
pub(crate) fn kind_of_file(path: &Path) -> Option<LauncherKind> {
    let real = std::fs::canonicalize(path).ok()?;
    let name = real.file_name()?.to_str()?;
    match name {
        "orterun" | "prterun" | "mpirun.openmpi" | "mpiexec.openmpi" => Some(LauncherKind::OpenMpi),
        "mpiexec.hydra" | "mpiexec.mpich" | "mpirun.mpich" => Some(LauncherKind::Hydra),
        _ => None,
    }
}

/// The most ranks, ranks per node or nodes a launch is planned for.
pub(crate) const MAX_RANKS: usize = 1 << 20;

/// Words of an argument string, split on whitespace (no quoting: benchmark
/// and launcher options have no spaces in their values).
pub fn split_words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// A command line as one shell-pasteable string.
pub(crate) fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn l(program: &str, flavor: MpiFlavor) -> Launcher {
        Launcher::named(program, flavor).unwrap()
    }

    #[test]
    fn flavors() {
        assert_eq!(MpiFlavor::from_library_version("Open MPI v4.1.4, package: Debian"), MpiFlavor::OpenMpi);
        assert_eq!(MpiFlavor::from_library_version("MPICH Version:\t4.0.2"), MpiFlavor::Mpich);
        assert_eq!(MpiFlavor::from_library_version(""), MpiFlavor::Unknown);
    }

    #[test]
    fn named_launchers() {
        // Not found, so the binaries' MPI decides.
        assert_eq!(l("/nonexistent/mpirun", MpiFlavor::OpenMpi).kind, LauncherKind::OpenMpi);
        assert_eq!(l("/nonexistent/mpirun", MpiFlavor::Mpich).kind, LauncherKind::Hydra);
        assert_eq!(l("/usr/bin/mpiexec.mpich", MpiFlavor::OpenMpi).kind, LauncherKind::Hydra);
        assert_eq!(l("srun", MpiFlavor::Mpich).kind, LauncherKind::Srun);
        let e = Launcher::named("aprun", MpiFlavor::OpenMpi).unwrap_err();
        assert!(e.starts_with("unknown launcher 'aprun' (one of: mpirun, mpiexec"), "{e}");
        assert!(!l("mpiexec.mpich", MpiFlavor::OpenMpi).matches(MpiFlavor::OpenMpi));
        assert!(l("srun", MpiFlavor::OpenMpi).matches(MpiFlavor::Mpich));
    }

    /// A plain `mpirun` is what its links lead to.
    #[test]
    fn plain_names_follow_their_links() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("mpiexec.hydra");
        std::fs::write(&real, "").unwrap();
        let alt = d.path().join("alternative");
        std::os::unix::fs::symlink(&real, &alt).unwrap();
        let mpirun = d.path().join("mpirun");
        std::os::unix::fs::symlink(&alt, &mpirun).unwrap();
        assert_eq!(kind_of_file(&mpirun), Some(LauncherKind::Hydra));
        let plain = d.path().join("mpiexec");
        std::fs::write(&plain, "").unwrap();
        assert_eq!(kind_of_file(&plain), None);
        assert_eq!(kind_of_file(&d.path().join("missing")), None);
        let named = Launcher::named(&mpirun.display().to_string(), MpiFlavor::OpenMpi).unwrap();
        assert_eq!(named.kind, LauncherKind::Hydra);
    }

    #[test]
    fn detection() {
        let all = |_: &str| true;
        let none = |_: &str| false;
        assert_eq!(Launcher::detect(MpiFlavor::OpenMpi, true, &all).kind, LauncherKind::Srun);
        assert_eq!(Launcher::detect(MpiFlavor::OpenMpi, true, &none).program, "mpirun");
        assert_eq!(Launcher::detect(MpiFlavor::OpenMpi, false, &all).program, "mpirun");
        assert_eq!(Launcher::detect(MpiFlavor::Mpich, false, &all).program, "mpiexec.mpich");
        assert_eq!(Launcher::detect(MpiFlavor::Mpich, false, &none).program, "mpiexec");
    }

    #[test]
    fn open_mpi_command() {
        let lay = Layout { np: 2, ppn: Some(1), nodes: Some(2) };
        let hosts = s(&["n1", "n2"]);
        let extra = s(&["--mca", "pml", "ucx"]);
        let ctx = LaunchContext {
            flavor: Some(MpiFlavor::OpenMpi),
            hostfile: Some((Path::new("hosts"), &hosts)),
            launcher_args: &extra,
            unbind: false,
        };
        let c = command(&l("mpirun", MpiFlavor::OpenMpi), &lay, &ctx, Path::new("/b/osu_latency"), &s(&["-i", "10"]));
        assert_eq!(
            c,
            s(&[
                "mpirun",
                "-np",
                "2",
                "--hostfile",
                "hosts",
                "--map-by",
                "ppr:1:node",
                "--mca",
                "pml",
                "ucx",
                "/b/osu_latency",
                "-i",
                "10"
            ])
        );
    }

    #[test]
    fn hydra_command() {
        let lay = Layout { np: 8, ppn: Some(4), nodes: None };
        let hosts = s(&["n1"]);
        let ctx =
            LaunchContext { flavor: None, hostfile: Some((Path::new("h"), &hosts)), launcher_args: &[], unbind: false };
        let c = command(&l("mpiexec.mpich", MpiFlavor::Mpich), &lay, &ctx, Path::new("b"), &[]);
        assert_eq!(c, s(&["mpiexec.mpich", "-n", "8", "-f", "h", "-ppn", "4", "b"]));
    }

    #[test]
    fn srun_command() {
        let lay = Layout { np: 2, ppn: Some(1), nodes: Some(2) };
        let hosts = s(&["n1", "n2", "n3"]);
        let ctx = LaunchContext {
            flavor: Some(MpiFlavor::Mpich),
            hostfile: Some((Path::new("h"), &hosts)),
            launcher_args: &[],
            unbind: false,
        };
        let c = command(&l("srun", MpiFlavor::Mpich), &lay, &ctx, Path::new("b"), &[]);
        assert_eq!(c, s(&["srun", "--mpi=pmi2", "-n", "2", "-N", "2", "--ntasks-per-node", "1", "-w", "n1,n2", "b"]));
        // A --mpi of the user's wins; no layout beyond -n when none is asked.
        let mine = s(&["--mpi=pmix_v4"]);
        let ctx =
            LaunchContext { flavor: Some(MpiFlavor::OpenMpi), hostfile: None, launcher_args: &mine, unbind: false };
        let c = command(
            &l("srun", MpiFlavor::OpenMpi),
            &Layout { np: 4, ppn: None, nodes: None },
            &ctx,
            Path::new("b"),
            &[],
        );
        assert_eq!(c, s(&["srun", "-n", "4", "--mpi=pmix_v4", "b"]));
    }

    /// Placement by commbench switches each launcher's binding off, before
    /// the user's launcher arguments; a binding of the user's wins.
    #[test]
    fn binding_hand_over() {
        let lay = Layout { np: 2, ppn: None, nodes: Some(1) };
        let cmd = |program: &str, flavor, extra: &[String]| {
            let ctx = LaunchContext { flavor: Some(flavor), hostfile: None, launcher_args: extra, unbind: true };
            command(&l(program, flavor), &lay, &ctx, Path::new("b"), &[])
        };
        let x = s(&["-v"]);
        assert_eq!(cmd("mpirun", MpiFlavor::OpenMpi, &x), s(&["mpirun", "-np", "2", "--bind-to", "none", "-v", "b"]));
        assert_eq!(
            cmd("mpiexec.mpich", MpiFlavor::Mpich, &[]),
            s(&["mpiexec.mpich", "-n", "2", "-bind-to", "none", "b"])
        );
        assert_eq!(
            cmd("srun", MpiFlavor::Mpich, &[]),
            s(&["srun", "--mpi=pmi2", "-n", "2", "-N", "1", "--cpu-bind=none", "b"])
        );
        let mine = s(&["--cpu-bind=cores"]);
        assert_eq!(
            cmd("srun", MpiFlavor::OpenMpi, &mine),
            s(&["srun", "--mpi=pmix", "-n", "2", "-N", "1", "--cpu-bind=cores", "b"])
        );
        let mine = s(&["--bind-to", "socket"]);
        assert_eq!(cmd("mpirun", MpiFlavor::OpenMpi, &mine), s(&["mpirun", "-np", "2", "--bind-to", "socket", "b"]));
        assert!(!binds(&s(&["--bind-tox"])));
    }

    #[test]
    fn root_env_for_open_mpi_only() {
        let unset = |_: &str| None;
        let om = l("mpirun", MpiFlavor::OpenMpi);
        assert_eq!(extra_env(&om, true, &unset).len(), 2);
        assert!(extra_env(&om, false, &unset).is_empty());
        assert!(extra_env(&om, true, &|_| Some("1".into())).is_empty());
        assert!(extra_env(&l("srun", MpiFlavor::OpenMpi), true, &unset).is_empty());
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_line(&s(&["srun", "-n", "2", "a b", "it's", ""])), r"srun -n 2 'a b' 'it'\''s' ''");
    }
}
