//! Derives the plugin's advertised metadata from the build itself.
//!
//! The advertised feature list is the set of features *this* compilation of
//! the package enabled (`CARGO_CFG_FEATURE`), so the handshake table and the
//! static metadata section cannot drift from what was compiled. The plugin id
//! is written in exactly one place, the `id` of this package's `[[plugin]]` in
//! `horon-release.toml` (found from the package directory up, as cargo finds
//! its workspace): renaming a plugin is one edit. The ABI constants come from
//! the shared `src/abi.rs` next to this file.
//!
//! Fixture and product crates may point `build = "…/templates/plugin/build.rs"`
//! at this file: `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME` then name *their*
//! package, so they get their own id and features, while `#[path]` below still
//! finds the shared ABI definition beside this file.
//!
//! Output: `$OUT_DIR/horon_plugin_meta.rs`, constants only. No function or
//! expression in it can panic, so no panic location can carry the (absolute,
//! machine-specific) OUT_DIR path into the library.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/abi.rs"]
mod abi;

/// `^[a-z][a-z0-9-]{1,62}$`
fn valid_plugin_id(id: &str) -> bool {
    let b = id.as_bytes();
    (2..=63).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// `[a-z0-9][a-z0-9_-]*`
fn valid_feature(f: &str) -> bool {
    let b = f.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_')
}

fn json_string(s: &str) -> String {
    // Every string written here is validated ASCII without quotes or
    // backslashes; the escaping is a safety net, not a feature.
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Rust byte-string literal body for ASCII text.
fn byte_literal(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out
}

/// The value of a one-line TOML string (`"…"` with the common escapes, or
/// `'…'`) at the start of `text`, or None.
fn toml_string(text: &str) -> Option<String> {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix('\'') {
        return rest.find('\'').map(|end| rest[..end].to_string());
    }
    let mut chars = text.strip_prefix('"')?.chars();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                _ => return None, // no plugin id or package name needs another escape
            },
            c => out.push(c),
        }
    }
    None
}

/// The `id` of the `[[plugin]]` whose `package` is `package`, read from the
/// declaration's `[[plugin]]` tables (`key = "value"` lines, as
/// `horon-release.toml` is written). Panics with the reason otherwise.
fn declared_id(declaration: &Path, package: &str) -> String {
    let text = fs::read_to_string(declaration)
        .unwrap_or_else(|e| panic!("{}: {e}", declaration.display()));
    let mut plugins: Vec<(Option<String>, Option<String>)> = Vec::new();
    let mut in_plugin = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('[') {
            let header: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            in_plugin = header.starts_with("[[plugin]]");
            if in_plugin {
                plugins.push((None, None));
            }
            continue;
        }
        let (Some(entry), Some((key, value))) = (plugins.last_mut(), line.split_once('=')) else {
            continue;
        };
        if !in_plugin {
            continue;
        }
        match key.trim().trim_matches('"') {
            "id" => entry.0 = toml_string(value),
            "package" => entry.1 = toml_string(value),
            _ => {}
        }
    }
    let ids: Vec<String> = plugins
        .into_iter()
        .filter(|(_, p)| p.as_deref() == Some(package))
        .filter_map(|(id, _)| id)
        .collect();
    match ids.as_slice() {
        [id] => id.clone(),
        [] => panic!(
            "{}: no [[plugin]] with package = \"{package}\" and an id = \"…\" line: the plugin \
             id is read from there (write both as one-line strings)",
            declaration.display()
        ),
        _ => panic!(
            "{}: several [[plugin]] tables name package \"{package}\"",
            declaration.display()
        ),
    }
}

/// horon-release.toml in the package directory or the nearest one above it.
fn find_declaration(start: &Path) -> PathBuf {
    start
        .ancestors()
        .map(|dir| dir.join("horon-release.toml"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no horon-release.toml in {} or above: the plugin id is read from it",
                start.display()
            )
        })
}

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let package = env::var("CARGO_PKG_NAME").expect("cargo sets CARGO_PKG_NAME");
    let declaration = find_declaration(&manifest_dir);
    let id = declared_id(&declaration, &package);
    let id = id.as_str();
    if !valid_plugin_id(id) {
        panic!(
            "{}: plugin id {id:?} does not match ^[a-z][a-z0-9-]{{1,62}}$",
            declaration.display()
        );
    }

    // Cargo sets CARGO_CFG_FEATURE to the enabled features of this package,
    // comma-separated, with their names as written in Cargo.toml. It may be
    // absent or empty when no feature is enabled.
    let raw = env::var("CARGO_CFG_FEATURE").unwrap_or_default();
    let mut features: Vec<&str> = raw.split(',').filter(|f| !f.is_empty()).collect();
    for f in &features {
        if !valid_feature(f) {
            panic!(
                "feature {f:?} cannot be advertised: Horon feature names match [a-z0-9][a-z0-9_-]*"
            );
        }
    }
    features.sort_unstable(); // byte order: all names are ASCII
    features.dedup();
    let feature_list = features.join(",");

    // Keys sorted, compact separators: the same bytes for the same inputs.
    let section = format!(
        "{{\"abi_major\":{},\"abi_minor\":{},\"features\":[{}],\"format\":{},\"plugin_id\":{},\"wire_schema\":{}}}",
        abi::ABI_MAJOR,
        abi::ABI_MINOR,
        features
            .iter()
            .map(|f| json_string(f))
            .collect::<Vec<_>>()
            .join(","),
        json_string(abi::SECTION_FORMAT),
        json_string(id),
        json_string(abi::WIRE_SCHEMA),
    );

    let mut code = String::new();
    code.push_str(
        "// @generated by the Horon template build.rs from horon-release.toml and\n\
         // CARGO_CFG_FEATURE. Constants only: nothing here can panic, so OUT_DIR\n\
         // never reaches the library.\n\n",
    );
    let _ = writeln!(code, "/// The plugin id (the `id` in horon-release.toml).");
    let _ = writeln!(code, "pub const PLUGIN_ID: &str = \"{}\";", byte_literal(id));
    let _ = writeln!(code, "/// The plugin id, NUL-terminated.");
    let _ = writeln!(
        code,
        "pub const PLUGIN_ID_C: &::core::ffi::CStr = c\"{}\";",
        byte_literal(id)
    );
    let _ = writeln!(
        code,
        "/// Features this build compiled, sorted by byte order."
    );
    let _ = writeln!(
        code,
        "pub const FEATURES: &[&str] = &[{}];",
        features
            .iter()
            .map(|f| format!("\"{}\"", byte_literal(f)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        code,
        "/// The advertised feature list as the handshake hands it out."
    );
    let _ = writeln!(
        code,
        "pub const FEATURES_C: &::core::ffi::CStr = c\"{}\";",
        byte_literal(&feature_list)
    );
    let _ = writeln!(code, "/// Length of the static metadata section's JSON.");
    let _ = writeln!(
        code,
        "pub const ABI_SECTION_LEN: usize = {};",
        section.len()
    );
    let _ = writeln!(
        code,
        "/// The static metadata section's JSON (compact, keys sorted)."
    );
    let _ = writeln!(
        code,
        "pub const ABI_SECTION: [u8; ABI_SECTION_LEN] = *b\"{}\";",
        byte_literal(&section)
    );

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let path = out_dir.join("horon_plugin_meta.rs");
    // Write only when changed, so an unchanged rerun does not force a rebuild.
    if fs::read_to_string(&path).ok().as_deref() != Some(code.as_str()) {
        fs::write(&path, code).expect("write horon_plugin_meta.rs");
    }

    // abi.rs is compiled into this script, so editing it rebuilds and reruns
    // it; features select a separate run; the declaration names the id.
    // Nothing else in the package can change the output.
    println!("cargo:rerun-if-changed={}", declaration.display());
}
