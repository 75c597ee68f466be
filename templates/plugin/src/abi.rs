//! Horon plugin ABI v1: the C layout shared by the host and a plugin.
//!
//! Mirrors the C header `horon_plugin_abi_v1.h` and the contract
//! (`horon-bundle docs abi-v1`).
//! The file uses nothing but `core`, so that `build.rs` and the test fixture
//! crates can include it as it is (`#[path = "…/abi.rs"] mod abi;`). Not every
//! crate that includes it uses every item, hence the `allow` below.
#![allow(dead_code)]

use core::ffi::{CStr, c_char, c_void};
use core::mem::offset_of;

#[cfg(not(target_pointer_width = "64"))]
compile_error!("Horon plugin ABI v1 is defined for 64-bit targets only");

/// ABI major version: a host and a plugin with different majors never talk.
pub const ABI_MAJOR: u16 = 1;
/// ABI minor version of this definition (additions only, at the end of the table).
pub const ABI_MINOR: u16 = 0;
/// Wire schema of the JSON exchanged through `start`/`next`.
pub const WIRE_SCHEMA: &str = "horon.wire.v1";
/// The same, NUL-terminated, as the handshake table points at it.
pub const WIRE_SCHEMA_C: &CStr = c"horon.wire.v1";
/// The one exported symbol.
pub const ENTRY_SYMBOL: &str = "horon_agent_plugin_get_api_v1";

/// `format` of the JSON held in the static metadata section.
pub const SECTION_FORMAT: &str = "horon.abi.v1";
/// Section name for ELF and PE libraries.
pub const SECTION_NAME_ELF_PE: &str = ".horon_abi";
/// Segment and section for Mach-O libraries.
pub const SECTION_NAME_MACHO: &str = "__DATA,__horon_abi";

/// Bytes of `HoronHostRequestV1` a v1 plugin needs (`struct_size` >= this).
pub const HOST_REQUEST_V1_SIZE: u32 = 24;
/// Bytes of `HoronPluginApiV1` a v1 plugin writes (capacity >= this).
pub const PLUGIN_API_V1_SIZE: u32 = 104;

/// Largest request (`start`) or frame (`next`) a host accepts: 64 MiB.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

// Handshake status codes. The values are fixed and the checks run in this
// order; the first failing check decides the answer.
pub const STATUS_OK: i32 = 0;
/// `req` or `out` is NULL.
pub const STATUS_NULL_POINTER: i32 = 1;
/// `req->struct_size` < 24.
pub const STATUS_STRUCT_TOO_SHORT: i32 = 2;
/// `req->abi_major` != 1.
pub const STATUS_ABI_MAJOR_MISMATCH: i32 = 3;
/// `req->wire_schema` is NULL or not `horon.wire.v1`.
pub const STATUS_WIRE_SCHEMA_MISMATCH: i32 = 4;
/// `out_capacity` < 104.
pub const STATUS_CAPACITY_TOO_SMALL: i32 = 5;
/// A token of `req->required_features` is not in the advertised list.
pub const STATUS_FEATURE_MISSING: i32 = 6;

// Return values of the nine entries. The ABI fixes only the sign: 0 is
// success, `next` returns 1 for "no more frames", anything negative is an
// error. The negative values below are the template's own convention, which
// the test fixtures share; a host must treat every negative value as an error.
pub const NEXT_FRAME: i32 = 0;
pub const NEXT_NO_MORE: i32 = 1;
/// A required pointer argument is NULL.
pub const ERR_NULL_ARGUMENT: i32 = -1;
/// Malformed input: not UTF-8, not strict JSON, wrong shape, empty directory,
/// malformed feature list.
pub const ERR_INVALID: i32 = -2;
/// A request kind or tool name this plugin does not offer.
pub const ERR_UNSUPPORTED: i32 = -3;
/// The create grant names a feature this library does not provide.
pub const ERR_FEATURE: i32 = -4;
/// No operation with that id on this instance.
pub const ERR_UNKNOWN_OP: i32 = -5;
/// The instance already has its maximum of active operations (64).
pub const ERR_BUSY: i32 = -6;
/// `start` after `shutdown`.
pub const ERR_SHUT_DOWN: i32 = -7;
/// A request above the 64 MiB message limit.
pub const ERR_TOO_LARGE: i32 = -8;

/// Active (started, not yet released) operations one instance admits.
pub const MAX_ACTIVE_OPS_PER_INSTANCE: usize = 64;

/// Names of the status codes, indexed by code.
pub const STATUS_NAMES: [&str; 7] = [
    "OK",
    "NULL_POINTER",
    "STRUCT_TOO_SHORT",
    "ABI_MAJOR_MISMATCH",
    "WIRE_SCHEMA_MISMATCH",
    "CAPACITY_TOO_SMALL",
    "FEATURE_MISSING",
];

/// What the host asks for. 24 bytes on 64-bit targets.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HoronHostRequestV1 {
    /// Bytes the host filled in; at least 24 for v1. A newer host may send
    /// more: a v1 plugin reads only the prefix it knows.
    pub struct_size: u32,
    pub abi_major: u16,
    /// Informational only: never a reason to refuse.
    pub host_api_minor: u16,
    /// NUL-terminated; NULL counts as a mismatch.
    pub wire_schema: *const c_char,
    /// NUL-terminated comma-separated feature list; NULL means none.
    pub required_features: *const c_char,
}

/// A byte buffer handed out by the plugin. The host gives it back, exactly
/// as received, through `free_buffer`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HoronBuf {
    pub ptr: *mut u8,
    pub len: usize,
}

impl HoronBuf {
    pub const EMPTY: HoronBuf = HoronBuf {
        ptr: core::ptr::null_mut(),
        len: 0,
    };
}

pub type HoronCreateFn = unsafe extern "C" fn(
    config_json: *const u8,
    config_len: usize,
    instance_dir: *const c_char,
    config_dir: *const c_char,
    features: *const c_char,
    instance_out: *mut *mut c_void,
) -> i32;
pub type HoronDescribeFn = unsafe extern "C" fn(instance: *mut c_void, out: *mut HoronBuf) -> i32;
pub type HoronStartFn = unsafe extern "C" fn(
    instance: *mut c_void,
    request_json: *const u8,
    len: usize,
    op_out: *mut u64,
) -> i32;
pub type HoronNextFn =
    unsafe extern "C" fn(instance: *mut c_void, op: u64, frame_out: *mut HoronBuf) -> i32;
pub type HoronCancelFn = unsafe extern "C" fn(instance: *mut c_void, op: u64) -> i32;
pub type HoronReleaseFn = unsafe extern "C" fn(instance: *mut c_void, op: u64) -> i32;
pub type HoronShutdownFn = unsafe extern "C" fn(instance: *mut c_void) -> i32;
pub type HoronDestroyFn = unsafe extern "C" fn(instance: *mut c_void);
pub type HoronFreeBufferFn = unsafe extern "C" fn(buf: HoronBuf);

/// What the plugin fills in. 104 bytes on 64-bit targets. Entries are
/// `Option`s so that a NULL entry (a broken plugin) is representable; a
/// conformant plugin fills in all nine.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HoronPluginApiV1 {
    /// Bytes written: 104.
    pub struct_size: u32,
    pub abi_major: u16,
    pub abi_minor: u16,
    /// Static for the library's lifetime.
    pub wire_schema: *const c_char,
    /// The advertised feature list, static.
    pub features: *const c_char,
    /// Static.
    pub plugin_id: *const c_char,
    pub create: Option<HoronCreateFn>,
    pub describe: Option<HoronDescribeFn>,
    pub start: Option<HoronStartFn>,
    pub next: Option<HoronNextFn>,
    pub cancel: Option<HoronCancelFn>,
    pub release: Option<HoronReleaseFn>,
    pub shutdown: Option<HoronShutdownFn>,
    pub destroy: Option<HoronDestroyFn>,
    pub free_buffer: Option<HoronFreeBufferFn>,
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

// The layout is the contract: a change here is a new ABI, so it must not compile.
const _: () = {
    assert!(size_of::<HoronHostRequestV1>() == HOST_REQUEST_V1_SIZE as usize);
    assert!(size_of::<HoronHostRequestV1>() == 24);
    assert!(offset_of!(HoronHostRequestV1, struct_size) == 0);
    assert!(offset_of!(HoronHostRequestV1, abi_major) == 4);
    assert!(offset_of!(HoronHostRequestV1, host_api_minor) == 6);
    assert!(offset_of!(HoronHostRequestV1, wire_schema) == 8);
    assert!(offset_of!(HoronHostRequestV1, required_features) == 16);

    assert!(size_of::<HoronBuf>() == 16);
    assert!(offset_of!(HoronBuf, ptr) == 0);
    assert!(offset_of!(HoronBuf, len) == 8);

    assert!(size_of::<HoronPluginApiV1>() == PLUGIN_API_V1_SIZE as usize);
    assert!(size_of::<HoronPluginApiV1>() == 104);
    assert!(offset_of!(HoronPluginApiV1, struct_size) == 0);
    assert!(offset_of!(HoronPluginApiV1, abi_major) == 4);
    assert!(offset_of!(HoronPluginApiV1, abi_minor) == 6);
    assert!(offset_of!(HoronPluginApiV1, wire_schema) == 8);
    assert!(offset_of!(HoronPluginApiV1, features) == 16);
    assert!(offset_of!(HoronPluginApiV1, plugin_id) == 24);
    assert!(offset_of!(HoronPluginApiV1, create) == 32);
    assert!(offset_of!(HoronPluginApiV1, describe) == 40);
    assert!(offset_of!(HoronPluginApiV1, start) == 48);
    assert!(offset_of!(HoronPluginApiV1, next) == 56);
    assert!(offset_of!(HoronPluginApiV1, cancel) == 64);
    assert!(offset_of!(HoronPluginApiV1, release) == 72);
    assert!(offset_of!(HoronPluginApiV1, shutdown) == 80);
    assert!(offset_of!(HoronPluginApiV1, destroy) == 88);
    assert!(offset_of!(HoronPluginApiV1, free_buffer) == 96);
    // A NULL entry must be representable as `None`.
    assert!(size_of::<Option<HoronFreeBufferFn>>() == size_of::<*const c_void>());

    assert!(bytes_eq(WIRE_SCHEMA_C.to_bytes(), WIRE_SCHEMA.as_bytes()));
    assert!(STATUS_NAMES.len() == STATUS_FEATURE_MISSING as usize + 1);
};
