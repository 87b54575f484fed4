//! The NVLinks of each GPU, from NVML (`libnvidia-ml.so.1`, opened at run
//! time so that commbench starts where there is none): for every link of a
//! GPU whether it is up, its NVLink version and the PCI device at its far
//! end. Only the few calls that answers need, with nvml.h's signatures:
//!
//! - `nvmlInit_v2(void)`, `nvmlShutdown(void)`;
//! - `nvmlDeviceGetHandleByPciBusId_v2(const char *busId, nvmlDevice_t *)`;
//! - `nvmlDeviceGetNvLinkState(nvmlDevice_t, unsigned link, nvmlEnableState_t *)`
//!   (`NVML_FEATURE_ENABLED` = 1 means up);
//! - `nvmlDeviceGetNvLinkVersion(nvmlDevice_t, unsigned link, unsigned *)`;
//! - `nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t, unsigned link, nvmlPciInfo_t *)`.
//!
//! Links are numbered below `NVML_NVLINK_MAX_LINKS` (18 in current
//! headers); a link the GPU does not have answers an error and is skipped.
//! The far end is a GPU when NVML has a handle for its bus id, else
//! another NVLink device (an NVSwitch on the boxes that have them).
//! `COMMBENCH_NVML` names the library file instead of the loader's search.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};

use libloading::Library;

/// `NVML_NVLINK_MAX_LINKS` of nvml.h (CUDA 12).
pub(crate) const MAX_LINKS: u32 = 18;

/// `nvmlReturn_t` values used here.
pub(crate) const NVML_SUCCESS: c_int = 0;

/// `nvmlPciInfo_t` as the `_v2` and later calls fill it.
#[repr(C)]
struct PciInfo {
    bus_id_legacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pci_device_id: c_uint,
    pci_sub_system_id: c_uint,
    bus_id: [c_char; 32],
}

/// One link that is up.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActiveLink {
    pub link: u32,
    /// What `nvmlDeviceGetNvLinkVersion` returned (an `nvmlNvlinkVersion_t`).
    pub version: u32,
    /// The far end's bus id, `0000:3b:00.0`.
    pub remote_bus_id: String,
    /// Whether NVML knows the far end as a GPU.
    pub remote_is_gpu: bool,
}

/// The links of one GPU that are up.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GpuLinks {
    pub bus_id: String,
    pub active: Vec<ActiveLink>,
}

type InitFn = unsafe extern "C" fn() -> c_int;
type HandleFn = unsafe extern "C" fn(*const c_char, *mut *mut c_void) -> c_int;
type StateFn = unsafe extern "C" fn(*mut c_void, c_uint, *mut c_uint) -> c_int;
type VersionFn = unsafe extern "C" fn(*mut c_void, c_uint, *mut c_uint) -> c_int;
type RemoteFn = unsafe extern "C" fn(*mut c_void, c_uint, *mut PciInfo) -> c_int;

/// The library to open: `COMMBENCH_NVML`, else the loader's name.
fn library_name() -> std::ffi::OsString {
    std::env::var_os("COMMBENCH_NVML").filter(|v| !v.is_empty()).unwrap_or_else(|| "libnvidia-ml.so.1".into())
}

fn text(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The kernel driver's version as NVML gives it (`550.54.15`); Err is one
/// line saying why NVML cannot tell.
pub fn driver_version() -> Result<String, String> {
    type DriverVersionFn = unsafe extern "C" fn(*mut c_char, c_uint) -> c_int;
    let name = library_name();
    // SAFETY: opening a library runs its initialisers; we open only the
    // NVML library by its name or the file COMMBENCH_NVML names.
    let lib = unsafe { Library::new(&name) }.map_err(|_| "NVML not found".to_string())?;
    // SAFETY: each symbol is read with nvml.h's signature for it, and the
    // copies live no longer than `lib`.
    let (init, shutdown, get) = unsafe {
        (
            *lib.get::<InitFn>(b"nvmlInit_v2\0").map_err(|_| "NVML lacks nvmlInit_v2".to_string())?,
            *lib.get::<InitFn>(b"nvmlShutdown\0").map_err(|_| "NVML lacks nvmlShutdown".to_string())?,
            *lib.get::<DriverVersionFn>(b"nvmlSystemGetDriverVersion\0")
                .map_err(|_| "NVML lacks nvmlSystemGetDriverVersion".to_string())?,
        )
    };
    // SAFETY: nvmlInit_v2 takes nothing.
    let rc = unsafe { init() };
    if rc != NVML_SUCCESS {
        return Err(format!("NVML cannot start (nvmlInit_v2 returned {rc})"));
    }
    // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80.
    let mut buf = [0 as c_char; 80];
    // SAFETY: NVML writes at most `len` bytes, NUL included.
    let rc = unsafe { get(buf.as_mut_ptr(), buf.len() as c_uint) };
    // SAFETY: balances the init above.
    unsafe { shutdown() };
    if rc != NVML_SUCCESS {
        return Err(format!("nvmlSystemGetDriverVersion returned {rc}"));
    }
    Ok(text(&buf))
}

/// The links of the GPUs with these bus ids (as CUDA gives them); Err is
/// one line saying why NVML cannot tell (not found, cannot start, a GPU it
/// does not know).
pub fn links(bus_ids: &[String]) -> Result<Vec<GpuLinks>, String> {
    let name = library_name();
    if let Some(e) = crate::gpu::nccl_lib::named_not_regular(std::path::Path::new(&name)) {
        return Err(format!("NVML not found (COMMBENCH_NVML={}: {e})", std::path::Path::new(&name).display()));
    }
    // SAFETY: opening a library runs its initialisers; we open only the
    // NVML library by its name or the file COMMBENCH_NVML names.
    let lib = unsafe { Library::new(&name) }
        .map_err(|e| format!("NVML not found ({})", e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")))?;
    let missing = |n: &str| format!("NVML lacks {n}");
    // SAFETY: each symbol is read with nvml.h's signature for it, and the
    // copies live no longer than `lib`, which this function holds.
    let (init, shutdown, handle, state, version, remote) = unsafe {
        (
            *lib.get::<InitFn>(b"nvmlInit_v2\0").map_err(|_| missing("nvmlInit_v2"))?,
            *lib.get::<InitFn>(b"nvmlShutdown\0").map_err(|_| missing("nvmlShutdown"))?,
            *lib.get::<HandleFn>(b"nvmlDeviceGetHandleByPciBusId_v2\0")
                .map_err(|_| missing("nvmlDeviceGetHandleByPciBusId_v2"))?,
            *lib.get::<StateFn>(b"nvmlDeviceGetNvLinkState\0").map_err(|_| missing("nvmlDeviceGetNvLinkState"))?,
            *lib.get::<VersionFn>(b"nvmlDeviceGetNvLinkVersion\0")
                .map_err(|_| missing("nvmlDeviceGetNvLinkVersion"))?,
            *lib.get::<RemoteFn>(b"nvmlDeviceGetNvLinkRemotePciInfo_v2\0")
                .map_err(|_| missing("nvmlDeviceGetNvLinkRemotePciInfo_v2"))?,
        )
    };
    // SAFETY: nvmlInit_v2 takes nothing.
    let rc = unsafe { init() };
    if rc != NVML_SUCCESS {
        return Err(format!("NVML cannot start (nvmlInit_v2 returned {rc})"));
    }
    let handle_of = |bus: &str| -> Result<*mut c_void, c_int> {
        let c = CString::new(bus).map_err(|_| 2)?;
        let mut h: *mut c_void = std::ptr::null_mut();
        // SAFETY: a NUL-terminated id and a place for the handle.
        let rc = unsafe { handle(c.as_ptr(), &mut h) };
        if rc == NVML_SUCCESS {
            Ok(h)
        } else {
            Err(rc)
        }
    };
    let mut out = Vec::new();
    let mut failed = None;
    for bus in bus_ids {
        let h = match handle_of(bus) {
            Ok(h) => h,
            Err(rc) => {
                failed = Some(format!("NVML has no GPU {bus} (nvmlDeviceGetHandleByPciBusId_v2 returned {rc})"));
                break;
            }
        };
        let mut g = GpuLinks { bus_id: bus.clone(), active: Vec::new() };
        for link in 0..MAX_LINKS {
            let mut up: c_uint = 0;
            // SAFETY: a handle NVML gave and a place for the state.
            if unsafe { state(h, link, &mut up) } != NVML_SUCCESS || up != 1 {
                continue;
            }
            let mut v: c_uint = 0;
            // SAFETY: as above.
            let rc = unsafe { version(h, link, &mut v) };
            let v = if rc == NVML_SUCCESS { v } else { 0 };
            // SAFETY: a zeroed nvmlPciInfo_t for NVML to fill.
            let mut pci: PciInfo = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            if unsafe { remote(h, link, &mut pci) } != NVML_SUCCESS {
                continue;
            }
            let remote_bus_id = super::bus_id::normalize(&text(&pci.bus_id))
                .unwrap_or_else(|| format!("{:04x}:{:02x}:{:02x}.0", pci.domain, pci.bus, pci.device));
            let remote_is_gpu = handle_of(&remote_bus_id).is_ok();
            g.active.push(ActiveLink { link, version: v, remote_bus_id, remote_is_gpu });
        }
        out.push(g);
    }
    // SAFETY: balances the nvmlInit_v2 above.
    unsafe { shutdown() };
    match failed {
        Some(why) => Err(why),
        None => Ok(out),
    }
}
