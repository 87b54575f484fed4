//! Generates the UCP bindings from the UCX headers that pkg-config names
//! (`ucx.pc`, from libucx-dev or a site's UCX module). Nothing is linked:
//! libucp is opened at run time, so the MPI-only binaries start on a
//! machine without UCX. Without UCX headers the crate builds with no
//! bindings, says so once as a cargo warning, and every attempt to load
//! UCX reports that this build has none.

use std::env;
use std::path::PathBuf;

/// The UCP calls and types commbench uses (see src/lib.rs).
const FUNCTIONS: &[&str] = &[
    "ucp_init_version",
    "ucp_cleanup",
    "ucp_config_read",
    "ucp_config_release",
    "ucp_get_version",
    "ucp_get_version_string",
    "ucp_context_query",
    "ucp_worker_create",
    "ucp_worker_destroy",
    "ucp_worker_get_address",
    "ucp_worker_release_address",
    "ucp_worker_progress",
    "ucp_ep_create",
    "ucp_ep_close_nbx",
    "ucp_ep_print_info",
    "ucp_ep_query",
    "ucp_tag_send_nbx",
    "ucp_tag_recv_nbx",
    "ucp_request_check_status",
    "ucp_request_free",
    "ucs_status_string",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(ucx_headers)");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo::rerun-if-env-changed=UCX_PKG_CONFIG");
    let name = env::var("UCX_PKG_CONFIG").unwrap_or_else(|_| "ucx".into());
    let lib = match pkg_config::Config::new().cargo_metadata(false).env_metadata(false).probe(&name) {
        Ok(l) => l,
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("not found").to_string();
            println!(
                "cargo::warning=UCX headers not found (pkg-config {name}: {first}); building without the UCX \
                 backend (install libucx-dev or load a UCX module, then rebuild)"
            );
            return;
        }
    };
    let mut b = bindgen::Builder::default()
        .header_contents("ucx_wrapper.h", "#include <ucp/api/ucp.h>\n")
        .dynamic_library_name("Ucp")
        .dynamic_link_require_all(true)
        .allowlist_var("UCP_API_MAJOR|UCP_API_MINOR")
        .allowlist_type("ucp_.*_t|ucp_.*_field|ucp_.*_flags_t|ucp_params_field|ucp_feature|ucp_worker_params_field|ucp_ep_params_field|ucp_op_attr_t|ucs_status_t|ucs_thread_mode_t|ucp_ep_close_flags_t|ucp_err_handling_mode_t|ucp_ep_attr_field")
        .newtype_enum("ucs_status_t")
        .prepend_enum_name(false)
        .layout_tests(false)
        .generate_comments(false);
    for f in FUNCTIONS {
        b = b.allowlist_function(f);
    }
    for p in &lib.include_paths {
        b = b.clang_arg(format!("-I{}", p.display()));
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("ucp.rs");
    match b.generate() {
        Ok(bindings) => {
            bindings.write_to_file(&out).expect("write the UCP bindings");
            println!("cargo::rustc-cfg=ucx_headers");
            println!("cargo::rustc-env=COMMBENCH_UCX_HEADERS={}", lib.version);
            println!("cargo::metadata=headers={}", lib.version);
        }
        Err(e) => println!(
            "cargo::warning=cannot generate the UCP bindings from UCX {} ({e}); building without the UCX backend",
            lib.version
        ),
    }
}
