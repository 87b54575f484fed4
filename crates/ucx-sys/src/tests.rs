//! The bindings against the UCX installed here: libucp opens, and a tagged
//! message goes from a worker to itself through a real endpoint, with the
//! same calls the transport makes.

use super::raw::*;
use super::*;
use std::ptr::{null, null_mut};

/// Drives `worker` until the request behind `p` completes; its status.
fn wait(u: &Ucp, worker: ucp_worker_h, p: ucs_status_ptr_t) -> ucs_status_t {
    match ptr_status(p) {
        PtrStatus::Done => ucs_status_t::UCS_OK,
        PtrStatus::Error(s) => s,
        PtrStatus::Pending(r) => loop {
            // SAFETY: a live worker and request of this test.
            unsafe {
                u.ucp_worker_progress(worker);
                let s = u.ucp_request_check_status(r);
                if s != ucs_status_t::UCS_INPROGRESS {
                    u.ucp_request_free(r);
                    return s;
                }
            }
        },
    }
}

#[test]
fn loads_and_says_its_version() {
    let u = load().expect("UCX is installed here (scripts/setup.sh)");
    let v = version(u);
    assert!(v.starts_with("1."), "{v}");
    assert_eq!(status_text(u, ucs_status_t::UCS_OK), "Success");
    assert_eq!(status_text(u, ucs_status_t::UCS_ERR_NO_DEVICE), "No such device");
    assert!(HEADERS_VERSION.is_some_and(|h| h.starts_with("1.")));
}

#[test]
fn a_missing_library_is_one_clear_line() {
    let e = open(&["libucp-not-here.so.0"]).err().unwrap();
    let line = e.to_string();
    assert!(line.starts_with("UCX is not available: cannot open libucp (libucp-not-here.so.0: "), "{line}");
    assert!(line.ends_with("install UCX (Debian: libucx0) or load its module"), "{line}");
    assert!(!line.contains('\n'));
    // A library without UCP's functions is refused the same way.
    let e = open(&["libc.so.6"]).err().unwrap().to_string();
    assert!(e.contains("libc.so.6: ") && e.contains("ucs_status_string"), "{e}");
    assert!(LoadError::NotBuilt.to_string().contains("built without UCX"));
}

#[test]
fn error_pointers_are_told_from_requests() {
    assert_eq!(ptr_status(null_mut()), PtrStatus::Done);
    let err = ucs_status_t::UCS_ERR_NO_MEMORY.0 as isize as *mut c_void;
    assert_eq!(ptr_status(err), PtrStatus::Error(ucs_status_t::UCS_ERR_NO_MEMORY));
    let last = ucs_status_t::UCS_ERR_LAST.0 as isize as *mut c_void;
    assert_eq!(ptr_status(last), PtrStatus::Error(ucs_status_t::UCS_ERR_LAST));
    let mut x = 0u64;
    let p = &mut x as *mut u64 as *mut c_void;
    assert_eq!(ptr_status(p), PtrStatus::Pending(p));
}

#[test]
fn a_tagged_message_reaches_its_own_worker() {
    let u = load().unwrap();
    // SAFETY: the UCP calls in their documented order, on zeroed parameter
    // structures whose field masks name the fields set.
    unsafe {
        let mut params: ucp_params_t = std::mem::zeroed();
        params.field_mask = UCP_PARAM_FIELD_FEATURES as u64;
        params.features = UCP_FEATURE_TAG as u64;
        let mut ctx = null_mut();
        assert_eq!(u.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, null(), &mut ctx), ucs_status_t::UCS_OK);
        let mut wp: ucp_worker_params_t = std::mem::zeroed();
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        let mut worker = null_mut();
        assert_eq!(u.ucp_worker_create(ctx, &wp, &mut worker), ucs_status_t::UCS_OK);
        let (mut addr, mut len) = (null_mut(), 0usize);
        assert_eq!(u.ucp_worker_get_address(worker, &mut addr, &mut len), ucs_status_t::UCS_OK);
        assert!(len > 0);
        let mut ep_params: ucp_ep_params_t = std::mem::zeroed();
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64;
        ep_params.address = addr;
        let mut ep = null_mut();
        assert_eq!(u.ucp_ep_create(worker, &ep_params, &mut ep), ucs_status_t::UCS_OK);

        let sent = *b"commbench over UCP";
        let mut got = [0u8; 18];
        let param: ucp_request_param_t = std::mem::zeroed();
        let r = u.ucp_tag_recv_nbx(worker, got.as_mut_ptr() as *mut c_void, got.len(), 42, u64::MAX, &param);
        let s = u.ucp_tag_send_nbx(ep, sent.as_ptr() as *const c_void, sent.len(), 42, &param);
        assert_eq!(wait(u, worker, s), ucs_status_t::UCS_OK);
        assert_eq!(wait(u, worker, r), ucs_status_t::UCS_OK);
        assert_eq!(got, sent);

        let mut close: ucp_request_param_t = std::mem::zeroed();
        close.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        close.flags = UCP_EP_CLOSE_FLAG_FORCE;
        wait(u, worker, u.ucp_ep_close_nbx(ep, &close));
        u.ucp_worker_release_address(worker, addr);
        u.ucp_worker_destroy(worker);
        u.ucp_cleanup(ctx);
    }
}
