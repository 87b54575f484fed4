//! What the user asks for about placement: a binding policy and explicit
//! cpu, NIC and GPU lists, with their command-line grammar. Shared by every
//! benchmark binary (`--bind`, `--cpu-list`, `--nic`, `--gpu`) and by
//! `commbench topo`.

use serde::{Deserialize, Serialize};

use super::cpuset;

/// How ranks are placed on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindPolicy {
    /// Leave each rank where the launcher started it.
    None,
    /// One core per local rank, in order, inside the allowed set.
    Core,
    /// Cores nearest the chosen NIC, in order of nearness.
    Nic,
    /// GPU = local rank mod GPU count, its nearest NIC, a core near both.
    Gpu,
}

pub const POLICY_NAMES: &str = "none, core, nic or gpu";

impl BindPolicy {
    pub fn name(self) -> &'static str {
        match self {
            BindPolicy::None => "none",
            BindPolicy::Core => "core",
            BindPolicy::Nic => "nic",
            BindPolicy::Gpu => "gpu",
        }
    }

    pub fn parse(text: &str) -> Option<BindPolicy> {
        match text.trim().to_ascii_lowercase().as_str() {
            "none" => Some(BindPolicy::None),
            "core" => Some(BindPolicy::Core),
            "nic" => Some(BindPolicy::Nic),
            "gpu" => Some(BindPolicy::Gpu),
            _ => None,
        }
    }
}

/// A network device as named on the command line: `mlx5_2:1` or `eth0`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicSpec {
    pub device: String,
    pub port: Option<u32>,
}

impl NicSpec {
    pub fn parse(text: &str) -> Result<NicSpec, String> {
        let t = text.trim();
        let (device, port) = match t.rsplit_once(':') {
            Some((d, p)) => {
                let port = p
                    .parse::<u32>()
                    .ok()
                    .filter(|&p| p >= 1)
                    .ok_or_else(|| format!("'{t}': port must be a number from 1"))?;
                (d, Some(port))
            }
            None => (t, None),
        };
        if device.is_empty() || !device.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
            return Err(format!("'{t}' is not a device name such as mlx5_0:1 or eth0"));
        }
        Ok(NicSpec { device: device.to_string(), port })
    }
}

impl std::fmt::Display for NicSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}:{p}", self.device),
            None => write!(f, "{}", self.device),
        }
    }
}

/// The placement part of a command line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementRequest {
    /// `--bind`; when absent the policy follows from the lists given.
    pub policy: Option<BindPolicy>,
    /// `--cpu-list`: local rank i is bound to the i-th cpu.
    pub cpu_list: Option<Vec<usize>>,
    /// `--nic`: local rank i uses entry i mod length.
    pub nic: Option<Vec<NicSpec>>,
    /// `--gpu`: local rank i uses GPU entry i mod length (CUDA index).
    pub gpu: Option<Vec<usize>>,
}

impl PlacementRequest {
    /// The policy in force: `--bind` if given, else `gpu` when GPUs are
    /// listed, `nic` when NICs are listed, otherwise `none` (ranks stay
    /// where the launcher put them, as with OSU's own binaries).
    pub fn policy(&self) -> BindPolicy {
        match self.policy {
            Some(p) => p,
            None if self.gpu.is_some() => BindPolicy::Gpu,
            None if self.nic.is_some() => BindPolicy::Nic,
            None => BindPolicy::None,
        }
    }

    /// Whether the user asked for anything at all.
    pub fn is_given(&self) -> bool {
        *self != PlacementRequest::default()
    }

    /// Applies one `--bind/--cpu-list/--nic/--gpu` option; the error is
    /// the reason, for the caller to wrap in its own message style.
    pub fn set(&mut self, option: &str, value: &str) -> Result<(), String> {
        match option {
            "bind" => {
                self.policy = Some(BindPolicy::parse(value).ok_or_else(|| format!("use {POLICY_NAMES}"))?);
            }
            "cpu-list" => self.cpu_list = Some(cpuset::parse_list(value)?),
            "nic" => self.nic = Some(split_list(value, NicSpec::parse)?),
            "gpu" => {
                self.gpu = Some(split_list(value, |t| {
                    t.trim().parse::<usize>().map_err(|_| format!("'{t}' is not a GPU index (0, 1, ...)"))
                })?)
            }
            other => return Err(format!("not a placement option: --{other}")),
        }
        Ok(())
    }

    /// Contradictions visible without looking at the machine.
    pub fn check(&self) -> Result<(), String> {
        if self.cpu_list.is_some() && matches!(self.policy, Some(BindPolicy::Core)) {
            return Err("--cpu-list already says where each rank runs; drop --bind core".into());
        }
        Ok(())
    }
}

/// The placement options as clap arguments, for the `commbench` commands
/// (`pairs`, `topo`); the OSU binaries parse the same names themselves.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PlacementArgs {
    /// Place each rank: none (as launched), core, nic (cores near the NIC) or gpu
    #[arg(long, value_name = "POLICY")]
    pub bind: Option<String>,
    /// Bind local rank i to the i-th cpu of CPUS, e.g. 80 or 0,8,16
    #[arg(long, value_name = "CPUS")]
    pub cpu_list: Option<String>,
    /// Network device per local rank, e.g. mlx5_2:1 (sets UCX_NET_DEVICES)
    #[arg(long, value_name = "DEVS")]
    pub nic: Option<String>,
    /// GPU (CUDA index) per local rank, e.g. 0,1,2,3
    #[arg(long, value_name = "IDS")]
    pub gpu: Option<String>,
}

impl PlacementArgs {
    /// The request, checked as far as it can be without a machine; the
    /// error is one line naming the option.
    pub fn request(&self) -> Result<PlacementRequest, String> {
        let mut req = PlacementRequest::default();
        for (name, value) in
            [("bind", &self.bind), ("cpu-list", &self.cpu_list), ("nic", &self.nic), ("gpu", &self.gpu)]
        {
            if let Some(v) = value {
                req.set(name, v).map_err(|why| format!("--{name} {v}: {why}"))?;
            }
        }
        req.check()?;
        Ok(req)
    }
}

fn split_list<T>(text: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    if text.trim().is_empty() {
        return Err("empty list".into());
    }
    text.split(',').map(item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(args: &[(&str, &str)]) -> Result<PlacementRequest, String> {
        let mut r = PlacementRequest::default();
        for (o, v) in args {
            r.set(o, v)?;
        }
        r.check()?;
        Ok(r)
    }

    #[test]
    fn policy_follows_lists() {
        assert_eq!(req(&[]).unwrap().policy(), BindPolicy::None);
        assert!(!req(&[]).unwrap().is_given());
        assert_eq!(req(&[("nic", "mlx5_2:1")]).unwrap().policy(), BindPolicy::Nic);
        assert_eq!(req(&[("gpu", "3"), ("nic", "mlx5_0")]).unwrap().policy(), BindPolicy::Gpu);
        assert_eq!(req(&[("bind", "CORE")]).unwrap().policy(), BindPolicy::Core);
        assert_eq!(req(&[("cpu-list", "80")]).unwrap().policy(), BindPolicy::None);
    }

    #[test]
    fn grammar() {
        let r = req(&[("nic", "mlx5_2:1,eth0"), ("gpu", "0,1"), ("cpu-list", "80,81")]).unwrap();
        assert_eq!(r.nic.as_ref().unwrap()[0], NicSpec { device: "mlx5_2".into(), port: Some(1) });
        assert_eq!(r.nic.as_ref().unwrap()[1].to_string(), "eth0");
        assert_eq!(r.gpu, Some(vec![0, 1]));
        assert_eq!(r.cpu_list, Some(vec![80, 81]));
        assert_eq!(req(&[("bind", "socket")]).unwrap_err(), "use none, core, nic or gpu");
        assert_eq!(req(&[("nic", "mlx5_0:x")]).unwrap_err(), "'mlx5_0:x': port must be a number from 1");
        assert_eq!(req(&[("nic", "a b")]).unwrap_err(), "'a b' is not a device name such as mlx5_0:1 or eth0");
        assert_eq!(req(&[("gpu", "one")]).unwrap_err(), "'one' is not a GPU index (0, 1, ...)");
        assert_eq!(req(&[("gpu", "")]).unwrap_err(), "empty list");
        assert!(req(&[("cpu-list", "0"), ("bind", "core")]).is_err());
    }
}
