//! What the user asks for about placement: a binding policy and explicit
//! cpu, NIC and GPU lists, with their command-line grammar. Shared by every
//! benchmark binary (`--bind`, `--cpu-list`, `--nic`, `--gpu`) and by
//! `commbench topo`.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::cpuset::{self, CpuListError};
use super::machine::Machine;

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

pub(crate) const POLICY_NAMES: &str = "none, core, nic or gpu";

/// Why the value of one placement option is wrong; each caller wraps it
/// in its own message style.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlacementValueError {
    #[error("use {}", POLICY_NAMES)]
    Policy,
    #[error(transparent)]
    CpuList(#[from] CpuListError),
    #[error("'{0}': port must be a number from 1")]
    NicPort(String),
    #[error("'{0}' is not a device name such as mlx5_0:1 or eth0")]
    NicName(String),
    #[error("'{0}' is not a GPU index (0, 1, ...)")]
    GpuIndex(String),
    #[error("empty list")]
    EmptyList,
    #[error("not a placement option: --{0}")]
    NotAnOption(String),
}

/// A placement request that cannot be used, in one line naming the option.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlacementError {
    #[error("--{option} {value}: {reason}")]
    Value { option: &'static str, value: String, reason: PlacementValueError },
    #[error("--cpu-list already says where each rank runs; drop --bind core")]
    CpuListWithBindCore,
}

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
    pub fn parse(text: &str) -> Result<NicSpec, PlacementValueError> {
        let t = text.trim();
        let (device, port) = match t.rsplit_once(':') {
            Some((d, p)) => {
                let port = p
                    .parse::<u32>()
                    .ok()
                    .filter(|&p| p >= 1)
                    .ok_or_else(|| PlacementValueError::NicPort(t.to_string()))?;
                (d, Some(port))
            }
            None => (t, None),
        };
        if device.is_empty() || !device.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
            return Err(PlacementValueError::NicName(t.to_string()));
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
    pub(crate) fn is_given(&self) -> bool {
        *self != PlacementRequest::default()
    }

    /// Applies one `--bind/--cpu-list/--nic/--gpu` option; the error is
    /// the reason, for the caller to wrap in its own message style.
    pub fn set(&mut self, option: &str, value: &str) -> Result<(), PlacementValueError> {
        match option {
            "bind" => self.policy = Some(BindPolicy::parse(value).ok_or(PlacementValueError::Policy)?),
            "cpu-list" => self.cpu_list = Some(cpuset::parse_list(value)?),
            "nic" => self.nic = Some(split_list(value, NicSpec::parse)?),
            "gpu" => {
                self.gpu = Some(split_list(value, |t| {
                    t.trim().parse::<usize>().map_err(|_| PlacementValueError::GpuIndex(t.to_string()))
                })?)
            }
            other => return Err(PlacementValueError::NotAnOption(other.to_string())),
        }
        Ok(())
    }

    /// Contradictions visible without looking at the machine.
    pub fn check(&self) -> Result<(), PlacementError> {
        if self.cpu_list.is_some() && matches!(self.policy, Some(BindPolicy::Core)) {
            return Err(PlacementError::CpuListWithBindCore);
        }
        Ok(())
    }
}

/// The placement options as clap arguments, for the `commbench` commands
/// (`pairs`, `topo`); the OSU binaries parse the same names themselves.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct PlacementArgs {
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
    pub fn request(&self) -> Result<PlacementRequest, PlacementError> {
        let mut req = PlacementRequest::default();
        for (option, value) in
            [("bind", &self.bind), ("cpu-list", &self.cpu_list), ("nic", &self.nic), ("gpu", &self.gpu)]
        {
            if let Some(v) = value {
                req.set(option, v).map_err(|reason| PlacementError::Value { option, value: v.clone(), reason })?;
            }
        }
        req.check()?;
        Ok(req)
    }
}

fn split_list<T>(
    text: &str,
    item: impl Fn(&str) -> Result<T, PlacementValueError>,
) -> Result<Vec<T>, PlacementValueError> {
    if text.trim().is_empty() {
        return Err(PlacementValueError::EmptyList);
    }
    text.split(',').map(item).collect()
}

/// The variables that carry a NIC choice to UCX (and so to Open MPI's UCX
/// layer) and to NCCL.
pub(crate) fn nic_variables(m: &Machine, nic: &NicSpec) -> Vec<(&'static str, String)> {
    let verbs = m.find_nic(&nic.device).is_some_and(|n| n.has_verbs_ports());
    if verbs {
        vec![("UCX_NET_DEVICES", nic.to_string()), ("NCCL_IB_HCA", format!("={nic}"))]
    } else {
        vec![("UCX_NET_DEVICES", nic.device.clone()), ("NCCL_SOCKET_IFNAME", format!("={}", nic.device))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request, or the error's text.
    fn req(args: &[(&str, &str)]) -> Result<PlacementRequest, String> {
        let mut r = PlacementRequest::default();
        for (o, v) in args {
            r.set(o, v).map_err(|e| e.to_string())?;
        }
        r.check().map_err(|e| e.to_string())?;
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
        assert_eq!(req(&[("cpu-list", "0-1,1")]).unwrap_err(), "cpu 1 is listed twice");
        assert_eq!(req(&[("mem", "0")]).unwrap_err(), "not a placement option: --mem");
        assert_eq!(
            req(&[("cpu-list", "0"), ("bind", "core")]).unwrap_err(),
            "--cpu-list already says where each rank runs; drop --bind core"
        );
    }

    #[test]
    fn clap_arguments_name_the_option() {
        let args = PlacementArgs { gpu: Some("0,x".into()), ..PlacementArgs::default() };
        assert_eq!(args.request().unwrap_err().to_string(), "--gpu 0,x: 'x' is not a GPU index (0, 1, ...)");
        let args = PlacementArgs { bind: Some("core".into()), cpu_list: Some("3".into()), ..PlacementArgs::default() };
        assert_eq!(args.request(), Err(PlacementError::CpuListWithBindCore));
    }
}
