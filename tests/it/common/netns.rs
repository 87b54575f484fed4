//! Several "hosts" on this machine, from network namespaces (see
//! shared/reference/multi-host-netns.md): each has its own address, network
//! device and host name, all joined by a bridge; Open MPI's mpirun reaches
//! them through a remote-shell agent that enters the namespace. A host can
//! be slowed, cut off or killed. Needs root and iproute2 (callers skip
//! otherwise); everything is removed again on drop, processes included.

use std::path::PathBuf;

pub struct Hosts {
    pub tag: String,
    pub subnet: String,
    pub addrs: Vec<String>,
    dir: tempfile::TempDir,
}

impl Hosts {
    fn sh(cmd: &str) -> bool {
        std::process::Command::new("sh").args(["-c", cmd]).status().is_ok_and(|s| s.success())
    }

    /// Root, `ip`, `tc` and `unshare` are there.
    pub fn available() -> bool {
        // SAFETY: plain libc query.
        (unsafe { libc::geteuid() } == 0)
            && Self::sh("(command -v ip && command -v tc && command -v unshare) >/dev/null")
    }

    /// `count` hosts, on a subnet and with names of this test process's
    /// own (`salt` tells apart two sets made by one process).
    pub fn up_salted(count: usize, salt: u32) -> Option<Hosts> {
        let pid = (std::process::id() + salt * 7919) % 10000;
        let tag = format!("cbp{pid}");
        let net = format!("10.239.{}", 20 + pid % 200);
        let dir = tempfile::tempdir().unwrap();
        let mut h = Hosts { tag: tag.clone(), subnet: format!("{net}.0/24"), addrs: Vec::new(), dir };
        let mut cmds = vec![
            format!("ip link add {tag} type bridge"),
            format!("ip addr add {net}.1/24 dev {tag}"),
            format!("ip link set {tag} up"),
        ];
        let mut cases = String::new();
        for i in 1..=count {
            let (ns, addr) = (h.ns(i), format!("{net}.1{i}"));
            cmds.extend([
                format!("ip netns add {ns}"),
                format!("ip link add {tag}v{i} type veth peer name eth{i} netns {ns}"),
                format!("ip link set {tag}v{i} master {tag} up"),
                format!("ip -n {ns} addr add {addr}/24 dev eth{i}"),
                format!("ip -n {ns} link set eth{i} up"),
                format!("ip -n {ns} link set lo up"),
            ]);
            cases.push_str(&format!("  {addr}) ns={ns};;\n"));
            h.addrs.push(addr);
        }
        // The launcher's remote shell: run the command in the address's
        // namespace under a host name of its own.
        let agent = format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n\
             host=\"$1\"; shift\ncase \"$host\" in\n{cases}  *) exit 1;;\nesac\n\
             exec ip netns exec $ns unshare --uts /bin/sh -c \"hostname $ns; $*\"\n"
        );
        let path = h.agent();
        std::fs::write(&path, agent).unwrap();
        let ok = Self::sh(&format!("chmod +x {}", path.display())) && cmds.iter().all(|c| Self::sh(c));
        ok.then_some(h)
    }

    pub fn up(count: usize) -> Option<Hosts> {
        Self::up_salted(count, 0)
    }

    /// Host `i`'s (1-based) namespace, which is also its host name.
    pub fn ns(&self, i: usize) -> String {
        format!("{}h{i}", self.tag)
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join("agent.sh")
    }

    /// Limits host `i` (1-based) to `rate` both ways.
    pub fn limit(&self, i: usize, rate: &str) -> bool {
        let tbf = format!("root tbf rate {rate} burst 64kb latency 200ms");
        Self::sh(&format!("ip netns exec {} tc qdisc add dev eth{i} {tbf}", self.ns(i)))
            && Self::sh(&format!("tc qdisc add dev {}v{i} {tbf}", self.tag))
    }

    /// Cuts host `i` off: its network device goes down.
    pub fn link_down(&self, i: usize) -> bool {
        Self::sh(&format!("ip -n {} link set eth{i} down", self.ns(i)))
    }

    /// Brings host `i`'s network device back up.
    pub fn link_up(&self, i: usize) -> bool {
        Self::sh(&format!("ip -n {} link set eth{i} up", self.ns(i)))
    }

    /// The processes running on host `i` (the launcher's daemon, ranks).
    pub fn pids(&self, i: usize) -> Vec<i32> {
        ns_pids(&self.ns(i))
    }

    /// Freezes host `i` until the result is dropped: every process on it,
    /// and every one started there meanwhile, gets SIGSTOP within 20 ms
    /// (a node that stopped scheduling). Drop kills what was frozen.
    pub fn freeze(&self, i: usize) -> Freezer {
        let ns = self.ns(i);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut frozen = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                for p in ns_pids(&ns) {
                    // SAFETY: signals a process in this test's own namespace.
                    unsafe { libc::kill(p, libc::SIGSTOP) };
                    if !frozen.contains(&p) {
                        frozen.push(p);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            frozen
        });
        Freezer { stop, thread: Some(thread) }
    }

    /// Kills every process of host `i` outright (a node lost); returns how
    /// many there were. All of them go at once, as on a lost node: each is
    /// stopped first, until a listing finds none not yet stopped, and only
    /// then killed. Killed one by one, a busy machine could run the host's
    /// survivors between two kills, and its MPI daemon would end its rank
    /// with SIGTERM, which a lost node never does.
    pub fn kill(&self, i: usize) -> usize {
        let mut stopped: Vec<i32> = Vec::new();
        loop {
            let fresh: Vec<i32> = self.pids(i).into_iter().filter(|p| !stopped.contains(p)).collect();
            if fresh.is_empty() {
                break;
            }
            for &p in &fresh {
                // SAFETY: signals a process in this test's own namespace.
                unsafe { libc::kill(p, libc::SIGSTOP) };
            }
            stopped.extend(fresh);
        }
        for &p in &stopped {
            // SAFETY: as above; a stopped process dies of SIGKILL at once.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        stopped.len()
    }

    /// mpirun's arguments for `per_host` ranks on each host, over TCP on
    /// this set's subnet only.
    pub fn launcher_args(&self, per_host: usize) -> Vec<String> {
        let hosts: Vec<String> = self.addrs.iter().map(|a| format!("{a}:{per_host}")).collect();
        let mut v = vec!["--host".to_string(), hosts.join(",")];
        v.extend(self.base_args());
        v
    }

    /// A hostfile naming every host with `slots` slots, in `dir`.
    pub fn hostfile(&self, dir: &std::path::Path, slots: usize) -> PathBuf {
        let path = dir.join("hosts");
        let text: String = self.addrs.iter().map(|a| format!("{a} slots={slots}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// mpirun's arguments that reach these hosts over their subnet, with
    /// no hosts named (for a tool that names them itself).
    pub fn base_args(&self) -> Vec<String> {
        [
            "--mca",
            "plm_rsh_agent",
            &self.agent().display().to_string(),
            "--bind-to",
            "none",
            "--mca",
            "btl",
            "tcp,self,vader",
            "--mca",
            "oob_tcp_if_include",
            &self.subnet,
            "--mca",
            "btl_tcp_if_include",
            &self.subnet,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
}

fn ns_pids(ns: &str) -> Vec<i32> {
    let out = std::process::Command::new("ip").args(["netns", "pids", ns]).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().filter_map(|p| p.parse().ok()).collect())
        .unwrap_or_default()
}

/// A host kept frozen (see [`Hosts::freeze`]).
pub struct Freezer {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<Vec<i32>>>,
}

impl Drop for Freezer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for p in self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default() {
            // SAFETY: ends a process this test froze.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        // Deleting a namespace does not end its processes: a launcher
        // daemon on a host cut off would be left running.
        for i in 1..=self.addrs.len() {
            self.kill(i);
            Self::sh(&format!("ip netns del {} 2>/dev/null", self.ns(i)));
        }
        Self::sh(&format!("ip link del {} 2>/dev/null", self.tag));
    }
}
