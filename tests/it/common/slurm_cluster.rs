//! A real one-node Slurm for tests: munged (with its own socket),
//! slurmctld and slurmd started by hand in a scratch directory on free
//! ports, with the node's CPU layout taken from `slurmd -C`.
//! Dropping the cluster cancels its jobs and stops exactly the daemons it started, by
//! PID, whether the test passed or not.
#![allow(dead_code)]

use std::ffi::CString;
use std::fs::{self, File};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const DAEMONS: &[(&str, &str)] =
    &[("munged", "/usr/sbin/munged"), ("slurmctld", "/usr/sbin/slurmctld"), ("slurmd", "/usr/sbin/slurmd")];

/// Why a Slurm cannot be started here (the test is then skipped), or None.
pub fn unavailable() -> Option<String> {
    for (name, path) in DAEMONS {
        if !Path::new(path).exists() {
            return Some(format!(
                "{name} is not installed ({path} missing; scripts/setup.sh installs slurm-wlm munge)"
            ));
        }
    }
    for prog in ["sbatch", "sinfo", "srun", "scancel"] {
        if Command::new(prog).arg("--version").output().is_err() {
            return Some(format!("{prog} is not installed (scripts/setup.sh installs slurm-wlm)"));
        }
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("starting slurmd and munged needs root".into());
    }
    if user_ids("munge").is_none() {
        return Some("no 'munge' user (the munge package creates it)".into());
    }
    if !Path::new("/etc/munge/munge.key").exists() {
        return Some("no /etc/munge/munge.key (the munge package creates it)".into());
    }
    None
}

fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = CString::new(name).ok()?;
    // SAFETY: getpwnam takes a valid C string and returns a pointer to static
    // storage or null; we copy the two ids out at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: non-null result of getpwnam.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

fn free_ports() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    let b = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    (a.local_addr().expect("addr").port(), b.local_addr().expect("addr").port())
}

/// The node line for slurm.conf: this machine's real layout (slurmd
/// refuses a node described bigger than it is).
fn node_line() -> String {
    let out = Command::new("/usr/sbin/slurmd").arg("-C").output();
    let first = out.ok().map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_string());
    let fields: Vec<String> = first
        .unwrap_or_default()
        .split_whitespace()
        .filter(|w| !w.starts_with("NodeName=") && !w.starts_with("UpTime=") && !w.starts_with("RealMemory="))
        .map(String::from)
        .collect();
    let layout = if fields.iter().any(|f| f.starts_with("CPUs=")) { fields.join(" ") } else { "CPUs=2".into() };
    format!("NodeName=localhost NodeAddr=127.0.0.1 {layout} State=UNKNOWN")
}

/// A running one-node cluster.
pub struct SlurmCluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl SlurmCluster {
    /// Starts the daemons and waits until the node is idle; panics (with
    /// the daemons' logs) when Slurm does not come up.
    pub fn start() -> SlurmCluster {
        let dir = tempfile::Builder::new().prefix("commbench-slurm").tempdir().expect("scratch dir");
        let s = dir.path().to_path_buf();
        // munged (running as munge) must reach its socket directory.
        fs::set_permissions(&s, fs::Permissions::from_mode(0o755)).expect("chmod scratch");
        let munge_dir = s.join("munge");
        for d in [&munge_dir, &s.join("state"), &s.join("spool")] {
            fs::create_dir_all(d).expect("mkdir");
        }
        let (uid, gid) = user_ids("munge").expect("munge user");
        let c = CString::new(munge_dir.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: valid C string; changes the owner of our own directory.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, gid) }, 0, "chown munge dir");
        fs::set_permissions(&munge_dir, fs::Permissions::from_mode(0o755)).expect("chmod munge dir");
        let socket = munge_dir.join("munge.socket");
        let (ctld_port, d_port) = free_ports();
        let conf = s.join("slurm.conf");
        let p = |name: &str| s.join(name).display().to_string();
        let text = format!(
            "ClusterName=commbench\nSlurmctldHost=localhost\nSlurmctldPort={ctld_port}\nSlurmdPort={d_port}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nAuthInfo=socket={socket}\n\
             StateSaveLocation={state}\nSlurmdSpoolDir={spool}\nSlurmctldPidFile={cpid}\nSlurmdPidFile={dpid}\n\
             SlurmctldLogFile={clog}\nSlurmdLogFile={dlog}\nProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/affinity\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             MpiDefault=pmix\nSwitchType=switch/none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\nReturnToService=2\n\
             SchedulerType=sched/backfill\n{node}\n\
             PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            cpid = p("slurmctld.pid"),
            dpid = p("slurmd.pid"),
            clog = p("slurmctld.log"),
            dlog = p("slurmd.log"),
            node = node_line(),
        );
        fs::write(&conf, text).expect("write slurm.conf");
        let mut cluster = SlurmCluster { dir, conf, daemons: Vec::new() };

        let out = |name: &str| File::create(s.join(format!("{name}.out"))).expect("daemon output file");
        let mut munged = Command::new("/usr/sbin/munged");
        munged
            .arg("-F")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", munge_dir.join("munged.pid").display()))
            .arg(format!("--log-file={}", munge_dir.join("munged.log").display()))
            .arg(format!("--seed-file={}", munge_dir.join("munged.seed").display()))
            .uid(uid)
            .gid(gid);
        cluster.spawn("munged", munged, out("munged"));
        cluster.wait_for("munged socket", Duration::from_secs(10), || socket.exists());
        let mut ctld = cluster.command("/usr/sbin/slurmctld");
        ctld.arg("-D");
        cluster.spawn("slurmctld", ctld, out("slurmctld"));
        let mut slurmd = cluster.command("/usr/sbin/slurmd");
        slurmd.args(["-D", "-N", "localhost"]);
        cluster.spawn("slurmd", slurmd, out("slurmd"));
        let sinfo_conf = cluster.conf.clone();
        cluster.wait_for("the node to be idle", Duration::from_secs(30), || {
            let o = Command::new("sinfo").args(["-h", "-o", "%T"]).env("SLURM_CONF", &sinfo_conf).output();
            o.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        cluster
    }

    fn spawn(&mut self, name: &'static str, mut cmd: Command, out: File) {
        let err = out.try_clone().expect("dup output file");
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        match cmd.spawn() {
            Ok(child) => self.daemons.push((name, child)),
            Err(e) => panic!("cannot start {name}: {e}"),
        }
    }

    fn wait_for(&mut self, what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
        let start = Instant::now();
        while !ready() {
            let exited = self.daemons.iter_mut().find_map(|(n, c)| c.try_wait().ok().flatten().map(|st| (*n, st)));
            if let Some((name, st)) = exited {
                panic!("{name} exited ({st}) while waiting for {what}\n{}", self.logs());
            }
            if start.elapsed() > limit {
                panic!("Slurm: no {what} after {limit:?}\n{}", self.logs());
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The daemons' logs, for a failure message.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        for name in ["munged.out", "munge/munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"] {
            let text = fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s.push_str(&format!("--- {name}\n"));
            for l in tail.iter().rev() {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }

    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// Waits for job `id` to end, asking slurmctld every 100 ms; its exit
    /// status (None: killed by a signal, cancelled, or out of time).
    pub fn wait_for_job(&self, id: &str, limit: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            let out = self.command("scontrol").args(["show", "job", "-o", id]).output().expect("run scontrol");
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let field = |name: &str| {
                text.split_whitespace().find_map(|w| w.strip_prefix(name).map(str::to_string)).unwrap_or_default()
            };
            let state = field("JobState=");
            if !matches!(state.as_str(), "PENDING" | "CONFIGURING" | "RUNNING" | "COMPLETING" | "") {
                // ExitCode=status:signal
                let code = field("ExitCode=");
                let (status, signal) = code.split_once(':').unwrap_or(("", ""));
                return match (state.as_str(), signal) {
                    ("COMPLETED" | "FAILED", "0") => status.parse().ok(),
                    _ => None,
                };
            }
            assert!(start.elapsed() < limit, "job {id} still {state} after {limit:?}\n{}", self.logs());
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// A Slurm client command (sbatch, srun ...) talking to this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("Slurm logs:\n{}", self.logs());
        }
        // Jobs first, so no step outlives its slurmd.
        if let Ok(mut c) = self.command("scancel").args(["--full", "--partition", "debug"]).spawn() {
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(5) && matches!(c.try_wait(), Ok(None)) {
                thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        // Then the daemons, newest first, each by its own PID.
        for (_, child) in self.daemons.iter_mut().rev() {
            // SAFETY: signals a child we started, by its pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) && matches!(child.try_wait(), Ok(None)) {
                thread::sleep(Duration::from_millis(50));
            }
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}
