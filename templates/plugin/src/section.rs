//! The static ABI metadata section: the advertised metadata as compact JSON
//! (keys sorted), so a verifier can read it from a library of any target
//! without loading it. `build.rs` generates the bytes from the same constants
//! as the handshake (`crate::generated::ABI_SECTION`).
//!
//! A fixture crate includes this file to get the template's section, or
//! defines its own `section` module (same two items) to plant a different one.

/// `#[used]` keeps the static through the compiler; `keep()` makes the
/// exported entry point reference it, so the linker's section garbage
/// collection (`--gc-sections`, `-dead_strip`, `/OPT:REF`) keeps it too.
#[used]
#[cfg_attr(not(target_vendor = "apple"), unsafe(link_section = ".horon_abi"))]
#[cfg_attr(target_vendor = "apple", unsafe(link_section = "__DATA,__horon_abi"))]
pub static HORON_ABI: [u8; crate::generated::ABI_SECTION_LEN] = crate::generated::ABI_SECTION;

/// Touches the section from code that is certainly linked (the exported
/// entry point). A volatile read cannot be optimised away.
#[inline(always)]
pub fn keep() {
    // SAFETY: reads one byte of a static of at least one byte.
    let _ = unsafe { core::ptr::read_volatile(HORON_ABI.as_ptr()) };
}
