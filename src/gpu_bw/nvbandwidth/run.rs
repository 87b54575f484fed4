//! Each case's measurements, as nvbandwidth makes them: which buffers
//! (the interfering copies' twice the size), which copies run together,
//! from which context, and which figure goes into which cell. The timing
//! itself is the shared core's ([`crate::gpu_bw::measure::concurrent`]).

use std::cell::RefCell;

use super::cases::{Case, Engine, Shape};
use super::output::Matrix;
use super::sm::SmKit;
use crate::gpu_bw::driver::{CudaError, Device, PeerAccess};
use crate::gpu_bw::measure::concurrent::{
    self, statistic, Copier, Copy, DeviceCheck, EngineCopy, Failure, Mem, Plan, Samples,
};
use crate::topo::affinity;

/// Everything a case runs with.
pub(crate) struct Bench<'d> {
    pub devs: &'d [Device],
    pub bytes: usize,
    pub loops: u64,
    pub samples: u32,
    pub verify: bool,
    pub mean: bool,
    /// Bind to each GPU's NUMA node before allocating its host memory.
    pub affinity: bool,
    pub sm: Option<&'d SmKit<'d>>,
    /// Fill and check device memory with the GPUs' kernels (else through
    /// the host).
    pub check: Option<&'d DeviceCheck<'d, 'd>>,
    /// Peer access turned on so far (it stays on, as nvbandwidth leaves it).
    peers: RefCell<Vec<PeerAccess<'d>>>,
    enabled: RefCell<Vec<(usize, usize)>>,
    /// Verbose lines.
    pub lines: RefCell<Vec<String>>,
    /// Timings whose streams started before all their copies were queued.
    pub gate_timeouts: RefCell<usize>,
    /// Per GPU, the CPUs its host memory was allocated from.
    pub bound: RefCell<Vec<Option<String>>>,
}

/// Whether copies are issued in their source's context where it has one
/// (else the destination's), or the destination's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prefer {
    Src,
    Dst,
}

/// Which figure a set of copies gives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Figure {
    First,
    Each,
    Total,
}

impl<'d> Bench<'d> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        devs: &'d [Device],
        bytes: usize,
        loops: u64,
        samples: u32,
        verify: bool,
        mean: bool,
        affinity: bool,
        sm: Option<&'d SmKit<'d>>,
    ) -> Bench<'d> {
        Bench {
            devs,
            bytes,
            loops,
            samples,
            verify,
            mean,
            affinity,
            sm,
            check: None,
            peers: RefCell::new(Vec::new()),
            enabled: RefCell::new(Vec::new()),
            lines: RefCell::new(Vec::new()),
            gate_timeouts: RefCell::new(0),
            bound: RefCell::new(vec![None; devs.len()]),
        }
    }

    fn n(&self) -> usize {
        self.devs.len()
    }

    pub(crate) fn device(&self, d: usize, bytes: usize) -> Result<Mem<'d>, CudaError> {
        Mem::device(&self.devs[d], bytes)
    }

    /// Pinned host memory for GPU `d`, allocated (unless `-d`) by a
    /// thread bound to the CPUs of that GPU's NUMA node, so its pages lie
    /// on that node.
    pub(crate) fn host(&self, d: usize, bytes: usize) -> Result<Mem<'d>, CudaError> {
        if self.affinity {
            if let Some(node) = self.devs[d].host_numa_id().or_else(|| gpu_numa_from_sysfs(&self.devs[d])) {
                if let Some(cpus) = affinity::bind_thread_to_numa_node(node) {
                    self.bound.borrow_mut()[d] = Some(format!("node {node} (CPUs {cpus})"));
                }
            }
        }
        Mem::host(&self.devs[d], bytes)
    }

    /// Turns on peer access both ways between GPUs `a` and `b` where `a`
    /// can map `b`'s memory; whether it could.
    pub(crate) fn peer(&self, a: usize, b: usize) -> Result<bool, CudaError> {
        let (da, db) = (&self.devs[a], &self.devs[b]);
        if da.can_access_peer(db) != Some(true) {
            return Ok(false);
        }
        if !self.enabled.borrow().contains(&(a, b)) {
            let mut p = self.peers.borrow_mut();
            p.push(PeerAccess::enable(db, da)?);
            p.push(PeerAccess::enable(da, db)?);
            self.enabled.borrow_mut().extend([(a, b), (b, a)]);
        }
        Ok(true)
    }

    fn copier(&self, case: &Case, split: bool) -> Box<dyn Copier + 'd> {
        match (case.engine, self.sm) {
            (Engine::Sm, Some(kit)) => Box::new(kit.copier(split)),
            _ => Box::new(EngineCopy),
        }
    }

    /// Times copies between `(src, dst)` pairs together.
    fn time(
        &self,
        pairs: Vec<(&mut Mem<'d>, &mut Mem<'d>)>,
        copier: &dyn Copier,
        prefer: Prefer,
        figure: Figure,
    ) -> Result<Vec<f64>, Failure> {
        let mut copies: Vec<Copy> = pairs
            .into_iter()
            .map(|(src, dst)| {
                let ctx = match (prefer, src.gpu(), dst.gpu()) {
                    (Prefer::Src, Some(g), _) => g,
                    (_, _, Some(g)) => g,
                    (_, Some(g), None) => g,
                    (_, None, None) => &self.devs[0],
                };
                Copy { src, dst, ctx }
            })
            .collect();
        let plan = Plan {
            loops: self.loops,
            samples: self.samples,
            verify: self.verify,
            check: self.check,
            total: figure == Figure::Total,
        };
        let mut lines = self.lines.borrow_mut();
        let s: Samples = concurrent::sample(&mut copies, copier, &plan, &mut |l| lines.push(l))?;
        *self.gate_timeouts.borrow_mut() += s.gate_timeouts;
        let gbs = |v: &[f64]| statistic(v, self.mean) * 1e-9;
        Ok(match figure {
            Figure::First => vec![gbs(&s.per_copy[0])],
            Figure::Each => s.per_copy.iter().map(|v| gbs(v)).collect(),
            Figure::Total => vec![gbs(&s.total)],
        })
    }

    /// Runs `case`: its matrices, in print order.
    pub fn run(&self, case: &Case) -> Result<Vec<Matrix>, Failure> {
        let n = self.n();
        let size = self.bytes;
        let titles = case.matrices();
        let square = matches!(case.shape, Shape::Peer { .. } | Shape::PeerLatency);
        let rows = if square { n } else { 1 };
        let mut mats: Vec<Matrix> = titles
            .iter()
            .map(|(k, t)| Matrix::new(k, t, rows, n, matches!(case.shape, Shape::HostLatency | Shape::PeerLatency)))
            .collect();
        match case.shape {
            Shape::HostDevice { to_device, both: false } => {
                for d in 0..n {
                    let mut host = self.host(d, size)?;
                    let mut dev = self.device(d, size)?;
                    let pair = if to_device { (&mut host, &mut dev) } else { (&mut dev, &mut host) };
                    let v = self.time(vec![pair], &*self.copier(case, false), Prefer::Src, Figure::First)?;
                    mats[0].set(0, d, v[0]);
                }
            }
            Shape::HostDevice { to_device, both: true } => {
                for d in 0..n {
                    let v = if case.engine == Engine::Sm {
                        let mut host = self.host(d, size)?;
                        let mut dev = self.device(d, size)?;
                        self.time(vec![(&mut host, &mut dev)], &*self.copier(case, true), Prefer::Src, Figure::First)?
                    } else {
                        let (mut host1, mut host2) = (self.host(d, size)?, self.host(d, size * 2)?);
                        let (mut dev1, mut dev2) = (self.device(d, size)?, self.device(d, size * 2)?);
                        let pairs = if to_device {
                            vec![(&mut host1, &mut dev1), (&mut dev2, &mut host2)]
                        } else {
                            vec![(&mut dev1, &mut host1), (&mut host2, &mut dev2)]
                        };
                        self.time(pairs, &EngineCopy, Prefer::Src, Figure::First)?
                    };
                    mats[0].set(0, d, v[0]);
                }
            }
            Shape::Peer { read, both } => {
                for a in 0..n {
                    for b in (0..n).filter(|&b| b != a) {
                        // The row's GPU `a`, the column's `b`.
                        let prefer = if read { Prefer::Dst } else { Prefer::Src };
                        if !both {
                            let mut on_a = self.device(a, size)?;
                            let mut on_b = self.device(b, size)?;
                            if !self.peer(a, b)? {
                                continue;
                            }
                            let pair = if read { (&mut on_b, &mut on_a) } else { (&mut on_a, &mut on_b) };
                            let v = self.time(vec![pair], &*self.copier(case, false), prefer, Figure::First)?;
                            mats[0].set(a, b, v[0]);
                        } else {
                            let (mut a1, mut a2) = (self.device(a, size)?, self.device(a, size)?);
                            let (mut b1, mut b2) = (self.device(b, size)?, self.device(b, size)?);
                            if !self.peer(a, b)? {
                                continue;
                            }
                            let pairs = vec![(&mut b1, &mut a1), (&mut a2, &mut b2)];
                            let v = self.time(pairs, &*self.copier(case, false), prefer, Figure::Each)?;
                            mats[0].set(a, b, v[0]);
                            mats[1].set(a, b, v[1]);
                            mats[2].set(a, b, v[0] + v[1]);
                        }
                    }
                }
            }
            Shape::AllHost { to_host, both } => {
                for d in 0..n {
                    let v = self.all_host(case, d, to_host, both)?;
                    mats[0].set(0, d, v);
                }
            }
            Shape::AllToOne { read } | Shape::OneToAll { read } => {
                // Every other GPU's buffer, and per one GPU a buffer on it
                // for each peer it can map: all to one writes into the
                // one GPU (a read copies out of it), one to all writes
                // out of it (a read copies into it).
                let from_one = matches!(case.shape, Shape::OneToAll { .. }) != read;
                let mut all: Vec<Mem> = (0..n).map(|k| self.device(k, size)).collect::<Result<_, _>>()?;
                for one in 0..n {
                    let mut ends: Vec<(usize, Mem)> = Vec::new();
                    for k in (0..n).filter(|&k| k != one) {
                        let m = self.device(one, size)?;
                        if self.peer(one, k)? {
                            ends.push((k, m));
                        }
                    }
                    if ends.is_empty() {
                        continue;
                    }
                    let v = self.many(case, &mut all, &mut ends, from_one)?;
                    mats[0].set(0, one, v);
                }
            }
            Shape::Local => {
                for d in 0..n {
                    let mut first = self.device(d, size)?;
                    let mut second = self.device(d, size)?;
                    let v = self.time(vec![(&mut second, &mut first)], &EngineCopy, Prefer::Src, Figure::First)?;
                    mats[0].set(0, d, v[0]);
                }
            }
            Shape::HostLatency | Shape::PeerLatency => {
                let Some(kit) = self.sm else { unreachable!("kernels are loaded before a latency case runs") };
                kit.latency(self, case.shape == Shape::PeerLatency, &mut mats[0])?;
            }
        }
        Ok(mats)
    }

    /// One cell of an all-to-host or host-to-all case: GPU `d`'s copy
    /// with the host, while every other GPU copies with the host too.
    fn all_host(&self, case: &Case, d: usize, to_host: bool, both: bool) -> Result<f64, Failure> {
        let size = self.bytes;
        let others: Vec<usize> = (0..self.n()).filter(|&o| o != d).collect();
        let mut pairs: Vec<(Mem, Mem)> = Vec::new();
        let v = if both && case.engine == Engine::Sm {
            // Copies both ways per kernel, the others the same size.
            let first = if to_host {
                (self.device(d, size)?, self.host(d, size)?)
            } else {
                (self.host(d, size)?, self.device(d, size)?)
            };
            pairs.push(first);
            for &o in &others {
                pairs.push((self.device(o, size)?, self.host(o, size)?));
            }
            let refs = pairs.iter_mut().map(|(s, t)| (s, t)).collect();
            self.time(refs, &*self.copier(case, true), Prefer::Src, Figure::First)?
        } else if both {
            let (measured, reverse) = if to_host {
                ((self.device(d, size)?, self.host(d, size)?), (self.host(d, size * 2)?, self.device(d, size * 2)?))
            } else {
                ((self.host(d, size)?, self.device(d, size)?), (self.device(d, size * 2)?, self.host(d, size * 2)?))
            };
            pairs.push(measured);
            pairs.push(reverse);
            for &o in &others {
                pairs.push((self.device(o, size * 2)?, self.host(o, size * 2)?));
                pairs.push((self.host(o, size * 2)?, self.device(o, size * 2)?));
            }
            let refs = pairs.iter_mut().map(|(s, t)| (s, t)).collect();
            self.time(refs, &EngineCopy, Prefer::Src, Figure::First)?
        } else {
            let mut devs = vec![self.device(d, size)?];
            let mut hosts = vec![self.host(d, size)?];
            for &o in &others {
                devs.push(self.device(o, size * 2)?);
                hosts.push(self.host(o, size * 2)?);
            }
            let refs =
                devs.iter_mut().zip(hosts.iter_mut()).map(|(dv, h)| if to_host { (dv, h) } else { (h, dv) }).collect();
            self.time(refs, &*self.copier(case, false), Prefer::Src, Figure::First)?
        };
        Ok(v[0])
    }

    /// Copies between each `ends` buffer (on the one GPU) and its peer's
    /// buffer in `all`, together: from the one GPU's buffers where
    /// `from_one`, into them otherwise; the total.
    fn many(
        &self,
        case: &Case,
        all: &mut [Mem<'d>],
        ends: &mut [(usize, Mem<'d>)],
        from_one: bool,
    ) -> Result<f64, Failure> {
        let mut pairs = Vec::new();
        let mut rest: Vec<Option<&mut Mem<'d>>> = all.iter_mut().map(Some).collect();
        for (k, m) in ends.iter_mut() {
            let other = rest[*k].take().expect("one copy per peer");
            pairs.push(if from_one { (m, other) } else { (other, m) });
        }
        // nvbandwidth issues copy-engine reads from the receiving GPU, and
        // every other copy from its source's GPU.
        let read = matches!(case.shape, Shape::AllToOne { read: true } | Shape::OneToAll { read: true });
        let prefer = if read && case.engine == Engine::Ce { Prefer::Dst } else { Prefer::Src };
        Ok(self.time(pairs, &*self.copier(case, false), prefer, Figure::Total)?[0])
    }
}

/// The NUMA node sysfs gives a GPU's PCI device, where the driver does
/// not say (the bus id rewritten to sysfs's spelling by the shared reader).
fn gpu_numa_from_sysfs(dev: &Device) -> Option<usize> {
    let bus = crate::gpu::cuda::sysfs_bus_id(&dev.pci_bus_id()?);
    crate::gpu::cuda::numa_node(std::path::Path::new("/sys/bus/pci/devices"), &bus).map(|n| n as usize)
}
