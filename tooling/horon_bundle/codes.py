"""The one place where every refusal code is registered (docs/refusal-codes.md lists them all)."""

from __future__ import annotations

from horon_bundle.errors import EXIT_ENVIRONMENT, register

# --- strict JSON (plugin.json, provenance, records, reports we read back) ---------------------
JSON_TOO_LARGE = register(
    "json.too-large", "A JSON file is larger than its limit (checked before parsing).",
    "Bundle metadata is small; a file this large is not one the toolchain wrote.")
JSON_ENCODING = register(
    "json.encoding",
    "Not UTF-8 without BOM: a BOM, UTF-16/32, invalid or overlong UTF-8, or a lone surrogate.",
    "Write the file as plain UTF-8 without a byte order mark.")
JSON_SYNTAX = register(
    "json.syntax", "The text is not a JSON document.", "Check the file for a syntax error.")
JSON_DUPLICATE_KEY = register(
    "json.duplicate-key", "An object has the same key twice (at any depth).",
    "Keep one occurrence of the key; readers disagree on which one wins.")
JSON_NONFINITE = register(
    "json.nonfinite", "NaN, Infinity or -Infinity appears.", "JSON has no such numbers.")
JSON_FLOAT = register(
    "json.float", "A number with a fraction or exponent appears; the formats have no floats.",
    "Use an integer.")
JSON_INTEGER_RANGE = register(
    "json.integer-range", "An integer is negative, above 2^53-1, or has 20 or more digits.",
    "Integers must lie in 0 … 9007199254740991.")
JSON_TOO_DEEP = register(
    "json.too-deep", "Objects and arrays nest deeper than the limit.",
    "Bundle metadata is flat; deep nesting is refused before parsing.")
JSON_TRAILING_DATA = register(
    "json.trailing-data", "Something follows the JSON document.",
    "A file holds exactly one JSON document followed only by whitespace.")

# --- plugin.json schema -------------------------------------------------------------------
MANIFEST_FORMAT = register(
    "manifest.format", "`format` is not horon.plugin.v1 (or the document is not an object).",
    "This reader understands horon.plugin.v1 only; a later format needs a later toolchain.")
MANIFEST_UNKNOWN_FIELD = register(
    "manifest.unknown-field", "plugin.json has a field v1 does not define, at any depth.",
    "Remove the field; v1 readers refuse what they do not know.")
MANIFEST_MISSING_FIELD = register(
    "manifest.missing-field", "A defined field is absent or null.",
    "Every v1 field is required; write it out.")
MANIFEST_TYPE = register(
    "manifest.type", "A field has the wrong JSON type (e.g. true or \"1\" where an int belongs).",
    "Use the type docs/bundle-format.md gives for the field.")
MANIFEST_VALUE = register(
    "manifest.value", "A field's value is malformed (identifier, version, digest, role …).",
    "See docs/bundle-format.md for the field's allowed values.")
MANIFEST_FEATURES_ORDER = register(
    "manifest.features-order", "`features` is not sorted by byte order or has duplicates.",
    "List each feature once, sorted by byte order.")
MANIFEST_PATH_UNSAFE = register(
    "manifest.path-unsafe",
    "A path is absolute, has `..`, `.`, a backslash, a drive, a reserved or trailing-dot name.",
    "Paths are relative POSIX paths inside the bundle, already normalised.")
MANIFEST_PATH_COLLISION = register(
    "manifest.path-collision",
    "Two declared paths are equal case-insensitively or after Unicode normalisation.",
    "Give every file a name that stays unique on case-insensitive file systems.")
MANIFEST_PATH_PLACE = register(
    "manifest.path-place",
    "A file is declared outside its place: library not under lib/, sidecar not under sidecars/.",
    "Libraries live in lib/, sidecars in sidecars/, other assets at the top level.")
MANIFEST_LIBRARY_EXTENSION = register(
    "manifest.library-extension", "The library's extension does not match the target's OS.",
    "Linux uses .so, macOS .dylib, Windows .dll.")
MANIFEST_ASSETS = register(
    "manifest.assets", "Assets are not exactly one provenance and at most one sbom and notices.",
    "Declare exactly one asset with role provenance.")
MANIFEST_QA_FEATURE = register(
    "manifest.qa-feature", "A release bundle lists a feature matching a QA pattern.",
    "Build QA features only with --channel qa.")
MANIFEST_TARGET = register(
    "manifest.target", "The target triple is malformed, not 64-bit, or of an unsupported OS.",
    "ABI v1 supports 64-bit Linux, macOS and Windows targets.")

# --- SHA256SUMS ---------------------------------------------------------------------------
CHECKSUM_FORMAT = register(
    "checksum.format",
    "A SHA256SUMS line is not `<64 lowercase hex>  <path>\\n` (binary marker, CRLF, escape, "
    "order).",
    "Regenerate SHA256SUMS with the toolchain; it is as strict as `sha256sum --strict`.")
CHECKSUM_ALGORITHM = register(
    "checksum.algorithm", "A SHA256SUMS line carries a digest of another length (md5, sha1, …).",
    "Only SHA-256 is accepted.")
CHECKSUM_DUPLICATE = register(
    "checksum.duplicate", "SHA256SUMS lists a path twice.", "List every file once.")
CHECKSUM_SELF = register(
    "checksum.self", "SHA256SUMS lists itself.", "SHA256SUMS covers every file but itself.")
CHECKSUM_UNLISTED = register(
    "checksum.unlisted", "A file is present but SHA256SUMS does not list it.",
    "Every file but SHA256SUMS is listed; rebuild the bundle.")
CHECKSUM_MISSING = register(
    "checksum.missing", "SHA256SUMS lists a file that is not present.",
    "The bundle lost a file; rebuild or re-download it.")
CHECKSUM_MISMATCH = register(
    "checksum.mismatch",
    "A file's SHA-256 differs from SHA256SUMS or from its plugin.json declaration.",
    "The file was changed after the build; do not trust this bundle.")
CHECKSUM_SIZE = register(
    "checksum.size", "A file's size differs from its plugin.json declaration.",
    "The file was changed after the build; do not trust this bundle.")

# --- bundle layout ------------------------------------------------------------------------
LAYOUT_MISSING = register(
    "layout.missing", "plugin.json, SHA256SUMS or a declared file is absent.",
    "A bundle holds plugin.json, SHA256SUMS and every file plugin.json declares.")
LAYOUT_UNDECLARED = register(
    "layout.undeclared", "A file is present that plugin.json does not declare.",
    "Every file must be plugin.json, SHA256SUMS or declared; remove smuggled files.")
LAYOUT_SYMLINK = register(
    "layout.symlink", "A bundle entry is a symbolic link.", "Bundles hold regular files only.")
LAYOUT_FILE_TYPE = register(
    "layout.file-type", "A bundle entry is a hard link, FIFO, device or socket.",
    "Bundles hold regular files only, each with one link.")
LAYOUT_MODE = register(
    "layout.mode", "A file is setuid, setgid or world-writable.",
    "Bundles carry plain 0644/0755 files.")
LAYOUT_NOT_A_BUNDLE = register(
    "layout.not-a-bundle", "The path is neither a bundle directory nor a .zip archive.",
    "Pass a bundle directory or a <id>-<version>-<target>.zip archive.")

# --- archives -----------------------------------------------------------------------------
ARCHIVE_FORMAT = register(
    "archive.format",
    "Not a readable zip: truncated, encrypted, bad CRC or an unknown compression method.",
    "Archives hold stored or deflated entries only; re-download the archive.")
ARCHIVE_TRAVERSAL = register(
    "archive.traversal", "An entry name contains `..` or `.` components.",
    "The archive tries to write outside its directory; do not use it.")
ARCHIVE_ABSOLUTE = register(
    "archive.absolute", "An entry name is absolute or has a drive letter.",
    "The archive tries to write outside its directory; do not use it.")
ARCHIVE_UNSAFE_NAME = register(
    "archive.unsafe-name",
    "An entry name has a backslash, control character, reserved or trailing-dot component.",
    "Entry names are relative POSIX paths.")
ARCHIVE_DUPLICATE = register(
    "archive.duplicate",
    "Two entries have the same name (also case-insensitively or after Unicode normalisation).",
    "Readers disagree on which duplicate wins; the archive is refused.")
ARCHIVE_CONFLICT = register(
    "archive.conflict", "A name is both a file and a directory.",
    "The archive cannot be extracted unambiguously.")
ARCHIVE_LINK = register(
    "archive.link", "An entry is a symbolic link.", "Bundles hold regular files only.")
ARCHIVE_AMBIGUOUS = register(
    "archive.ambiguous",
    "Local headers and central directory disagree, data is prepended or trailing, or entries "
    "overlap.", "The archive may be read differently by other tools; it is refused.")
ARCHIVE_LIMIT = register(
    "archive.limit", "Too many entries, a name too long, or more bytes than the size limit.",
    "Bundles are small; an archive over these limits is refused before extraction.")

# --- provenance and evidence --------------------------------------------------------------
PROVENANCE_SCHEMA = register(
    "provenance.schema",
    "provenance.json is not the in-toto Statement v1 / SLSA v1 document the toolchain writes.",
    "Rebuild the bundle with horon-bundle; see docs/provenance.md.")
PROVENANCE_BUILD_TYPE = register(
    "provenance.build-type", "Unexpected predicateType or buildType.",
    "horon-bundle writes SLSA provenance v1 with its own buildType; see docs/provenance.md.")
PROVENANCE_SUBJECT = register(
    "provenance.subject",
    "Provenance subjects are not exactly the library and sidecars with their SHA-256 digests.",
    "The library or a sidecar changed after the build, or the provenance belongs elsewhere.")
PROVENANCE_CONTRADICTION = register(
    "provenance.contradiction",
    "Provenance disagrees with plugin.json (id, version, target, profile, channel, features).",
    "plugin.json and provenance come from different builds; do not mix them.")
EVIDENCE_MISSING = register(
    "evidence.missing",
    "A library has neither a recorded cargo invocation nor an artifact record.",
    "Let horon-bundle build the library, or bind a prebuilt one with --record from "
    "`horon-bundle compile`.")
EVIDENCE_MISMATCH = register(
    "evidence.mismatch",
    "An artifact record does not bind this library (sha256, size, target, profile or features).",
    "Use the record written by `horon-bundle compile` for exactly this library.")
GRAPH_MISSING = register(
    "graph.missing", "A release bundle has no recorded resolved feature graph.",
    "Rebuild with horon-bundle build; release bundles must record their graph.")
GRAPH_QA_PROVIDER = register(
    "graph.qa-provider", "A release build's resolved graph contains a QA provider.",
    "Turn the QA crate or feature off along the chain shown (e.g. default-features = false), "
    "or build with --channel qa.")
GRAPH_INVALID = register(
    "graph.invalid", "The recorded graph is malformed: a cycle, dangling edge, duplicate id.",
    "Rebuild the bundle; the graph must be the one cargo resolved.")
FEATURES_DRIFT = register(
    "features.drift",
    "The plugin package compiled features beyond the closure of the claimed ones.",
    "Claim exactly the features you ship, or remove what enables the extra ones.")
FEATURES_MISMATCH = register(
    "features.mismatch",
    "Features the library advertises differ from the features plugin.json claims.",
    "Generate the advertised list from the compiled features (see templates/plugin/build.rs).")
ABI_METADATA = register(
    "abi.metadata",
    "The library's advertised ABI metadata (probe or static section) is malformed or disagrees.",
    "Generate the handshake constants and the .horon_abi section from the same source.")

# --- declaration --------------------------------------------------------------------------
DECLARATION_MISSING = register(
    "declaration.missing", "The workspace has no horon-release.toml.",
    "Create horon-release.toml at the workspace root (see docs/declaration.md).")
DECLARATION_SYNTAX = register(
    "declaration.syntax", "horon-release.toml is not valid TOML.", "Fix the TOML syntax.")
DECLARATION_UNKNOWN_KEY = register(
    "declaration.unknown-key", "horon-release.toml has a key the schema does not define.",
    "Remove the key; the declaration is read strictly.")
DECLARATION_MISSING_KEY = register(
    "declaration.missing-key", "A required key is absent.", "See docs/declaration.md.")
DECLARATION_TYPE = register(
    "declaration.type", "A key has the wrong TOML type.", "See docs/declaration.md.")
DECLARATION_VALUE = register(
    "declaration.value", "A key's value is malformed (id, target, feature, path …).",
    "See docs/declaration.md.")
DECLARATION_DESTINATION = register(
    "declaration.destination", "The committed declaration names a publish destination.",
    "Keep `destination = \"unconfigured\"`; the destination comes only from the "
    "HORON_PUBLISH_DESTINATION repository variable.")
DECLARATION_PLUGIN = register(
    "declaration.plugin", "No such plugin, or several plugins and no --plugin.",
    "Pass --plugin ID naming one [[plugin]] of horon-release.toml.")
DECLARATION_TARGET = register(
    "declaration.target", "The requested target is not declared, or the host target is not.",
    "Add the target to `targets` or pass --target with a declared one.")
DECLARATION_PACKAGE = register(
    "declaration.package", "The declared package is not a cdylib package of the workspace.",
    "`package` names a workspace member with crate-type cdylib.")

# --- cargo and toolchain (environment) ----------------------------------------------------
TOOLCHAIN_MISSING = register(
    "toolchain.missing", "cargo or rustc cannot be run.",
    "Install Rust (https://rustup.rs) and make cargo available on PATH.",
    exit_status=EXIT_ENVIRONMENT)
TOOLCHAIN_TARGET_MISSING = register(
    "toolchain.target-missing", "The Rust standard library for a target is not installed.",
    "Run `rustup target add <target>`.", exit_status=EXIT_ENVIRONMENT)
CARGO_FAILED = register(
    "cargo.failed", "A cargo command failed.", "Read cargo's output above and fix the crate.")
CARGO_OUTPUT = register(
    "cargo.output", "cargo produced output the toolchain cannot use (no cdylib, bad JSON).",
    "Check that the package builds a cdylib for the target.")
SOURCE_GIT = register(
    "source.git", "git could not describe the source revision.",
    "Run the build inside a git checkout, or outside any repository.",
    exit_status=EXIT_ENVIRONMENT)

# --- output and prebuilt inputs -----------------------------------------------------------
OUTPUT_EXISTS = register(
    "output.exists", "The bundle directory already exists with other content.",
    "Remove the old bundle or choose another --out directory.")
OUTPUT_INSIDE_SOURCE = register(
    "output.inside-source", "The output or target directory lies inside the plugin's sources.",
    "The toolchain never writes into the plugin's source tree; pass --out elsewhere.")
INPUT_UNREADABLE = register(
    "input.unreadable", "A file named on the command line cannot be read.",
    "Check the path and its permissions.")
SIDECAR_INVALID = register(
    "sidecar.invalid", "A declared sidecar cannot be bundled.", "See docs/declaration.md.")
BUILD_NONDETERMINISTIC = register(
    "build.nondeterministic", "The assembled bundle did not verify or differs when rebuilt.",
    "This is a toolchain defect; please report it.")

# --- loading a library in a child process (build probe and doctor) -------------------------
ABI_LOAD = register(
    "abi.load", "The library cannot be loaded or does not export horon_agent_plugin_get_api_v1.",
    "Build a cdylib for this host that exports the ABI v1 symbol (see templates/plugin).")
ABI_CRASH = register(
    "abi.crash", "The child process that loaded the library died from a signal or abort.",
    "Run the library under a debugger; the crash happened in the step named.")
ABI_TIMEOUT = register(
    "abi.timeout", "The library did not answer within the timeout; the child was killed.",
    "A handshake, describe or frame must return promptly; look for a blocking call.")
ABI_GARBAGE = register(
    "abi.garbage", "The child's answer was not one JSON document (something wrote to stdout).",
    "Libraries must not write to standard output.")
ABI_STATUS = register(
    "abi.status", "The handshake refused a correct request.",
    "A correct v1 request must be answered with status 0 (OK).")
ENVIRONMENT_VALUE = register(
    "environment.value", "An environment variable the toolchain reads has a malformed value.",
    "Fix or unset the variable named.")
EVIDENCE_RECORD = register(
    "evidence.record", "An artifact record is not a horon.artifact-record.v1 document.",
    "Use the record `horon-bundle compile` wrote, unmodified.")
