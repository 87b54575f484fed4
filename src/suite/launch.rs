//! The launcher side of the suite: which MPI library the binaries use,
//! which launcher to start them with (asked for, or detected: srun inside a
//! Slurm allocation, otherwise the library's own mpirun / mpiexec), and the
//! exact command line for one benchmark with a given rank layout.

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
    pub fn from_library_version(v: &str) -> MpiFlavor {
        if v.contains("Open MPI") {
            MpiFlavor::OpenMpi
        } else if v.contains("MPICH") {
            MpiFlavor::Mpich
        } else {
            MpiFlavor::Unknown
        }
    }

    /// The library this executable is linked with (the benchmark binaries
    /// beside it come from the same build). MPI allows asking before
    /// MPI_Init.
    pub fn of_this_build() -> (MpiFlavor, String) {
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
pub const KNOWN: &[&str] = &[
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
    /// The launcher named by `--launcher`; plain mpirun/mpiexec belong to
    /// whichever MPI the binaries were built with.
    pub fn named(program: &str, flavor: MpiFlavor) -> Result<Launcher, String> {
        let base = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
        let kind = match base {
            "srun" => LauncherKind::Srun,
            "mpiexec.mpich" | "mpiexec.hydra" | "mpirun.mpich" => LauncherKind::Hydra,
            "mpirun.openmpi" | "mpiexec.openmpi" => LauncherKind::OpenMpi,
            "mpirun" | "mpiexec" => match flavor {
                MpiFlavor::Mpich => LauncherKind::Hydra,
                MpiFlavor::OpenMpi | MpiFlavor::Unknown => LauncherKind::OpenMpi,
            },
            _ => return Err(format!("unknown launcher '{program}' (one of: {})", KNOWN.join(", "))),
        };
        Ok(Launcher { program: program.to_string(), kind })
    }

    /// The launcher to use when none was named: srun inside a Slurm
    /// allocation (where it exists), else the library's own launcher.
    pub fn detect(flavor: MpiFlavor, in_allocation: bool, on_path: &dyn Fn(&str) -> bool) -> Launcher {
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
    c.extend(ctx.launcher_args.iter().cloned());
    c.push(binary.display().to_string());
    c.extend(args.iter().cloned());
    c
}

/// Environment the launcher needs from us: Open MPI's mpirun refuses to
/// run as root unless told twice that it is meant.
pub fn extra_env(l: &Launcher, is_root: bool, get: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    if l.kind != LauncherKind::OpenMpi || !is_root {
        return Vec::new();
    }
    ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"]
        .iter()
        .filter(|k| get(k).is_none())
        .map(|k| (k.to_string(), "1".to_string()))
        .collect()
}

/// Whether `program` can be run: a path that exists, or a name on PATH.
pub fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// A command line as one shell-pasteable string.
pub fn shell_line(argv: &[String]) -> String {
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
        assert_eq!(l("mpirun", MpiFlavor::OpenMpi).kind, LauncherKind::OpenMpi);
        assert_eq!(l("mpirun", MpiFlavor::Mpich).kind, LauncherKind::Hydra);
        assert_eq!(l("/usr/bin/mpiexec.mpich", MpiFlavor::OpenMpi).kind, LauncherKind::Hydra);
        assert_eq!(l("srun", MpiFlavor::Mpich).kind, LauncherKind::Srun);
        let e = Launcher::named("aprun", MpiFlavor::OpenMpi).unwrap_err();
        assert!(e.starts_with("unknown launcher 'aprun' (one of: mpirun, mpiexec"), "{e}");
        assert!(!l("mpiexec.mpich", MpiFlavor::OpenMpi).matches(MpiFlavor::OpenMpi));
        assert!(l("srun", MpiFlavor::OpenMpi).matches(MpiFlavor::Mpich));
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
        let ctx = LaunchContext { flavor: None, hostfile: Some((Path::new("h"), &hosts)), launcher_args: &[] };
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
        };
        let c = command(&l("srun", MpiFlavor::Mpich), &lay, &ctx, Path::new("b"), &[]);
        assert_eq!(c, s(&["srun", "--mpi=pmi2", "-n", "2", "-N", "2", "--ntasks-per-node", "1", "-w", "n1,n2", "b"]));
        // A --mpi of the user's wins; no layout beyond -n when none is asked.
        let mine = s(&["--mpi=pmix_v4"]);
        let ctx = LaunchContext { flavor: Some(MpiFlavor::OpenMpi), hostfile: None, launcher_args: &mine };
        let c = command(
            &l("srun", MpiFlavor::OpenMpi),
            &Layout { np: 4, ppn: None, nodes: None },
            &ctx,
            Path::new("b"),
            &[],
        );
        assert_eq!(c, s(&["srun", "-n", "4", "--mpi=pmix_v4", "b"]));
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
