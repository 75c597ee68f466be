//! The plugin behind the table: the ABI v1 handshake and the nine entries.
//!
//! Written to be reused: a test fixture crate includes this file with
//! `#[path = "…/templates/plugin/src/plugin.rs"] mod plugin;` next to its own
//! `generated` and `abi` modules, and alters one piece (a table entry, a
//! frame, the order of the checks) around it. It needs from the including
//! crate: `crate::abi` (the shared `abi.rs`) and `crate::generated::{FEATURES,
//! FEATURES_C, PLUGIN_ID, PLUGIN_ID_C}` (from `build.rs`).
//!
//! Nothing here may unwind across the C ABI: the entries avoid every
//! panicking operation (no `unwrap`, no unchecked indexing, no overflow), and
//! the release profile aborts on panic anyway.
//!
//! Items here are public for the fixtures; the template itself does not use
//! every one, hence the `allow`.
#![allow(dead_code)]

use core::ffi::{CStr, c_char, c_void};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::abi::{self, HoronBuf, HoronHostRequestV1, HoronPluginApiV1};
use crate::generated;
use crate::generated::PLUGIN_ID;

#[path = "json.rs"]
pub mod json;

/// The one tool every template-built plugin offers: `<id>__whoami`.
pub const WHOAMI: &str = "whoami";

// ---------------------------------------------------------------------------
// Handshake
// ---------------------------------------------------------------------------

/// The table this library hands out: the advertised features and id come from
/// `build.rs`, i.e. from what this build compiled.
pub fn table() -> HoronPluginApiV1 {
    HoronPluginApiV1 {
        struct_size: abi::PLUGIN_API_V1_SIZE,
        abi_major: abi::ABI_MAJOR,
        abi_minor: abi::ABI_MINOR,
        wire_schema: abi::WIRE_SCHEMA_C.as_ptr(),
        features: generated::FEATURES_C.as_ptr(),
        plugin_id: generated::PLUGIN_ID_C.as_ptr(),
        create: Some(create),
        describe: Some(describe),
        start: Some(start),
        next: Some(next),
        cancel: Some(cancel),
        release: Some(release),
        shutdown: Some(shutdown),
        destroy: Some(destroy),
        free_buffer: Some(free_buffer),
    }
}

/// True when every comma-separated token of `required` is a token of
/// `advertised`. An empty `required` asks for nothing; an empty token (as in
/// `"a,,b"` or `"a,"`) is never advertised, so a malformed list cannot pass.
pub fn features_provided(required: &[u8], advertised: &[u8]) -> bool {
    required.is_empty()
        || required.split(|b| *b == b',').all(|want| {
            !want.is_empty() && advertised.split(|b| *b == b',').any(|have| have == want)
        })
}

/// The handshake checks, in the fixed order of the contract; the first failing
/// check decides the answer. Reads nothing but `req` and the strings it names.
///
/// # Safety
/// `req`, when not NULL, must point at `struct_size` readable bytes, and the
/// strings it names must be NUL-terminated.
pub unsafe fn check_request(
    req: *const HoronHostRequestV1,
    out: *mut HoronPluginApiV1,
    out_capacity: u32,
    advertised: &CStr,
) -> i32 {
    if req.is_null() || out.is_null() {
        return abi::STATUS_NULL_POINTER;
    }
    // SAFETY: a non-NULL request has at least its first field; read it alone
    // before trusting the rest.
    let struct_size = unsafe { req.cast::<u32>().read_unaligned() };
    if struct_size < abi::HOST_REQUEST_V1_SIZE {
        return abi::STATUS_STRUCT_TOO_SHORT;
    }
    // SAFETY: struct_size says the 24-byte v1 prefix is there.
    let r = unsafe { req.read_unaligned() };
    if r.abi_major != abi::ABI_MAJOR {
        return abi::STATUS_ABI_MAJOR_MISMATCH;
    }
    // SAFETY: the contract makes wire_schema NUL-terminated when not NULL.
    if r.wire_schema.is_null() || unsafe { CStr::from_ptr(r.wire_schema) } != abi::WIRE_SCHEMA_C {
        return abi::STATUS_WIRE_SCHEMA_MISMATCH;
    }
    if out_capacity < abi::PLUGIN_API_V1_SIZE {
        return abi::STATUS_CAPACITY_TOO_SMALL;
    }
    if !r.required_features.is_null() {
        // SAFETY: as above.
        let required = unsafe { CStr::from_ptr(r.required_features) };
        if !features_provided(required.to_bytes(), advertised.to_bytes()) {
            return abi::STATUS_FEATURE_MISSING;
        }
    }
    abi::STATUS_OK
}

/// The handshake for a given table: check, then write exactly the table's
/// 104 bytes. On any refusal `*out` is untouched. Pure metadata: no instance,
/// no allocation, no file, no socket.
///
/// # Safety
/// As `check_request`; `out`, when not NULL, must point at `out_capacity`
/// writable bytes.
pub unsafe fn get_api_with(
    req: *const HoronHostRequestV1,
    out: *mut HoronPluginApiV1,
    out_capacity: u32,
    table: &HoronPluginApiV1,
) -> i32 {
    let advertised = if table.features.is_null() {
        c""
    } else {
        // SAFETY: table strings are static NUL-terminated constants.
        unsafe { CStr::from_ptr(table.features) }
    };
    // SAFETY: forwarded from the caller.
    let status = unsafe { check_request(req, out, out_capacity, advertised) };
    if status == abi::STATUS_OK {
        // SAFETY: checked non-NULL and at least 104 bytes of capacity.
        unsafe { out.write_unaligned(*table) };
    }
    status
}

/// `horon_agent_plugin_get_api_v1` of a template-built plugin.
///
/// # Safety
/// As `get_api_with`.
pub unsafe fn get_api(
    req: *const HoronHostRequestV1,
    out: *mut HoronPluginApiV1,
    out_capacity: u32,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { get_api_with(req, out, out_capacity, &table()) }
}

// ---------------------------------------------------------------------------
// Instances, operations, frames
// ---------------------------------------------------------------------------

/// Everything the host hands over in `create`, copied: nothing else crosses.
pub struct Grant {
    pub config_json: Vec<u8>,
    pub instance_dir: Vec<u8>,
    pub config_dir: Vec<u8>,
    /// Features enabled for this instance: sorted, unique, all advertised.
    pub features: Vec<String>,
}

impl Grant {
    pub fn enables(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }
}

pub struct Instance {
    pub grant: Grant,
    pub state: Mutex<State>,
}

impl Instance {
    /// The state lock. A poisoned lock is still usable: the state holds no
    /// invariant a panic could break half-way, and we never unwind anyway.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Default)]
pub struct State {
    /// Active operations by id (ids start at 1 and are never reused).
    pub ops: BTreeMap<u64, Op>,
    pub last_op: u64,
    pub shut_down: bool,
}

/// One operation: the frames still to hand out and the next sequence number.
pub struct Op {
    pub pending: VecDeque<Frame>,
    pub next_seq: u64,
    pub terminal_sent: bool,
}

impl Op {
    /// Ends the operation early: unsent frames are dropped and replaced by one
    /// terminal `error` frame, unless the terminal frame is already out.
    pub fn abort_with(&mut self, code: &str, message: &str) {
        if !self.terminal_sent {
            self.pending.clear();
            self.pending.push_back(Frame::error(code, message));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FrameKind {
    ToolEnvelope,
    Done,
    Error,
}

impl FrameKind {
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::ToolEnvelope => "tool_envelope",
            FrameKind::Done => "done",
            FrameKind::Error => "error",
        }
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, FrameKind::ToolEnvelope)
    }
}

/// A frame before it gets its sequence number: `body` is JSON text or absent.
pub struct Frame {
    pub kind: FrameKind,
    pub body: Option<String>,
}

impl Frame {
    pub fn envelope(body: String) -> Frame {
        Frame {
            kind: FrameKind::ToolEnvelope,
            body: Some(body),
        }
    }

    pub fn done() -> Frame {
        Frame {
            kind: FrameKind::Done,
            body: None,
        }
    }

    pub fn error(code: &str, message: &str) -> Frame {
        let mut body = String::from("{\"code\":");
        json::push_str(&mut body, code);
        body.push_str(",\"message\":");
        json::push_str(&mut body, message);
        body.push('}');
        Frame {
            kind: FrameKind::Error,
            body: Some(body),
        }
    }

    /// `{"seq":N,"kind":"…"}` or `{"seq":N,"kind":"…","body":…}`.
    pub fn render(&self, seq: u64) -> String {
        let mut s = String::from("{\"seq\":");
        s.push_str(&seq.to_string());
        s.push_str(",\"kind\":");
        json::push_str(&mut s, self.kind.name());
        if let Some(body) = &self.body {
            s.push_str(",\"body\":");
            s.push_str(body);
        }
        s.push('}');
        s
    }
}

/// Hands `bytes` to the host as a plugin-owned buffer (a boxed slice);
/// `free_buffer` rebuilds the box and drops it.
pub fn into_buf(bytes: Vec<u8>) -> HoronBuf {
    let boxed: Box<[u8]> = bytes.into_boxed_slice();
    let len = boxed.len();
    HoronBuf {
        ptr: Box::into_raw(boxed).cast::<u8>(),
        len,
    }
}

/// The instance behind a handle from `create`.
///
/// # Safety
/// `instance` is NULL or a live handle from this library's `create`.
pub unsafe fn instance_ref<'a>(instance: *mut c_void) -> Option<&'a Instance> {
    // SAFETY: see above.
    unsafe { instance.cast::<Instance>().cast_const().as_ref() }
}

/// The bytes of a NUL-terminated string, or None for NULL.
unsafe fn c_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the contract makes every string argument NUL-terminated.
        Some(unsafe { CStr::from_ptr(p) }.to_bytes())
    }
}

/// A well-formed feature list (`""` or sorted unique `[a-z0-9][a-z0-9_-]*`
/// tokens joined by commas), split.
pub fn parse_feature_list(list: &[u8]) -> Option<Vec<String>> {
    let text = core::str::from_utf8(list).ok()?;
    if text.is_empty() {
        return Some(Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    for token in text.split(',') {
        let mut bytes = token.bytes();
        let first_ok = matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'));
        let rest_ok = bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'));
        let ordered = out.last().is_none_or(|prev| prev.as_str() < token);
        if !(first_ok && rest_ok && ordered) {
            return None;
        }
        out.push(token.to_string());
    }
    Some(out)
}

pub fn tool_name(tool: &str) -> String {
    format!("{PLUGIN_ID}__{tool}")
}

// ---------------------------------------------------------------------------
// The nine entries
// ---------------------------------------------------------------------------

/// Copies the grant into a new instance. No login, no socket, no file: the
/// directories are remembered, not touched. On failure `*instance_out` is
/// untouched.
///
/// # Safety
/// Pointers as in the contract: `config_json` readable for `config_len`
/// bytes, strings NUL-terminated, `instance_out` writable.
pub unsafe extern "C" fn create(
    config_json: *const u8,
    config_len: usize,
    instance_dir: *const c_char,
    config_dir: *const c_char,
    features: *const c_char,
    instance_out: *mut *mut c_void,
) -> i32 {
    if config_json.is_null() || instance_out.is_null() {
        return abi::ERR_NULL_ARGUMENT;
    }
    // SAFETY: strings per the contract.
    let (Some(instance_dir), Some(config_dir), Some(features)) = (
        unsafe { c_bytes(instance_dir) },
        unsafe { c_bytes(config_dir) },
        unsafe { c_bytes(features) },
    ) else {
        return abi::ERR_NULL_ARGUMENT;
    };
    if config_len > abi::MAX_MESSAGE_BYTES {
        return abi::ERR_TOO_LARGE;
    }
    // SAFETY: readable for config_len bytes per the contract.
    let config = unsafe { core::slice::from_raw_parts(config_json, config_len) };
    if !matches!(json::parse(config), Some(json::Value::Object(_))) {
        return abi::ERR_INVALID;
    }
    if instance_dir.is_empty() || config_dir.is_empty() {
        return abi::ERR_INVALID;
    }
    let Some(features) = parse_feature_list(features) else {
        return abi::ERR_INVALID;
    };
    if !features
        .iter()
        .all(|f| generated::FEATURES.contains(&f.as_str()))
    {
        return abi::ERR_FEATURE;
    }
    let instance = Box::new(Instance {
        grant: Grant {
            config_json: config.to_vec(),
            instance_dir: instance_dir.to_vec(),
            config_dir: config_dir.to_vec(),
            features,
        },
        state: Mutex::new(State::default()),
    });
    // SAFETY: checked non-NULL.
    unsafe { instance_out.write(Box::into_raw(instance).cast::<c_void>()) };
    0
}

/// `{"id":…,"version":…,"features":[…],"tools":[…]}` of this library.
pub fn describe_json() -> String {
    let mut s = String::from("{\"id\":");
    json::push_str(&mut s, PLUGIN_ID);
    s.push_str(",\"version\":");
    json::push_str(&mut s, env!("CARGO_PKG_VERSION"));
    s.push_str(",\"features\":");
    json::push_str_array(&mut s, generated::FEATURES.iter().copied());
    s.push_str(",\"tools\":[{\"name\":");
    json::push_str(&mut s, &tool_name(WHOAMI));
    s.push_str(
        ",\"description\":\"Reports the plugin id, version and features; a greeting when \
         the greeting feature is enabled, the unix time when the clock feature is enabled.\",\
         \"input_schema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}}]}",
    );
    s
}

/// # Safety
/// `instance` from `create`; `out` writable.
pub unsafe extern "C" fn describe(instance: *mut c_void, out: *mut HoronBuf) -> i32 {
    // SAFETY: per the contract.
    if unsafe { instance_ref(instance) }.is_none() || out.is_null() {
        return abi::ERR_NULL_ARGUMENT;
    }
    // SAFETY: checked non-NULL.
    unsafe { out.write(into_buf(describe_json().into_bytes())) };
    0
}

/// The whoami result: the product's own envelope body.
pub fn whoami_body(instance: &Instance) -> String {
    let mut s = String::from("{\"id\":");
    json::push_str(&mut s, PLUGIN_ID);
    s.push_str(",\"version\":");
    json::push_str(&mut s, env!("CARGO_PKG_VERSION"));
    s.push_str(",\"features\":");
    json::push_str_array(&mut s, generated::FEATURES.iter().copied());
    s.push_str(",\"enabled\":");
    json::push_str_array(&mut s, instance.grant.features.iter().map(String::as_str));
    if instance.grant.enables("greeting") {
        s.push_str(",\"greeting\":");
        json::push_str(&mut s, &format!("hello from {PLUGIN_ID}"));
    }
    if instance.grant.enables("clock") {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        s.push_str(",\"unix_time\":");
        s.push_str(&now.to_string());
    }
    s.push('}');
    s
}

/// Reads a `tool_call` request and runs it: the frames it will hand out, or a
/// negative code. Exactly the keys `kind`, `name`, `arguments` are accepted.
pub fn plan_request(instance: &Instance, request: &[u8]) -> Result<VecDeque<Frame>, i32> {
    let Some(json::Value::Object(members)) = json::parse(request) else {
        return Err(abi::ERR_INVALID);
    };
    if members
        .iter()
        .any(|(k, _)| !matches!(k.as_str(), "kind" | "name" | "arguments"))
    {
        return Err(abi::ERR_INVALID);
    }
    let get = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let (
        Some(json::Value::String(kind)),
        Some(json::Value::String(name)),
        Some(json::Value::Object(args)),
    ) = (get("kind"), get("name"), get("arguments"))
    else {
        return Err(abi::ERR_INVALID);
    };
    if kind != "tool_call" || *name != tool_name(WHOAMI) {
        return Err(abi::ERR_UNSUPPORTED);
    }
    let mut frames = VecDeque::new();
    if args.is_empty() {
        frames.push_back(Frame::envelope(whoami_body(instance)));
        frames.push_back(Frame::done());
    } else {
        frames.push_back(Frame::error(
            "invalid_arguments",
            "whoami takes no arguments",
        ));
    }
    Ok(frames)
}

/// # Safety
/// `instance` from `create`; `request_json` readable for `len` bytes;
/// `op_out` writable.
pub unsafe extern "C" fn start(
    instance: *mut c_void,
    request_json: *const u8,
    len: usize,
    op_out: *mut u64,
) -> i32 {
    // SAFETY: per the contract.
    let Some(inst) = (unsafe { instance_ref(instance) }) else {
        return abi::ERR_NULL_ARGUMENT;
    };
    if request_json.is_null() || op_out.is_null() {
        return abi::ERR_NULL_ARGUMENT;
    }
    if len > abi::MAX_MESSAGE_BYTES {
        return abi::ERR_TOO_LARGE;
    }
    // SAFETY: readable for len bytes per the contract.
    let request = unsafe { core::slice::from_raw_parts(request_json, len) };
    let mut state = inst.lock();
    if state.shut_down {
        return abi::ERR_SHUT_DOWN;
    }
    if state.ops.len() >= abi::MAX_ACTIVE_OPS_PER_INSTANCE {
        return abi::ERR_BUSY;
    }
    let frames = match plan_request(inst, request) {
        Ok(frames) => frames,
        Err(code) => return code,
    };
    let Some(id) = state.last_op.checked_add(1) else {
        return abi::ERR_BUSY;
    };
    state.last_op = id;
    state.ops.insert(
        id,
        Op {
            pending: frames,
            next_seq: 0,
            terminal_sent: false,
        },
    );
    // SAFETY: checked non-NULL.
    unsafe { op_out.write(id) };
    0
}

/// Hands out the next frame (0), or says there is none left (1).
///
/// # Safety
/// `instance` from `create`; `frame_out` writable.
pub unsafe extern "C" fn next(instance: *mut c_void, op: u64, frame_out: *mut HoronBuf) -> i32 {
    // SAFETY: per the contract.
    let Some(inst) = (unsafe { instance_ref(instance) }) else {
        return abi::ERR_NULL_ARGUMENT;
    };
    if frame_out.is_null() {
        return abi::ERR_NULL_ARGUMENT;
    }
    let mut state = inst.lock();
    let Some(op) = state.ops.get_mut(&op) else {
        return abi::ERR_UNKNOWN_OP;
    };
    let Some(mut frame) = op.pending.pop_front() else {
        return abi::NEXT_NO_MORE;
    };
    let seq = op.next_seq;
    op.next_seq = seq.wrapping_add(1);
    let mut text = frame.render(seq);
    if text.len() > abi::MAX_MESSAGE_BYTES {
        // A host refuses such a frame: end the operation cleanly instead.
        frame = Frame::error("frame_too_large", "result above the 64 MiB frame limit");
        op.pending.clear();
        text = frame.render(seq);
    }
    if frame.kind.is_terminal() {
        op.terminal_sent = true;
    }
    // SAFETY: checked non-NULL.
    unsafe { frame_out.write(into_buf(text.into_bytes())) };
    abi::NEXT_FRAME
}

/// Cancels an operation: its remaining frames become one `error` frame
/// (`cancelled`) unless the terminal frame is already out. Idempotent.
///
/// # Safety
/// `instance` from `create`.
pub unsafe extern "C" fn cancel(instance: *mut c_void, op: u64) -> i32 {
    // SAFETY: per the contract.
    let Some(inst) = (unsafe { instance_ref(instance) }) else {
        return abi::ERR_NULL_ARGUMENT;
    };
    let mut state = inst.lock();
    match state.ops.get_mut(&op) {
        Some(op) => {
            op.abort_with("cancelled", "the host cancelled the operation");
            0
        }
        None => abi::ERR_UNKNOWN_OP,
    }
}

/// Forgets an operation (finished or not).
///
/// # Safety
/// `instance` from `create`.
pub unsafe extern "C" fn release(instance: *mut c_void, op: u64) -> i32 {
    // SAFETY: per the contract.
    let Some(inst) = (unsafe { instance_ref(instance) }) else {
        return abi::ERR_NULL_ARGUMENT;
    };
    match inst.lock().ops.remove(&op) {
        Some(_) => 0,
        None => abi::ERR_UNKNOWN_OP,
    }
}

/// Refuses new operations and ends the active ones with an `error` frame
/// (`shutdown`); they can still be drained and released. Idempotent.
///
/// # Safety
/// `instance` from `create`.
pub unsafe extern "C" fn shutdown(instance: *mut c_void) -> i32 {
    // SAFETY: per the contract.
    let Some(inst) = (unsafe { instance_ref(instance) }) else {
        return abi::ERR_NULL_ARGUMENT;
    };
    let mut state = inst.lock();
    if !state.shut_down {
        state.shut_down = true;
        for op in state.ops.values_mut() {
            op.abort_with("shutdown", "the instance was shut down");
        }
    }
    0
}

/// Frees an instance and everything it holds. NULL is a no-op.
///
/// # Safety
/// `instance` from `create`, not used again afterwards.
pub unsafe extern "C" fn destroy(instance: *mut c_void) {
    if !instance.is_null() {
        // SAFETY: the handle was made by Box::into_raw in `create`.
        drop(unsafe { Box::from_raw(instance.cast::<Instance>()) });
    }
}

/// Takes back a buffer from `describe` or `next`. A NULL `ptr` is a no-op.
///
/// # Safety
/// `buf` exactly as handed out, and given back once.
pub unsafe extern "C" fn free_buffer(buf: HoronBuf) {
    if !buf.ptr.is_null() {
        // SAFETY: made by `into_buf` from a boxed slice of exactly `len` bytes.
        drop(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(buf.ptr, buf.len)) });
    }
}
