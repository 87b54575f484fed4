//! UCX's UCP tagged messages on host memory (`--backend ucx`): the
//! operation ucx_perftest's `tag_lat` and `tag_bw` time, with no MPI
//! library's protocol choices in between. One UCP context and worker per
//! rank, every rank's worker address exchanged over MPI (the control
//! plane), one endpoint per other rank, all made before anything is timed.
//! A blocking send or receive posts the non-blocking call and drives the
//! worker until the request completes; a window posts every message, then
//! drives the worker until all are done: no sleeping, no allocation in the
//! timed region. Timing is OSU's (`MPI_Wtime` around the same loops).
//!
//! The transport variables UCX reads (`UCX_TLS`, `UCX_NET_DEVICES`, set by
//! the user or by `--nic` placement before start-up) apply when the context
//! is made. UCX has no collectives here: only the point-to-point
//! benchmarks take `--backend ucx`.

use std::ffi::c_void;
use std::path::Path;
use std::ptr::{null, null_mut};

use serde::Serialize;
use ucx_sys::raw::*;
use ucx_sys::{ptr_status, status_text, PtrStatus};

use super::world::World;
use super::{check_len, Control, Envelope, Transport};
use crate::backend::buffer_set::BufferSet;
use crate::buffer::AlignedBuf;

/// Why the UCX transport could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UcxError {
    #[error("{0}")]
    Load(#[from] ucx_sys::LoadError),
    #[error("UCX {what} failed: {status}{hint}")]
    Call { what: &'static str, status: String, hint: &'static str },
}

/// What the run record says about UCX.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub(crate) struct UcxInfo {
    /// The libucp that ran (`ucp_get_version_string`).
    pub version: String,
    /// The UCX headers commbench was built with.
    pub built_with: Option<String>,
    /// `UCX_TLS` and `UCX_NET_DEVICES` as the context read them (None:
    /// unset, UCX's own choice).
    pub tls: Option<String>,
    pub net_devices: Option<String>,
    /// Per rank: the lanes UCX configured on each of its endpoints, as
    /// `ucp_ep_print_info` states them (`peer 1: tag: posix/memory ...`).
    pub endpoints: Vec<RankEndpoints>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub(crate) struct RankEndpoints {
    pub rank: usize,
    /// `peer R: transport/device` for every lane of every endpoint.
    pub lanes: Vec<String>,
}

/// Request slots of windowed operations: a UCP request per message in
/// flight, null when done.
pub struct Requests {
    reqs: Vec<*mut c_void>,
}

/// UCP tagged messages over the ranks of `World`.
pub(crate) struct Ucx<'w> {
    world: &'w World,
    u: &'static Ucp,
    ctx: ucp_context_h,
    worker: ucp_worker_h,
    /// Endpoint to each rank (null for this rank).
    eps: Vec<ucp_ep_h>,
    me: u64,
    /// Parameters of every send and receive: none set (contiguous bytes,
    /// no callback; completion is polled).
    param: ucp_request_param_t,
    tls: Option<String>,
    net_devices: Option<String>,
}

/// The peer of a failure that a window's requests do not name.
const ANY_PEER: usize = usize::MAX;

/// The tag of a message from `sender` with the benchmark's `tag`: the
/// sender in the upper half, so that a receive names its source as MPI's
/// does.
#[inline(always)]
fn tag_of(sender: u64, tag: i32) -> u64 {
    (sender << 32) | u64::from(tag as u32)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl<'w> Ucx<'w> {
    /// The context, worker and endpoints of this rank. Collective: every
    /// rank's worker address goes to every rank over `world`, so every
    /// rank must call it (even one that failed to load UCX sends an empty
    /// address, and the caller agrees on the outcome).
    pub fn new(world: &'w World) -> Result<Ucx<'w>, UcxError> {
        let local = Self::local();
        // Every rank takes part in the exchange, whatever happened here.
        // A leading 1 marks an address; a lone 0, a rank without one.
        let mine = match &local {
            Ok(l) => [&[1u8][..], &l.address].concat(),
            Err(_) => vec![0],
        };
        let all: Vec<Vec<u8>> = exchange(world, &mine)
            .into_iter()
            .map(|a| if a.first() == Some(&1) { a[1..].to_vec() } else { Vec::new() })
            .collect();
        let mut l = local?;
        let n = world.size();
        if all.len() != n || all.iter().any(|a| a.is_empty()) {
            l.close();
            return Err(UcxError::Call {
                what: "worker address exchange",
                status: "another rank could not start UCX".into(),
                hint: "",
            });
        }
        let me = world.rank();
        let mut eps = vec![null_mut(); n];
        for (r, addr) in all.iter().enumerate() {
            if r == me {
                continue;
            }
            // SAFETY: a zeroed parameter set naming only the address,
            // which lives until the call returns.
            let status = unsafe {
                let mut p: ucp_ep_params_t = std::mem::zeroed();
                p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64;
                p.address = addr.as_ptr() as *const ucp_address_t;
                l.u.ucp_ep_create(l.worker, &p, &mut eps[r])
            };
            if status != ucs_status_t::UCS_OK {
                let status = status_text(l.u, status);
                l.eps = eps;
                l.close();
                return Err(UcxError::Call { what: "endpoint creation", status, hint: "" });
            }
        }
        Ok(Ucx {
            world,
            u: l.u,
            ctx: l.ctx,
            worker: l.worker,
            eps,
            me: me as u64,
            // SAFETY: all-zero is "no field set" for this C structure.
            param: unsafe { std::mem::zeroed() },
            tls: env("UCX_TLS"),
            net_devices: env("UCX_NET_DEVICES"),
        })
    }

    /// This rank's context and worker, and the worker's address.
    fn local() -> Result<Local, UcxError> {
        let u = ucx_sys::load()?;
        if let Some(devices) = env("UCX_NET_DEVICES") {
            check_net_devices(&devices, Path::new("/sys/class")).map_err(|status| UcxError::Call {
                what: "device selection (UCX_NET_DEVICES)",
                status,
                hint: "",
            })?;
        }
        let call = |what: &'static str, status: ucs_status_t| -> Result<(), UcxError> {
            if status == ucs_status_t::UCS_OK {
                return Ok(());
            }
            let hint = match status {
                ucs_status_t::UCS_ERR_NO_DEVICE | ucs_status_t::UCS_ERR_NO_ELEM => {
                    " (check UCX_TLS and UCX_NET_DEVICES against `ucx_info -d`)"
                }
                _ => "",
            };
            Err(UcxError::Call { what, status: status_text(u, status), hint })
        };
        let mut l = Local { u, ctx: null_mut(), worker: null_mut(), address: Vec::new(), eps: Vec::new() };
        // SAFETY: UCP's set-up calls in their documented order, on zeroed
        // parameter structures whose field masks name the fields set; on
        // any failure `close` undoes what was made.
        unsafe {
            let mut config = null_mut();
            call("configuration (UCX_* variables)", u.ucp_config_read(null(), null(), &mut config))?;
            let mut params: ucp_params_t = std::mem::zeroed();
            params.field_mask = UCP_PARAM_FIELD_FEATURES as u64;
            params.features = UCP_FEATURE_TAG as u64;
            let status = u.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &mut l.ctx);
            u.ucp_config_release(config);
            call("context creation", status)?;
            let mut wp: ucp_worker_params_t = std::mem::zeroed();
            wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
            wp.thread_mode = UCS_THREAD_MODE_SINGLE;
            if let Err(e) = call("worker creation", u.ucp_worker_create(l.ctx, &wp, &mut l.worker)) {
                l.close();
                return Err(e);
            }
            let (mut addr, mut len) = (null_mut(), 0usize);
            if let Err(e) = call("worker address", u.ucp_worker_get_address(l.worker, &mut addr, &mut len)) {
                l.close();
                return Err(e);
            }
            l.address = std::slice::from_raw_parts(addr as *const u8, len).to_vec();
            u.ucp_worker_release_address(l.worker, addr);
        }
        Ok(l)
    }

    /// Ends the job from inside a timed operation that UCX failed (a peer
    /// gone, a transport error): one line, then MPI_Abort.
    #[cold]
    #[inline(never)]
    fn fail(&self, what: &str, peer: usize, status: ucs_status_t) -> ! {
        let with = if peer == ANY_PEER { String::new() } else { format!(" with rank {peer}") };
        crate::say!("UCX {what}{with} failed on rank {}: {}", self.me, status_text(self.u, status));
        self.world.abort(1)
    }

    /// Drives the worker until the request behind `p` completes.
    #[inline(always)]
    fn wait(&self, p: ucs_status_ptr_t, what: &str, peer: usize) {
        match ptr_status(p) {
            PtrStatus::Done => {}
            PtrStatus::Error(s) => self.fail(what, peer, s),
            PtrStatus::Pending(r) => self.wait_request(r, what, peer),
        }
    }

    #[inline(always)]
    fn wait_request(&self, r: *mut c_void, what: &str, peer: usize) {
        loop {
            // SAFETY: a live request of this worker.
            let s = unsafe { self.u.ucp_request_check_status(r) };
            if s != ucs_status_t::UCS_INPROGRESS {
                // SAFETY: completed; freed once.
                unsafe { self.u.ucp_request_free(r) };
                if s != ucs_status_t::UCS_OK {
                    self.fail(what, peer, s);
                }
                return;
            }
            // SAFETY: this rank's worker, driven by this thread only.
            unsafe { self.u.ucp_worker_progress(self.worker) };
        }
    }

    /// The lanes of this rank's endpoints, as UCX prints them.
    fn lanes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (peer, &ep) in self.eps.iter().enumerate() {
            if ep.is_null() {
                continue;
            }
            for lane in ep_lanes(&print_info(self.u, ep)) {
                out.push(format!("peer {peer}: {lane}"));
            }
        }
        out
    }
}

/// Checks that `UCX_NET_DEVICES` names at least one device this host has
/// (UCX itself only warns and goes on without any, so a typo would measure
/// another path): a network interface (`eth0`) or an RDMA device and port
/// (`mlx5_0:1`), under `sys` (/sys/class). A list may name devices of
/// other hosts too (one setting for a job whose hosts name their devices
/// differently), as UCX allows; `all` passes.
pub(crate) fn check_net_devices(value: &str, sys: &Path) -> Result<(), String> {
    let listing = |dir: &str| -> String {
        let mut names: Vec<String> = std::fs::read_dir(sys.join(dir))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    };
    let named: Vec<&str> = value.split(',').map(str::trim).filter(|d| !d.is_empty()).collect();
    let here = |dev: &&str| {
        let (name, port) = match dev.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (*dev, None),
        };
        let rdma = sys.join("infiniband").join(name);
        *dev == "all"
            || match port {
                Some(p) => rdma.join("ports").join(p).exists(),
                None => sys.join("net").join(name).exists() || rdma.exists(),
            }
    };
    if named.is_empty() || named.iter().any(here) {
        return Ok(());
    }
    Err(format!(
        "UCX_NET_DEVICES names {}, none of which this host has (network interfaces: {}; RDMA devices: {})",
        named.join(","),
        listing("net"),
        listing("infiniband")
    ))
}

/// The lane lines of `ucp_ep_print_info`'s text, reduced to what each lane
/// is for and its transport/device (`tag: posix/memory`), e.g. from
/// `#   lane[0]:  3:posix/memory.0 md[3] -> md[3]/posix/sysdev[255] am am_bw#0`.
pub(crate) fn ep_lanes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim_start_matches('#').trim_start();
            let rest = rest.strip_prefix("lane[")?;
            let after = rest.split_once("]:")?.1.trim();
            // `3:posix/memory.0 md[3] ...`: the resource after the index.
            let res = after.split_whitespace().next()?;
            let res = res.split_once(':').map_or(res, |(_, r)| r);
            let res = res.rsplit_once('.').map_or(res, |(r, _)| r);
            let roles: Vec<&str> = after
                .split_whitespace()
                .skip(1)
                .filter(|w| !w.starts_with("md[") && !w.contains("->") && !w.contains('/'))
                .collect();
            Some(if roles.is_empty() { res.to_string() } else { format!("{res} ({})", roles.join(" ")) })
        })
        .collect()
}

/// `ucp_ep_print_info`'s text for `ep`.
fn print_info(u: &Ucp, ep: ucp_ep_h) -> String {
    let mut buf: *mut libc::c_char = null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream gives a FILE writing into a malloc'd buffer
    // that fclose finalises; the text is copied out, then freed.
    unsafe {
        let f = libc::open_memstream(&mut buf, &mut len);
        if f.is_null() {
            return String::new();
        }
        u.ucp_ep_print_info(ep, f as *mut FILE);
        libc::fclose(f);
        if buf.is_null() {
            return String::new();
        }
        let text = String::from_utf8_lossy(std::slice::from_raw_parts(buf as *const u8, len)).into_owned();
        libc::free(buf as *mut c_void);
        text
    }
}

/// Every rank's bytes, everywhere (gathered at rank 0, then broadcast as
/// length-prefixed records).
fn exchange(world: &World, mine: &[u8]) -> Vec<Vec<u8>> {
    let gathered = world.gather_bytes(mine);
    let mut packed = Vec::new();
    for g in &gathered {
        packed.extend_from_slice(&(g.len() as u64).to_le_bytes());
        packed.extend_from_slice(g);
    }
    let packed = world.bcast_bytes(&packed);
    let mut out = Vec::new();
    let mut rest = &packed[..];
    while rest.len() >= 8 {
        let (len, tail) = rest.split_at(8);
        let len = u64::from_le_bytes(len.try_into().unwrap_or([0; 8])) as usize;
        if tail.len() < len {
            break;
        }
        out.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    out
}

/// A rank's UCX before its endpoints exist.
struct Local {
    u: &'static Ucp,
    ctx: ucp_context_h,
    worker: ucp_worker_h,
    address: Vec<u8>,
    eps: Vec<ucp_ep_h>,
}

impl Local {
    fn close(&mut self) {
        close(self.u, self.ctx, self.worker, &self.eps);
        self.ctx = null_mut();
        self.worker = null_mut();
    }
}

/// Closes `eps` (forcibly: a peer may be gone), the worker and the context.
fn close(u: &Ucp, ctx: ucp_context_h, worker: ucp_worker_h, eps: &[ucp_ep_h]) {
    // SAFETY: each handle was made by this rank and is released once.
    unsafe {
        let mut p: ucp_request_param_t = std::mem::zeroed();
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_EP_CLOSE_FLAG_FORCE;
        for &ep in eps.iter().filter(|e| !e.is_null()) {
            if let PtrStatus::Pending(r) = ptr_status(u.ucp_ep_close_nbx(ep, &p)) {
                while u.ucp_request_check_status(r) == ucs_status_t::UCS_INPROGRESS {
                    u.ucp_worker_progress(worker);
                }
                u.ucp_request_free(r);
            }
        }
        if !worker.is_null() {
            u.ucp_worker_destroy(worker);
        }
        if !ctx.is_null() {
            u.ucp_cleanup(ctx);
        }
    }
}

impl Drop for Ucx<'_> {
    fn drop(&mut self) {
        close(self.u, self.ctx, self.worker, &self.eps);
    }
}

impl<'w> Transport for Ucx<'w> {
    type World = World;
    type Buf = AlignedBuf;
    type Mem = super::HostMemory;
    type Requests = Requests;

    const BACKEND: &'static str = "ucx";

    fn world(&self) -> &World {
        self.world
    }

    fn memory(&self) -> &super::HostMemory {
        &super::HostMemory
    }

    fn requests(&self, n: usize) -> Requests {
        Requests { reqs: vec![null_mut(); n.max(1)] }
    }

    #[inline(always)]
    fn now(&self) -> f64 {
        self.world.wtime()
    }

    fn tick(&self) -> f64 {
        self.world.wtick()
    }

    #[inline(always)]
    fn send(&self, buf: &AlignedBuf, env: Envelope) {
        let bytes = env.bytes();
        check_len(buf.len(), bytes);
        // SAFETY: the buffer holds `bytes` (checked) and outlives the wait.
        let p = unsafe {
            self.u.ucp_tag_send_nbx(
                self.eps[env.peer],
                buf.as_ptr() as *const c_void,
                bytes,
                tag_of(self.me, env.tag),
                &self.param,
            )
        };
        self.wait(p, "tag send", env.peer);
    }

    #[inline(always)]
    fn recv(&self, buf: &mut AlignedBuf, env: Envelope) {
        let bytes = env.bytes();
        check_len(buf.len(), bytes);
        // SAFETY: as for send.
        let p = unsafe {
            self.u.ucp_tag_recv_nbx(
                self.worker,
                buf.as_mut_ptr() as *mut c_void,
                bytes,
                tag_of(env.peer as u64, env.tag),
                u64::MAX,
                &self.param,
            )
        };
        self.wait(p, "tag receive", env.peer);
    }

    #[inline(always)]
    fn isend_window(&self, bufs: &BufferSet<AlignedBuf>, env: Envelope, reqs: &mut Requests, offset: usize) {
        let bytes = env.bytes();
        check_len(bufs.slot(0).len(), bytes);
        let (ep, tag) = (self.eps[env.peer], tag_of(self.me, env.tag));
        let slots = &mut reqs.reqs[offset..offset + bufs.slots()];
        for (j, slot) in slots.iter_mut().enumerate() {
            // SAFETY: every slot's buffer holds `bytes` (same length,
            // checked once) and outlives the request, which the caller
            // completes with waitall or testall while the set is borrowed.
            let p =
                unsafe { self.u.ucp_tag_send_nbx(ep, bufs.slot(j).as_ptr() as *const c_void, bytes, tag, &self.param) };
            *slot = match ptr_status(p) {
                PtrStatus::Done => null_mut(),
                PtrStatus::Pending(r) => r,
                PtrStatus::Error(s) => self.fail("tag send", env.peer, s),
            };
        }
    }

    #[inline(always)]
    fn irecv_window(&self, bufs: &mut BufferSet<AlignedBuf>, env: Envelope, reqs: &mut Requests, offset: usize) {
        let bytes = env.bytes();
        check_len(bufs.slot(0).len(), bytes);
        let tag = tag_of(env.peer as u64, env.tag);
        let n = bufs.slots();
        let slots = &mut reqs.reqs[offset..offset + n];
        for (j, slot) in slots.iter_mut().enumerate() {
            let ptr = bufs.slot_mut(j).as_mut_ptr() as *mut c_void;
            // SAFETY: as in isend_window.
            let p = unsafe { self.u.ucp_tag_recv_nbx(self.worker, ptr, bytes, tag, u64::MAX, &self.param) };
            *slot = match ptr_status(p) {
                PtrStatus::Done => null_mut(),
                PtrStatus::Pending(r) => r,
                PtrStatus::Error(s) => self.fail("tag receive", env.peer, s),
            };
        }
    }

    #[inline(always)]
    fn waitall(&self, reqs: &mut Requests, offset: usize, n: usize) {
        for slot in &mut reqs.reqs[offset..offset + n] {
            if !slot.is_null() {
                self.wait_request(*slot, "windowed message", ANY_PEER);
                *slot = null_mut();
            }
        }
    }

    #[inline(always)]
    fn testall(&self, reqs: &mut Requests, offset: usize, n: usize) -> bool {
        // SAFETY: this rank's worker, driven by this thread only.
        unsafe { self.u.ucp_worker_progress(self.worker) };
        let mut all = true;
        for slot in &mut reqs.reqs[offset..offset + n] {
            if slot.is_null() {
                continue;
            }
            // SAFETY: a live request of this worker.
            let s = unsafe { self.u.ucp_request_check_status(*slot) };
            if s == ucs_status_t::UCS_INPROGRESS {
                all = false;
                continue;
            }
            // SAFETY: completed; freed once.
            unsafe { self.u.ucp_request_free(*slot) };
            *slot = null_mut();
            if s != ucs_status_t::UCS_OK {
                self.fail("windowed message", ANY_PEER, s);
            }
        }
        all
    }

    fn record_info(&self) -> Option<serde_json::Value> {
        let mine = serde_json::to_vec(&self.lanes()).unwrap_or_default();
        let gathered = self.world.gather_bytes(&mine);
        if self.world.rank() != 0 {
            return None;
        }
        let endpoints = gathered
            .iter()
            .enumerate()
            .map(|(rank, b)| RankEndpoints { rank, lanes: serde_json::from_slice(b).unwrap_or_default() })
            .collect();
        let info = UcxInfo {
            version: ucx_sys::version(self.u),
            built_with: ucx_sys::HEADERS_VERSION.map(str::to_string),
            tls: self.tls.clone(),
            net_devices: self.net_devices.clone(),
            endpoints,
        };
        serde_json::to_value(info).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_carry_the_sender() {
        assert_eq!(tag_of(1, 1), (1 << 32) | 1);
        assert_eq!(tag_of(0, 71), 71);
        assert_ne!(tag_of(2, 1), tag_of(1, 2));
        assert_eq!(tag_of(3, -1) & 0xffff_ffff, 0xffff_ffff);
    }

    #[test]
    fn net_devices_must_exist() {
        let sys = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(sys.path().join("net/eth1")).unwrap();
        std::fs::create_dir_all(sys.path().join("infiniband/mlx5_0/ports/1")).unwrap();
        for ok in ["eth1", "mlx5_0:1", "mlx5_0", "all", "eth1,mlx5_0:1", "eth1, ", "eth2,eth1"] {
            assert_eq!(check_net_devices(ok, sys.path()), Ok(()), "{ok}");
        }
        assert_eq!(
            check_net_devices("eth2,mlx5_0:2", sys.path()).unwrap_err(),
            "UCX_NET_DEVICES names eth2,mlx5_0:2, none of which this host has (network interfaces: eth1; RDMA \
             devices: mlx5_0)"
        );
        let e = check_net_devices("nodev0", sys.path()).unwrap_err();
        assert!(e.starts_with("UCX_NET_DEVICES names nodev0, none of which"), "{e}");
    }

    #[test]
    fn lanes_from_print_info() {
        let text = "#\n# UCP endpoint\n#\n#               peer: <no debug data>\n\
                    #                 lane[0]:  3:posix/memory.0 md[3]          -> md[3]/posix/sysdev[255] am am_bw#0\n\
                    #                 lane[1]:  8:cma/memory.0 md[7]            -> md[7]/cma/sysdev[255] rma_bw#0\n\
                    #                 lane[2]:  1:tcp/eth1.0 md[1]   -> md[1]/tcp/sysdev[255] tag\n#\n";
        assert_eq!(
            ep_lanes(text),
            ["posix/memory (am am_bw#0)", "cma/memory (rma_bw#0)", "tcp/eth1 (tag)"].map(String::from).to_vec()
        );
        assert!(ep_lanes("nothing here").is_empty());
    }
}
