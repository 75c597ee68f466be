//! The Horon example plugin: a `cdylib` exporting exactly one symbol,
//! `horon_agent_plugin_get_api_v1`, the ABI v1 handshake (the C header is
//! `horon_plugin_abi_v1.h`; `horon-bundle docs abi-v1` has the whole contract).
//!
//! Module layout, chosen so that other crates (the test fixtures, a product
//! plugin started from this template) can reuse the pieces with
//! `#[path = "…"] mod …;`:
//! - `abi`: the C layout, status codes and constants (shared, unchanged);
//! - `generated`: what `build.rs` derived from horon-release.toml (the plugin
//!   id, written there and nowhere else) and the compiled features: the
//!   advertised feature list and the section JSON;
//! - `plugin`: handshake checks and the nine entries;
//! - `section`: the static metadata section.

pub mod abi;
mod generated {
    include!(concat!(env!("OUT_DIR"), "/horon_plugin_meta.rs"));
}
mod plugin;
mod section;

/// The ABI v1 handshake: checks `req` in the contract's order and, on
/// success, writes the 104-byte function table to `out`.
///
/// # Safety
/// `req` and `out` are NULL or valid for their declared sizes; strings in
/// `req` are NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horon_agent_plugin_get_api_v1(
    req: *const abi::HoronHostRequestV1,
    out: *mut abi::HoronPluginApiV1,
    out_capacity: u32,
) -> i32 {
    section::keep();
    // SAFETY: forwarded from the caller.
    unsafe { plugin::get_api(req, out, out_capacity) }
}
