// This plugin's own identity. Every plugin crate has its own copy of this
// file; `build.rs` and `plugin.rs` read it, so the handshake, the static
// metadata section and `describe` all name the same plugin.
//
// build.rs pulls this file in with `include!`: keep it to plain items (no
// inner attributes, no `//!` doc comments).

/// The plugin id: `^[a-z][a-z0-9-]{1,62}$`, equal to the `id` of this
/// plugin's `[[plugin]]` entry in `horon-release.toml`. Tool names are
/// `<PLUGIN_ID>__<tool>`.
pub const PLUGIN_ID: &str = "example";
