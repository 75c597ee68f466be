"""The one place where every refusal code is registered (docs/refusal-codes.md lists them all)."""

from __future__ import annotations

from horon_bundle.core.errors import EXIT_ENVIRONMENT, EXIT_USAGE, register

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
    "Use the type `horon-bundle docs bundle-format` gives for the field.")
MANIFEST_VALUE = register(
    "manifest.value", "A field's value is malformed (identifier, version, digest, role …).",
    "See `horon-bundle docs bundle-format` for the field's allowed values.")
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
LAYOUT_CHANGED = register(
    "layout.changed",
    "A bundle file was replaced, removed, retyped (a FIFO, a directory, a link) or resized "
    "between the walk that judged it and the read that hashed it.",
    "Something is changing the bundle while it is verified; verify a copy nobody else writes.")
LAYOUT_LIMIT = register(
    "layout.limit",
    "A bundle directory has too many entries, directories nested too deep, or a path too long.",
    "Native bundles are small and flat, and an unpacked harness bundle's limits are far above "
    "real plugins; a tree over them is refused before it is walked further (every limit: "
    "docs/limits.md).")
LAYOUT_NOT_A_BUNDLE = register(
    "layout.not-a-bundle", "The path is neither a bundle directory nor a .zip archive.",
    "Pass a bundle directory or a <id>-<version>-<target>.zip archive.")
LAYOUT_HARNESS_BUNDLE = register(
    "layout.harness-bundle",
    "A harness bundle (a .claude-plugin/ or .muse-plugin/ manifest, no plugin.json at the "
    "root) was given to a command that reads native bundles only (inspect, doctor, "
    "reproduce), or `doctor ID` names one installed as a harness bundle.",
    "Check a harness zip with `horon-bundle verify` (its ref too); once installed, `list "
    "--catalogue` shows what it offers (docs/harness.md).")

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
    "archive.limit", "Too many entries (or too many once unpacked), an entry nested too deep, "
    "a name too long, or more bytes than the size limit.",
    "A native bundle is small, and a harness bundle's limits are far above real plugins "
    "(every limit: docs/limits.md); an archive over them is refused before extraction.")

# --- provenance and evidence --------------------------------------------------------------
PROVENANCE_SCHEMA = register(
    "provenance.schema",
    "provenance.json is not the in-toto Statement v1 / SLSA v1 document the toolchain writes.",
    "Rebuild the bundle with horon-bundle; see `horon-bundle docs provenance`.")
PROVENANCE_BUILD_TYPE = register(
    "provenance.build-type", "Unexpected predicateType or buildType.",
    "horon-bundle writes SLSA provenance v1 with its own buildType; see "
    "`horon-bundle docs provenance`.")
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
GRAPH_QA_RECORD = register(
    "graph.qa-record",
    "The QA providers or QA-marked crates the provenance records differ from what its own "
    "graph holds, judged again with the same patterns.",
    "The provenance was edited after the build; rebuild the bundle.")
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
    "Generate the advertised list from the compiled features (the build.rs that "
    "`horon-bundle new` renders does).")
ABI_METADATA = register(
    "abi.metadata",
    "The library's advertised ABI metadata (probe or static section) is malformed or disagrees.",
    "Generate the handshake constants and the .horon_abi section from the same source.")
ABI_SECTION = register(
    "abi.section",
    "The library's static ABI metadata section cannot be read: not an ELF/PE/Mach-O of the "
    "target's format, a header, table or section past the end of the file, an oversized or "
    "duplicated section, or content that is not the compact horon.abi.v1 JSON.",
    "Build the library from the template (build.rs generates the section); see "
    "`horon-bundle docs abi-v1`, section 7.")
ABI_SECTION_MISMATCH = register(
    "abi.section-mismatch",
    "The static .horon_abi section and the handshake (probe) advertise different metadata.",
    "Generate the handshake constants and the section from the same source (the build.rs "
    "that `horon-bundle new` renders); never hard-code either.")
ABI_SECTION_MISSING = register(
    "abi.section-missing",
    "The provenance says the advertised metadata was read from the library's .horon_abi "
    "section, but the library has none (stripped after the build).",
    "Ship the library exactly as built; do not strip the .horon_abi section.")

# --- declaration --------------------------------------------------------------------------
DECLARATION_MISSING = register(
    "declaration.missing", "The workspace has no horon-release.toml.",
    "Run the command inside a plugin workspace (or pass its directory), or start one with "
    "`horon-bundle new NAME`; a harness plugin holds .claude-plugin/plugin.json instead "
    "(`horon-bundle docs harness`).")
DECLARATION_SYNTAX = register(
    "declaration.syntax", "horon-release.toml is not valid TOML.", "Fix the TOML syntax.")
DECLARATION_UNKNOWN_KEY = register(
    "declaration.unknown-key", "horon-release.toml has a key the schema does not define.",
    "Fix the key's spelling (the message suggests the nearest known key); unknown keys are "
    "refused, never ignored. `horon-bundle docs declaration` lists every key.")
DECLARATION_MISSING_KEY = register(
    "declaration.missing-key", "A required key is absent.",
    "Add the key; `horon-bundle docs declaration` lists every key.")
DECLARATION_TYPE = register(
    "declaration.type", "A key has the wrong TOML type.",
    "`horon-bundle docs declaration` gives each key's type.")
DECLARATION_VALUE = register(
    "declaration.value", "A key's value is malformed (id, target, feature, path …).",
    "`horon-bundle docs declaration` gives each key's allowed values.")
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
    "cargo.failed", "A cargo command failed; cargo's own error lines are shown with it.",
    "Fix what cargo's error names; the same command in the workspace shows it again.")
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
OUTPUT_OVER_PLUGIN = register(
    "output.over-plugin",
    "The output directory of a harness build is the plugin directory, one above it, or inside "
    "a directory the host reads (.claude-plugin, skills, commands, agents, hooks): it is "
    "never bundled, so the plugin files in it would be missing from the zip.",
    "Write the outputs to a directory of their own, e.g. --out dist (list it in .gitignore).")
OUTPUT_WRITE = register(
    "output.write-failed", "A file could not be written: the disk is full, read-only or the "
    "directory is not writable.",
    "Free space or fix the permissions of the directory named, then run the command again; "
    "nothing half-written was left under a final name.", exit_status=EXIT_ENVIRONMENT)
INPUT_UNREADABLE = register(
    "input.unreadable", "A file named on the command line cannot be read.",
    "Check the path and its permissions.")
INPUT_NOT_A_FILE = register(
    "input.not-a-file",
    "A file to read is a FIFO, socket, device, directory or (where links are refused) a "
    "symbolic link: it is never opened for reading, so it cannot block or stream forever.",
    "Pass a regular file.")
INPUT_TOO_LARGE = register(
    "input.too-large",
    "A file to read is larger than its limit (checked on the open file before reading, and "
    "again while reading).",
    "The file is not one the toolchain wrote; check the path.")
SIDECAR_INVALID = register(
    "sidecar.invalid", "A declared sidecar source is missing, a symlink or not a regular file.",
    "Point `source` at a regular file inside the workspace (`horon-bundle docs "
    "declaration`).")
BUILD_NONDETERMINISTIC = register(
    "build.nondeterministic", "The assembled bundle did not verify or differs when rebuilt.",
    "This is a toolchain defect; please report it.")

USAGE_INVALID = register(
    "usage.invalid", "The command line is malformed: an unknown command or option, or a "
    "missing or malformed argument.",
    "Run `horon-bundle --help` or `horon-bundle COMMAND --help`.", exit_status=EXIT_USAGE)

# --- new: a plugin workspace from the shipped templates -------------------------------------
NEW_NAME = register(
    "new.name", "The NAME of `horon-bundle new` is not a plugin id (^[a-z][a-z0-9-]{1,62}$).",
    "Use lowercase letters, digits and '-', starting with a letter, e.g. acme-notes.")
NEW_EXISTS = register(
    "new.exists", "The directory `horon-bundle new` would create already exists.",
    "`new` never overwrites anything: choose another NAME or --dir, or remove the directory.")
NEW_TEMPLATES = register(
    "new.templates", "The templates shipped with horon-bundle are missing or incomplete.",
    "Reinstall horon-bundle from a wheel or sdist built by `nox -s dist`.",
    exit_status=EXIT_ENVIRONMENT)

# --- loading a library in a child process (build probe and doctor) -------------------------
ABI_LOAD = register(
    "abi.load", "The library cannot be loaded or does not export horon_agent_plugin_get_api_v1.",
    "Build a cdylib for this host that exports the ABI v1 symbol (`horon-bundle new NAME` "
    "renders one).")
ABI_CRASH = register(
    "abi.crash", "The child process that loaded the library died from a signal or abort.",
    "Run the library under a debugger; the crash happened in the step named.")
ABI_TIMEOUT = register(
    "abi.timeout", "The library did not answer within the timeout; the child was killed.",
    "A handshake, describe or frame must return promptly; look for a blocking call.")
ABI_GARBAGE = register(
    "abi.garbage", "The child's answer was not one JSON document: the library wrote into a "
    "descriptor it did not open (the child's answer channel; its stdout already goes to stderr).",
    "Write only to descriptors the library opened itself.")
ABI_CHILD_ERROR = register(
    "abi.child-error", "The child that loaded the library failed while observing it: the "
    "library corrupted the child's state, or the observer met a case it does not handle.",
    "Run the library under a debugger; if it is well-behaved, report the message.")
ABI_ANSWER = register(
    "abi.answer", "The child's answer or progress record is JSON, but not what the toolchain's "
    "observer writes: a missing or unknown field, a value of the wrong type or out of range, a "
    "phase missing, or answer and progress record contradicting each other (the library wrote "
    "into the child's channels or corrupted its observer).",
    "Write only to descriptors the library opened itself; never touch the host's memory.")
ABI_STRAY_PROCESS = register(
    "abi.stray-process", "Processes the library started were still running when the child "
    "that loaded it ended (or kept it running after it answered); they were killed.",
    "Start no process or background loop when loaded, handshaking or described; end every "
    "process an operation starts before the instance is destroyed.")
ABI_STATUS = register(
    "abi.status", "The handshake refused a correct request.",
    "A correct v1 request must be answered with status 0 (OK).")
ENVIRONMENT_VALUE = register(
    "environment.value", "An environment variable the toolchain reads has a malformed value.",
    "Fix or unset the variable named.")
ENVIRONMENT_CWD = register(
    "environment.cwd", "The current directory no longer exists (it was removed while the shell "
    "was in it), so a relative path cannot be resolved.",
    "cd into an existing directory and run the command again.",
    exit_status=EXIT_ENVIRONMENT)
EVIDENCE_RECORD = register(
    "evidence.record", "An artifact record is not a horon.artifact-record.v1 document.",
    "Use the record `horon-bundle compile` wrote, unmodified.")

# --- publish and yank (docs/publishing.md) --------------------------------------------
PUBLISH_DESTINATION = register(
    "publish.destination",
    "HORON_PUBLISH_DESTINATION is not a usable file:///abs/dir or oci://host[:port]/namespace, "
    "or names something that is not a horon store.",
    "Set the repository variable to file:///absolute/dir or oci://host[:port]/namespace "
    "(no credentials, query or fragment); see `horon-bundle docs publishing`.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_NOTHING = register(
    "publish.nothing", "The release directory is missing or holds no bundle archive (*.zip).",
    "Pass the directory `horon-bundle build --out` wrote (default: dist).")
PUBLISH_ARCHIVE_NAME = register(
    "publish.archive-name", "An archive's file name is not <id>-<version>-<target>.zip of its "
    "own plugin.json.", "Publish archives under the name `horon-bundle build` gave them.")
PUBLISH_CHANNEL = register(
    "publish.channel", "A bundle of the qa channel is in the release.",
    "QA bundles are never published; rebuild with --channel release.")
PUBLISH_UNPROVEN = register(
    "publish.unproven", "A check publication requires was skipped for a bundle "
    "(e.g. claimed = advertised with no advertised metadata recorded).",
    "Rebuild with horon-bundle build so that every claim is recorded and checkable.")
PUBLISH_SIDE_FILE = register(
    "publish.side-file", "A file beside an archive (.sha256, .build.json, .sigstore.json) is "
    "malformed or describes another archive.",
    "Keep the files `build` and `sign` wrote next to each archive, unmodified.")
PUBLISH_NAME = register(
    "publish.name", "A plugin id, version or target cannot be named at the destination "
    "(tag longer than the registry allows, or an invalid repository name).",
    "Shorten the version or choose a plugin id that ends with a letter or digit.")
PUBLISH_UNREACHABLE = register(
    "publish.unreachable", "The destination does not answer (connection refused, timeout, "
    "missing directory).", "Check the destination and run the same command again: a publish "
    "interrupted half-way is completed by the next run.", exit_status=EXIT_ENVIRONMENT)
PUBLISH_DEADLINE = register(
    "publish.deadline", "A registry request did not complete within its deadline (20 s for a "
    "small request, connect, retries and redirects included; 20 s plus 1 s per MiB for a blob "
    "upload), or nothing arrived for 60 s.",
    "The registry answers too slowly or dribbles its answer; check it (or the network) and run "
    "the same command again: an interrupted publish is completed by the next run.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_TOO_LARGE = register(
    "publish.too-large", "A registry answer is larger than its cap (4 MiB for a ping, manifest, "
    "index, tag page or token answer); nothing past the cap was read.",
    "A registry's answers to these requests are small: check what answers at that address.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_UNSAFE_LOCATION = register(
    "publish.unsafe-location", "The registry named a location (an upload Location, a redirect, a "
    "next page, a token realm) that would downgrade HTTPS to plain HTTP, use plain HTTP to a "
    "host that is not loopback, carry user information or another scheme, or it redirected "
    "more than 3 times; nothing was sent there.",
    "Check the registry's configuration (its external URL): plain HTTP is only ever used for "
    "loopback, and credentials only go to the registry's own scheme, host and port.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_TAG_LIMIT = register(
    "publish.tag-limit", "A repository's tag list runs past 100 pages or 100,000 tags.",
    "Name the target (`yank ID VERSION --target T`) so that no tag list is read, or check the "
    "registry's pagination.", exit_status=EXIT_ENVIRONMENT)
PUBLISH_AUTH = register(
    "publish.auth", "The registry refused the credentials, none were found, or its token "
    "service is on a host the credentials may not go to (nor named in "
    "HORON_REGISTRY_TOKEN_HOSTS).",
    "Set HORON_REGISTRY_USERNAME and HORON_REGISTRY_PASSWORD (in GitHub Actions: github.actor "
    "and GITHUB_TOKEN with packages: write) or log in with `docker login`; for a registry "
    "whose token service is on another host, name that host in the repository variable "
    "HORON_REGISTRY_TOKEN_HOSTS.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_PROXY = register(
    "publish.proxy", "HTTPS_PROXY (or HTTP_PROXY) names a proxy publish cannot use (not an "
    "http:// URL, or not a URL), or the proxy would not open a CONNECT tunnel to the registry "
    "(407 asking for credentials, another answer, or not an HTTP answer).",
    "Name an http://[USER:PASSWORD@]HOST:PORT proxy that tunnels with CONNECT, give it the "
    "credentials it asks for, or list the registry in NO_PROXY to connect to it directly.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_NOT_WRITABLE = register(
    "publish.not-writable", "The destination cannot be written (permission denied, read-only).",
    "Give the publishing identity write access to the destination.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_DESTINATION_STATE = register(
    "publish.destination-state", "The destination holds or answers something the toolchain "
    "cannot read (a malformed index entry or manifest, an unexpected registry answer).",
    "Inspect the entry named; never edit a store by hand.", exit_status=EXIT_ENVIRONMENT)
PUBLISH_INTEGRITY = register(
    "publish.integrity", "What the destination holds after writing differs from what was sent.",
    "The storage or the connection corrupts data; nothing was made visible for that bundle.",
    exit_status=EXIT_ENVIRONMENT)
PUBLISH_CONFLICT = register(
    "publish.conflict", "Different bytes are already published under the same id, version and "
    "target (or another publisher won the race).",
    "A published version is immutable: bump the version, or publish the bytes already there.")
PUBLISH_YANKED = register(
    "publish.yanked", "The id, version and target were published and then yanked.",
    "A yanked version can never be reused: release a new version.")
PUBLISH_PUBLIC_URL = register(
    "publish.public-url", "HORON_PUBLISH_PUBLIC_URL is not an https:// address Claude Code "
    "downloads from (another scheme, credentials, a query or fragment, a local or metadata "
    "host), or is set for a destination other than a file:// store.",
    "Set it to the https://host[/path] the store directory is served from, or unset it; see "
    "`horon-bundle docs publishing`.", exit_status=EXIT_ENVIRONMENT)
PUBLISH_MARKETPLACE = register(
    "publish.marketplace", "The marketplace written at the store's root could not be named or "
    "would hold a name Claude Code refuses (a reserved or look-alike marketplace or plugin "
    "name, two marketplaces in one store, several plugins and no marketplace index).",
    "Publish from a marketplace build (its index names the marketplace) or one plugin at a "
    "time, and rename what Claude Code reserves; one store serves one marketplace.")
PUBLISH_SWITCH_VALUE = register(
    "publish.switch-value", "A warning: HORON_PUBLISH_ENABLED is set, but not to exactly "
    "`true` (e.g. 1, yes, True), so nothing is published and the run still succeeds.",
    "Set HORON_PUBLISH_ENABLED=true to publish, or leave it empty or unset to skip publishing "
    "without this warning.")
YANK_NOT_PUBLISHED = register(
    "yank.not-published", "There is nothing published under the id, version (and target) named.",
    "Check the id and version; `yank` only withdraws what was published.")
YANK_REASON = register(
    "yank.reason", "The --reason is empty, longer than 500 characters, or has control characters.",
    "Say in one line why the version is withdrawn.")

# --- signing, signature verification, audit policy, reproduce -------------------------
SIGNING_NO_IDENTITY = register(
    "signing.no-identity",
    "No OpenID Connect identity for keyless signing (no ambient CI credential, no "
    "SIGSTORE_IDENTITY_TOKEN), or the CI refused to issue one.",
    "Sign in CI: in GitHub Actions grant the job `permissions: id-token: write`; elsewhere set "
    "SIGSTORE_IDENTITY_TOKEN to an OIDC token for audience `sigstore`.",
    exit_status=EXIT_ENVIRONMENT)
SIGNING_FAILED = register(
    "signing.failed",
    "Sigstore (TUF repository, Fulcio or Rekor) could not be reached or refused to sign.",
    "Signing needs the network; check connectivity to the Sigstore instance and retry.",
    exit_status=EXIT_ENVIRONMENT)
SIGNING_INPUT = register(
    "signing.input",
    "A file given to `sign` is not a bundle archive that verifies, an artifact record, nor a "
    "release statement of one Statement whose archives are beside it with those bytes.",
    "Sign the .zip archives `build` wrote, the record.json files `compile` wrote, or the "
    "statement `statement merge` wrote.")
SIGNATURE_MISSING = register(
    "signature.missing", "A signature is required but `<file>.sigstore.json` does not exist.",
    "Download the signature next to the file, or sign it with `horon-bundle sign` in CI.")
SIGNATURE_INVALID = register(
    "signature.invalid",
    "The Sigstore bundle is malformed or does not verify: the file was changed after signing, "
    "or the signature, certificate or transparency-log entry is not consistent.",
    "Do not trust the file; re-download both it and its .sigstore.json.")
SIGNATURE_IDENTITY = register(
    "signature.identity",
    "The signing certificate names another identity (SAN, GitHub repository, workflow or ref) "
    "than the one required.",
    "The file was signed by someone else; check --identity / --github-* or the policy's "
    "[signer] table.")
SIGNATURE_ISSUER = register(
    "signature.issuer",
    "The signing certificate's OIDC issuer is not the one required.",
    "The identity was vouched for by another identity provider; check --issuer.")
SIGNATURE_TRUST_ROOT = register(
    "signature.trust-root",
    "The signing certificate does not chain to the pinned trust root (e.g. a staging "
    "signature checked against the production root).",
    "Verify against the Sigstore instance that signed it (--staging, --trust-root FILE), or "
    "refuse the file.")
SIGNATURE_TRUST_ROOT_FILE = register(
    "signature.trust-root-file",
    "The --trust-root file is not a Sigstore trusted_root.json (v0.1) with Fulcio "
    "certificates and transparency logs.",
    "Pin a trusted_root.json obtained out of band (e.g. `sigstore` TUF targets).",
    exit_status=EXIT_USAGE)
SIGNATURE_OPTIONS = register(
    "signature.options",
    "Signature options are incomplete or contradictory (an identity without an issuer, a "
    "GitHub workflow without a repository, a signature required with no signer named …).",
    "Name the signer with --identity and --issuer, or --github-repository [--github-workflow "
    "--github-ref], on the command line or in the policy's [signer] table (not both).",
    exit_status=EXIT_USAGE)
# --- release statements (docs/release-statement.md) ----------------------------------------
STATEMENT_INVALID = register(
    "statement.invalid",
    "A release statement (*.intoto.jsonl) is not one horon-bundle writes: not one in-toto v1 "
    "Statement per line, a subject that is not a file name with a SHA-256, a subject listed "
    "twice, another predicate or build type, or over its limits.",
    "Keep the *.intoto.jsonl files `build` and `statement merge` wrote, unmodified.")
STATEMENT_CONFLICT = register(
    "statement.conflict",
    "Statements to merge disagree: one archive name with two digests, or another builder, "
    "invocation or source.",
    "Merge only the statements of one workflow run (the dist/ directories of its jobs); "
    "rebuild what differs.")
ATTESTATION_NOT_SUBJECT = register(
    "attestation.not-subject",
    "The archive's SHA-256 is not a subject of the signed release statement given with "
    "--attestation.",
    "The archive is not one this release built and signed: do not trust it, or pass the "
    "statement of the release it came from.")
PUBLISH_NOT_SUBJECT = register(
    "publish.not-subject",
    "DIST_DIR holds release statements and an archive that none of them names (left from "
    "an earlier build, or added by hand).",
    "Remove the archive, rebuild so that a statement names it, or pass --leave-out-unlisted "
    "to publish only what the statements name.")
PUBLISH_SUBJECT_MISSING = register(
    "publish.subject-missing",
    "A release statement in DIST_DIR names an archive that is absent or has other bytes.",
    "Publish the dist/ the statements were written for; remove a statement left from an "
    "earlier build.")
PUBLISH_NO_STATEMENT = register(
    "publish.no-statement",
    "A warning: DIST_DIR holds no release statement (*.intoto.jsonl), so every archive in it "
    "is published, each fully checked.",
    "Build with this horon-bundle (it writes the statement beside the archives), or merge "
    "the jobs' statements with `horon-bundle statement merge`.")
POLICY_INVALID = register(
    "policy.invalid",
    "The --policy file is not a valid audit policy (TOML syntax, unknown or missing key, type, "
    "value).",
    "See `horon-bundle docs auditing` for the policy keys; the policy is read strictly.",
    exit_status=EXIT_USAGE)
POLICY_UNMET = register(
    "policy.unmet", "A requirement of the audit policy is not met by the bundle.",
    "The message names the policy key; the bundle is not acceptable under this policy.")
REPRODUCE_EVIDENCE = register(
    "reproduce.evidence",
    "The bundle carries no recorded cargo invocation to re-run (an artifact record, or none).",
    "Reproduce the library where its record was compiled: run `horon-bundle compile` there and "
    "compare the library digest with the record's.")
REPRODUCE_TOOLCHAIN = register(
    "reproduce.toolchain",
    "The toolchain here (cargo, rustc, host or horon-bundle version) differs from the recorded "
    "one; nothing was built.",
    "Install the recorded toolchain (e.g. a rust-toolchain.toml pinning it) and run again.")
REPRODUCE_SOURCE = register(
    "reproduce.source",
    "The source checkout is at another git revision than the recorded one, or is dirty; "
    "nothing was built.",
    "Check out the recorded revision cleanly (`git checkout <revision>`, no local changes).")
REPRODUCE_LIBRARY = register(
    "reproduce.library", "The rebuilt library or a sidecar differs from the bundle's bytes.",
    "The bundle's library was not built from this source with this toolchain as recorded.")
REPRODUCE_FILE = register(
    "reproduce.file",
    "A rebuilt bundle file (plugin.json, SHA256SUMS, SBOM, notices, licence …) differs, is "
    "missing or is extra.",
    "Compare the named file; the message gives both digests and the first differing offset.")
REPRODUCE_PROVENANCE = register(
    "reproduce.provenance",
    "A field of the rebuilt provenance differs from the recorded one (builder id excepted).",
    "The message names the field and both values.")

# --- install into an agent home (docs/install.md) -------------------------------------
INSTALL_HOME = register(
    "install.home", "The agent home cannot be used: its parent is missing, it is not a "
    "directory, others may write to it, or install.lock / state.json is not a regular file.",
    "Pass --home (or HORON_AGENT_HOME) naming a directory you own, or a new one whose parent "
    "exists; see docs/install.md.")
INSTALL_SYMLINK = register(
    "install.symlink", "A directory or file of the agent home (native-plugins, a plugin, "
    "version or target directory, the state or lock file) is a symbolic link.",
    "Nothing is followed through a link in the home: replace the link by the real directory, "
    "or remove it.")
INSTALL_NOT_A_DIRECTORY = register(
    "install.not-a-directory", "Something other than a directory stands where the agent home "
    "keeps one (native-plugins, a plugin, version or target directory).",
    "Move the file named out of the way; the home holds only what install wrote.")
INSTALL_RACE = register(
    "install.race", "A directory of the agent home was replaced while the command ran "
    "(between its check and the write).",
    "Another program changes the home; stop it and run the command again (nothing was "
    "written through the replaced directory).")
INSTALL_CROSS_DEVICE = register(
    "install.cross-device", "A plugin, version or target directory lies on another file "
    "system than native-plugins, so a rename cannot be atomic.",
    "Keep the whole native-plugins tree on one file system (no mount point inside it).")
INSTALL_BUSY = register(
    "install.busy", "Another command holds the agent home's lock (install.lock) past the "
    "timeout.", "Wait for the other install, enable or uninstall to finish, or raise "
    "--lock-timeout.", exit_status=EXIT_ENVIRONMENT)
INSTALL_IO = register(
    "install.io", "A file of the agent home cannot be read or written (disk full, "
    "permission denied, I/O error); what was being staged was removed.",
    "Free space or fix the permissions of the path named, then run the command again; the "
    "previous state is unchanged.", exit_status=EXIT_ENVIRONMENT)
INSTALL_STATE = register(
    "install.state", "The home's state.json is not a strict horon.agent-home.v1 document "
    "(unknown field, bad value, an enabled version that is not installed).",
    "state.json is written only by horon-bundle; restore it from a backup or remove it and "
    "enable again (installed copies stay in native-plugins/).")
INSTALL_CHANNEL = register(
    "install.channel", "The bundle is of the qa channel.",
    "Install QA bundles only on purpose, with --allow-qa.")
INSTALL_UNPROVEN = register(
    "install.unproven", "A check install requires was skipped for the bundle (e.g. claimed = "
    "advertised with no advertised metadata recorded, or no recorded graph).",
    "Rebuild with horon-bundle build so that every claim is recorded and checkable.")
INSTALL_INTEGRITY = register(
    "install.integrity", "The staged copy differs from the bundle that was verified, or the "
    "bundle changed while it was being installed.",
    "Something rewrites the bundle or the home while install runs; nothing was installed.")
INSTALL_VERSION_CONFLICT = register(
    "install.version-conflict", "Different bytes are already installed under this id, "
    "version and target.",
    "An installed version is never rewritten: bump the version, or uninstall the installed "
    "one first.")
INSTALL_OCCUPIED = register(
    "install.occupied", "The final directory exists but holds no bundle that verifies as this "
    "id, version and target (an empty directory, a tampered or foreign copy).",
    "Run `horon-bundle status ID --verify`; uninstall the damaged copy, then install again.")
INSTALL_TAMPERED = register(
    "install.tampered", "An installed copy no longer verifies: a file changed, vanished or was "
    "added after install (the findings that follow name each).",
    "Do not load it: uninstall the version and install the bundle again.")
INSTALL_RECORD_MISMATCH = register(
    "install.record-mismatch", "The installed copy is not the one state.json recorded: its "
    "content digest or its plugin.json id, version or target differ.",
    "The copy was replaced after install; uninstall it and install the bundle again.")
INSTALL_NOT_INSTALLED = register(
    "install.not-installed", "The id, version or target named is not installed in the home.",
    "Run `horon-bundle list` to see what is installed.")
INSTALL_NOT_ENABLED = register(
    "install.not-enabled", "No version of the plugin is enabled for the target.",
    "Enable one first: `horon-bundle enable ID [VERSION]`.")
INSTALL_NAME = register(
    "install.name", "A plugin id, version or target given on the command line is malformed.",
    "Ids match ^[a-z][a-z0-9-]{1,62}$, versions are semantic versions, targets are triples.",
    exit_status=EXIT_USAGE)
INSTALL_HARNESS_DIRECTORY = register(
    "install.harness-directory", "A harness bundle directory was given; the home stores "
    "harness bundles as the zip `build` wrote, under its digest.",
    "Install the <name>-<version>.zip (or its .ref.json) instead.")
INSTALL_KIND_AMBIGUOUS = register(
    "install.kind-ambiguous", "The name is installed both as a native plugin and as a "
    "harness bundle.", "Say which with --kind native or --kind harness.",
    exit_status=EXIT_USAGE)
INSTALL_VERSION_REQUIRED = register(
    "install.version-required", "Several versions of the harness bundle are installed and "
    "none was named.", "Name the version: `horon-bundle check NAME VERSION`.",
    exit_status=EXIT_USAGE)
FETCH_EXISTS = register(
    "fetch.exists", "The directory `fetch --into` names exists (or appeared while fetch ran); "
    "fetch unpacks only into a new directory.",
    "Name a directory that does not exist yet; fetch creates it.")
FETCH_INTO = register(
    "fetch.into", "The parent of the directory `fetch --into` names is missing, not a "
    "directory, or writable by every user without the sticky bit.",
    "Create the parent directory first (mode 0755 or stricter).")
FETCH_IO = register(
    "fetch.io", "A file cannot be written while unpacking (disk full, permission denied, I/O "
    "error); the staging directory was removed and nothing was created under DIR.",
    "Free space or fix the permissions of the parent directory, then fetch again.",
    exit_status=EXIT_ENVIRONMENT)
INSTALL_UNSUPPORTED = register(
    "install.unsupported", "Installing into an agent home needs a POSIX system (descriptor-"
    "relative opens, flock).", "Install on Linux or macOS; on Windows use verify.",
    exit_status=EXIT_ENVIRONMENT)

# --- doctor (docs/doctor.md) ----------------------------------------------------------
TARGET_MISMATCH = register(
    "target.mismatch", "The bundle's target is not this host's; nothing was loaded.",
    "Run doctor on a machine of the bundle's target, or build the bundle for this host.")
DOCTOR_UNSUPPORTED = register(
    "doctor.unsupported-platform", "doctor runs on POSIX hosts only (Linux, macOS).",
    "Run doctor on a Linux or macOS machine; on Windows use verify.",
    exit_status=EXIT_ENVIRONMENT)
DOCTOR_ENVIRONMENT = register(
    "doctor.environment", "doctor cannot run here: the host target is unknown, or a temporary "
    "directory or the child process cannot be created.", "Read the message; fix the machine.",
    exit_status=EXIT_ENVIRONMENT)
ABI_STRUCT_SIZE = register(
    "abi.struct-size", "The handshake table's struct_size is below 104 (or was not written).",
    "Write the whole 104-byte HoronPluginApiV1 with struct_size = 104.")
ABI_MAJOR_MISMATCH = register(
    "abi.major-mismatch", "The handshake table advertises an ABI major other than 1.",
    "Build against the ABI v1 header (include/horon_plugin_abi_v1.h of a workspace "
    "`horon-bundle new` renders: HORON_ABI_MAJOR 1).")
ABI_MINOR = register(
    "abi.minor", "The table's ABI minor differs from plugin.json `abi.minor`.",
    "Let the build record the minor the library advertises; never edit plugin.json.")
ABI_WIRE_SCHEMA = register(
    "abi.wire-schema", "The table's wire_schema is not horon.wire.v1 / plugin.json's.",
    "Point wire_schema at the static string \"horon.wire.v1\".")
ABI_PLUGIN_ID = register(
    "abi.plugin-id", "The table's plugin_id differs from plugin.json `id`.",
    "Generate the id from one source: the template's build.rs reads it from the plugin's "
    "`id` in horon-release.toml.")
ABI_FEATURES = register(
    "abi.features", "The table's advertised features differ from plugin.json `features`.",
    "Generate the advertised list from the compiled features (the build.rs that "
    "`horon-bundle new` renders does).")
ABI_NULL_ENTRY = register(
    "abi.null-entry", "An entry of the handshake table is NULL or was not written.",
    "Fill in all nine entries: create … free_buffer.")
ABI_OUT_OVERRUN = register(
    "abi.out-overrun", "A successful handshake wrote more than the 104 bytes of a v1 table.",
    "Write exactly sizeof(HoronPluginApiV1), whatever out_capacity says.")
ABI_REFUSAL_CODE = register(
    "abi.refusal-code", "A single-fault request (or a correct one) got the wrong status code.",
    "Check the request in the contract's order; see `horon-bundle docs abi-v1`, section 3.")
ABI_REFUSAL_ORDER = register(
    "abi.refusal-order", "A request with several faults did not get the code of the first "
    "failing check in the fixed order.",
    "Check NULL, struct_size, ABI major, wire schema, capacity, features, in that order.")
ABI_OUT_TOUCHED = register(
    "abi.out-touched", "The handshake changed *out although it refused the request.",
    "Check everything first; write the table only when answering OK.")
ABI_INSTANCE = register(
    "abi.instance", "An instance entry (create, start, release, shutdown) failed on a valid "
    "call, or the whoami tool call ended in an error.",
    "create must accept a config object, two directories and the advertised features.")
ABI_DESCRIBE = register(
    "abi.describe", "describe failed, or its answer is not strict JSON whose id, version and "
    "features equal plugin.json.", "Generate describe from the same constants as plugin.json.")
ABI_FRAME_FORMAT = register(
    "abi.frame-format", "A frame is not a strict JSON object with an integer seq and a known "
    "kind.", "Frames are {\"seq\":N,\"kind\":\"tool_envelope\"|\"done\"|\"error\",…}.")
ABI_FRAME_SEQ = register(
    "abi.frame-seq", "Frame seq numbers do not run 0, 1, 2 … without a gap.",
    "Number frames from 0 per operation and never skip one.")
ABI_FRAME_TERMINAL = register(
    "abi.frame-terminal", "An operation did not end with exactly one terminal frame (done or "
    "error) as its last frame.", "Emit one done or error frame, then answer next with 1.")
ABI_FRAME_SIZE = register(
    "abi.frame-size", "A frame or describe answer is above the 64 MiB message limit.",
    "Split large results; a host refuses anything above 64 MiB.")
ABI_BUFFER_LEAK = register(
    "abi.buffer-leak", "A buffer handed out by describe or next cannot be given back through "
    "free_buffer (NULL or missing entry, or a NULL pointer with a length).",
    "Fill in free_buffer and hand out buffers it can take back.")
DOCTOR_SIDE_EFFECT_WRITE = register(
    "doctor.side-effect-write", "The library wrote to the file system where the contract "
    "forbids it (anything while loaded, handshaking or describing; outside the instance "
    "directory later).", "Write only inside the instance directory, and only in operations.")
DOCTOR_SIDE_EFFECT_NETWORK = register(
    "doctor.side-effect-network", "The library opened a network connection while loaded, "
    "handshaking, creating or describing.",
    "Connect upstream only in operations (start/next), never when loaded or described.")

# --- harness bundles (docs/harness.md): manifests, components, refs, marketplaces --------
HARNESS_KIND_AMBIGUOUS = register(
    "harness.kind-ambiguous",
    "The workspace holds both a native declaration (horon-release.toml) and a harness manifest "
    "(.claude-plugin/ or .muse-plugin/), or both harness manifests.",
    "Say which to build with --kind native or --kind harness (docs/harness.md).",
    exit_status=EXIT_USAGE)
HARNESS_MANIFEST_MISSING = register(
    "harness.manifest-missing",
    "No harness manifest: neither .claude-plugin/plugin.json, .muse-plugin/plugin.json nor a "
    ".claude-plugin/marketplace.json listing the plugin.",
    "Build a plugin directory holding .claude-plugin/plugin.json (or a marketplace root).")
HARNESS_MANIFEST_TYPE = register(
    "harness.manifest-type", "A plugin.json field the host documents has the wrong JSON type.",
    "Use the type the host's manifest reference gives (docs/harness.md lists the fields).")
HARNESS_MANIFEST_VALUE = register(
    "harness.manifest-value",
    "A plugin.json value is malformed: a name that cannot name the bundle's file, a version "
    "that cannot, a required field missing or empty, a value the host refuses (a URL, a "
    "version range, a userConfig option key), or an unknown key inside a strict object "
    "(userConfig options).",
    "See the field in docs/harness.md; the host refuses to load such a manifest.")
HARNESS_MANIFEST_UNKNOWN_FIELD = register(
    "harness.manifest-unknown-field",
    "Warning: plugin.json has a top-level field the host does not know (the host strips it, "
    "so whatever it was meant to do does not happen).",
    "Remove the field or correct its spelling; --strict refuses it.")
HARNESS_NAME_STYLE = register(
    "harness.name-style",
    "Warning: the plugin's name is not kebab-case (lowercase letters, digits and hyphens, "
    "such as `guard-kit`); the host accepts it and warns.",
    "Rename the plugin in kebab-case (the message suggests one); --strict refuses it.")
HARNESS_NAME_RESERVED = register(
    "harness.name-reserved",
    "The plugin's name is one Claude Code keeps for Anthropic's own plugins (claude, "
    "anthropic, claude-…, anthropic-…, cc-plugin-…, official beside claude or anthropic) or "
    "holds a character outside printable ASCII; the host refuses to load or install it.",
    "Choose another name (docs/claude-marketplace.md lists the reserved names).")
HARNESS_PATH_UNSAFE = register(
    "harness.path-unsafe",
    "A component path is absolute, lacks the ./ prefix, has `..`, a backslash or a reserved "
    "name, or resolves (also through a symbolic link) outside the plugin root.",
    "Component paths are ./-relative POSIX paths inside the plugin directory.")
HARNESS_PATH_MISSING = register(
    "harness.path-missing", "A component path plugin.json declares does not exist.",
    "Create the file or directory, or remove the entry from plugin.json.")
HARNESS_RESERVED_PATH = register(
    "harness.reserved-path",
    "A plugin file has a name the bundle reserves at its root (SHA256SUMS, catalogue.json, "
    "provenance.json).", "Rename or move the file; the bundle writes these itself.")
HARNESS_FILE_TYPE = register(
    "harness.file-type",
    "A plugin file is not a regular file (a FIFO, socket or device), is a symbolic link to "
    "nothing, is unreadable, or has an unsafe name.",
    "Bundles hold regular files with portable names only.")
HARNESS_TREE_LIMIT = register(
    "harness.tree-limit",
    "A plugin tree is over one of its limits: too many entries, directories nested too deep, "
    "a path or a name too long, one file too large, or too many bytes in all (each judged "
    "from the file system's stat, before a byte is read).",
    "The limits are far above real plugins, vendored node_modules included (every limit: "
    "docs/limits.md); leave build output and caches out of the plugin (.gitignore).")
HARNESS_HARD_LINK = register(
    "harness.hard-link",
    "A plugin file has more than one hard link: its other name may be any file of the same "
    "file system, outside the plugin too, and nothing inside the plugin can tell which.",
    "Copy the file instead of linking it (cp, not ln; pnpm: package-import-method=copy).")
HARNESS_LINK_LOOP = register(
    "harness.link-loop",
    "A symbolic link in the plugin never resolves to a file: it points at itself, links "
    "form a cycle, more than 40 links are chained, or it names a directory that contains it.",
    "The host would copy such a link forever or fail; replace it with the file or "
    "directory it means.")
HARNESS_CHANGED = register(
    "harness.changed",
    "A plugin file was replaced, removed, retyped or resized between the walk that judged "
    "it and the read that copied it.",
    "Something is changing the plugin while it is built; build from a checkout nobody "
    "else writes.")
HARNESS_JSON_SCHEMA = register(
    "harness.json-schema",
    "hooks.json or .mcp.json does not have the shape the host reads ({\"hooks\": {event: "
    "[{matcher, hooks: [...]}]}}, {\"mcpServers\": {name: {...}}}), or a known field has the "
    "wrong type or value.",
    "Fix the named field; the host refuses to load such a file, so none of its hooks or "
    "servers would run.")
HARNESS_FRONTMATTER = register(
    "harness.frontmatter",
    "Warning: a skill, command or agent has no frontmatter block, frontmatter this toolchain "
    "did not read (not UTF-8, over a work budget), or a field the host drops at load "
    "(metadata that is not a mapping).",
    "Start the file with a `---` block of `key: value` lines; --strict refuses it.")
HARNESS_FRONTMATTER_INVALID = register(
    "harness.frontmatter-invalid",
    "Warning: a skill, command or agent has frontmatter Claude Code's validator rejects: not "
    "YAML even once its `key: value` lines are quoted as the host quotes them, not a mapping "
    "(the host then loads the component with every field dropped), or a name, description, "
    "allowed-tools or shell of a type the host refuses (that field is dropped).",
    "Quote the value (or use a `|` block) so the block is YAML; refused under --strict or "
    "--host claude-code, whose profile marks it broken.")
HARNESS_LIMIT = register(
    "harness.limit",
    "A harness plugin asks for more work than the reader's budgets allow, checked before the "
    "work: a plugin.json component field naming over 10,000 paths, or hook and server "
    "declarations over their size budget (docs/threat-model.md, \"Work budgets\").",
    "No real plugin comes near the limit: list each path once. A zip that does is built to "
    "make its reader slow; do not install it.")
HARNESS_HOOK_MISPLACED = register(
    "harness.hook-misplaced",
    "PreToolUse or PermissionRequest hooks are declared outside the event map (at the top "
    "level of plugin.json or of a hooks file, under another key, or inside a matcher group); "
    "Claude Code refuses the plugin: a guard that is not loaded guards nothing.",
    "Declare them under \"hooks\": {\"PreToolUse\": [{\"matcher\": …, \"hooks\": [...]}]} "
    "(docs/harness.md).")
HARNESS_UNKNOWN_EVENT = register(
    "harness.unknown-event",
    "A hook is declared for an event name no host profile knows (event names are "
    "case-sensitive).",
    "Use an event of the host's list (`horon-bundle profiles`, docs/harness.md), or pass the "
    "profile of a host that fires it with --host FILE.")
HARNESS_EVENT_NOT_FIRED = register(
    "harness.event-not-fired",
    "Warning: a hook is declared for an event the chosen host cannot fire (understood but not "
    "fired, or absent); its guard never runs there.",
    "The bundle stays valid and installs; --strict refuses it. Move the hook to an event the "
    "host fires if the guard matters.")
HARNESS_CATALOGUE = register(
    "harness.catalogue",
    "catalogue.json is missing or differs from the catalogue recomputed from the bundle's files.",
    "The catalogue was edited or the files changed after the build; do not trust this bundle.")
HARNESS_PROVENANCE = register(
    "harness.provenance",
    "provenance.json is missing, is not the harness statement the toolchain writes, or its "
    "subjects disagree with the files.",
    "The files changed after the build; do not trust this bundle.")
HOOK_COMMAND_MISSING = register(
    "hook.command-missing",
    "A hook or MCP server command references a file through ${CLAUDE_PLUGIN_ROOT} that is not "
    "in the bundle.",
    "Add the script to the plugin directory or fix the path; the host would fail to run it.")
HOOK_COMMAND_OUTSIDE = register(
    "hook.command-outside",
    "A hook or MCP server command references a path through ${CLAUDE_PLUGIN_ROOT} that "
    "resolves outside the bundle (`..`).",
    "Keep every script the plugin runs inside the plugin directory.")
HOOK_COMMAND_UNRESOLVED = register(
    "hook.command-unresolved",
    "Warning: a ${CLAUDE_PLUGIN_ROOT} path holds another variable, a glob or a substitution, "
    "so its file cannot be checked.", "Spell the path out; --strict refuses it.")
HOOK_UNQUOTED_VARIABLE = register(
    "hook.unquoted-variable",
    "Warning: a hook's shell command uses ${CLAUDE_PLUGIN_ROOT}, ${CLAUDE_PLUGIN_DATA} or "
    "${CLAUDE_PROJECT_DIR} outside quotes (Claude Code's validator warns too): a path with a "
    "space splits into several words and the command fails.",
    "Write \"${CLAUDE_PLUGIN_ROOT}/…\" in double quotes, or use the exec form (command and "
    "args); --strict refuses it.")
HOOK_NOT_EXECUTABLE = register(
    "hook.not-executable",
    "Warning: a hook runs a bundled script directly (not through an interpreter) but the "
    "script has no executable bit.",
    "`chmod +x` the script (and commit the mode), or prefix the interpreter; --strict refuses "
    "it.")
HOOK_ENV_CREDENTIAL = register(
    "hook.env-credential",
    "Warning: a hook, its script or an MCP server reads a credential from an environment "
    "variable; hosts that clear the environment (Muse Code) never pass it.",
    "Read credentials from a file the installer writes; refused under --strict or --host of a "
    "host that clears the environment.")
HOOK_PERMISSION_ASK = register(
    "hook.permission-ask",
    "Warning: a hook answers permissionDecision \"ask\"; a host without a permission prompt "
    "records it and treats it as allow.",
    "Decide allow or deny in the hook; refused under --strict or a --host profile marking it "
    "broken.")
HOOK_UNJUDGED = register(
    "hook.unjudged",
    "Warning: hook lint cannot judge something a hook or a script it runs does: an environment "
    "variable or a permissionDecision answer computed at run time, a binary, a script over "
    "lint's size budget, or Python that does not parse.",
    "Lint reads what a plugin declares, it proves nothing about what a script does; spell names "
    "and answers out as literals where you can. --strict refuses it.")
HOOK_HTTP_PRETOOLUSE = register(
    "hook.http-pretooluse",
    "Warning: an HTTP hook guards PreToolUse; when the endpoint fails, one host denies the "
    "call (fails closed) and upstream Claude Code lets it through (fails open).",
    "Point it only at an endpoint you accept as a gate, or use a command hook; refused under "
    "--strict or a --host profile marking it broken.")
PROFILE_UNKNOWN = register(
    "profile.unknown",
    "--host names no shipped profile (or no shipped version of it) and no profile file.",
    "Run `horon-bundle profiles` for the shipped NAME@VERSION tokens, or pass a profile file.",
    exit_status=EXIT_USAGE)
PROFILE_INVALID = register(
    "profile.invalid",
    "A host profile file is not a valid horon.host-profile.v1 document (JSON, unknown or "
    "missing field, type, an event listed twice, an unknown lint code).",
    "See the profile format in docs/harness.md; profiles are read strictly.",
    exit_status=EXIT_USAGE)
REF_INVALID = register(
    "ref.invalid", "A .ref.json file is not exactly {\"name\": …, \"sha256\": <64 hex>}.",
    "Use the <zip>.ref.json that `build` wrote beside the zip.")
REF_ZIP_MISSING = register(
    "ref.zip-missing", "The zip a ref names (X.zip beside X.zip.ref.json, or --zip) is absent.",
    "Put the zip beside its ref or pass --zip PATH.")
REF_DIGEST = register(
    "ref.digest",
    "The zip's SHA-256 differs from its ref: the bytes are not the ones the ref selected "
    "(checked before any entry is read).",
    "Do not unpack it; fetch the zip again or use the ref that matches it.")
REF_NAME = register(
    "ref.name", "The ref's name differs from the plugin name inside the zip.",
    "Use the ref written for this zip.")
MARKETPLACE_INVALID = register(
    "marketplace.invalid",
    "marketplace.json is not the shape the host reads (name, owner, plugins with name and "
    "source), or a listed local plugin directory is missing or outside the repository.",
    "Fix the named entry (docs/harness.md).")
MARKETPLACE_SKIPPED = register(
    "marketplace.skipped",
    "Warning: a listed plugin has a remote source (github, git URL, npm …) and cannot be built "
    "offline; it was skipped.", "Build it from its own checkout.")
MARKETPLACE_VERSION = register(
    "marketplace.version",
    "Warning: plugin.json and the marketplace entry give different versions; plugin.json wins "
    "(the host's precedence) and that version is pinned.",
    "Give the version in one place.")
HARNESS_UNSUPPORTED = register(
    "harness.unsupported",
    "An option given does not apply to harness bundles (native build options, install's "
    "--enable and --allow-qa, a --target).",
    "Run the command without the option (docs/harness.md).",
    exit_status=EXIT_USAGE)

# --- the transparency log of a store (docs/transparency-log.md) ---------------------------
LOG_KEY = register(
    "log.key", "A signed-note key is malformed: not `PRIVATE+KEY+<name>+<hash>+<key>` (a signer) "
    "or `<name>+<hash>+<key>` (a verifier) of an Ed25519 key, a name with a space or `+`, or a "
    "hash that is not the key's.",
    "Use the files and lines `horon-bundle log keygen NAME` writes, unmodified.")
LOG_KEY_FILE = register(
    "log.key-file", "HORON_PUBLISH_LOG_KEY names a file that cannot be read, or a signer file "
    "others may read.", "Point HORON_PUBLISH_LOG_KEY at the signer file `log keygen` wrote "
    "(mode 0600), e.g. one a CI step writes from a secret.", exit_status=EXIT_ENVIRONMENT)
LOG_CHECKPOINT = register(
    "log.checkpoint", "A checkpoint is not a signed note of three body lines (origin, size, "
    "base64 SHA-256 root) with signature lines, or is larger than its limit.",
    "Use the log's own `checkpoint` file (or the one `log verify` printed), unmodified.")
LOG_SIGNATURE = register(
    "log.signature", "The checkpoint carries no valid signature by the log's key (or a "
    "signature line of that key does not verify), or its origin is not the key's name.",
    "Check the verifier key you were given; a checkpoint not signed by it is not the log's.")
LOG_TILE = register(
    "log.tile", "A tile or entry bundle the checkpoint needs is missing, has the wrong size, or "
    "an entry bundle holds a malformed or oversized entry.",
    "The log's files are incomplete or damaged: copy the store's log/ directory whole.")
LOG_ROOT = register(
    "log.root", "The root recomputed from the entry bundles differs from the checkpoint's "
    "(a leaf was changed after it was logged).",
    "The log was rewritten: do not trust the store; report it to its operator.")
LOG_LEAF = register(
    "log.leaf", "A leaf differs from the store's index entry it records (the entry was "
    "rewritten or removed), or an index entry of the store is not in the log.",
    "The store changed what it had published: do not trust the store; report the entry named.")
LOG_INCONSISTENT = register(
    "log.inconsistent", "A checkpoint is not an extension of an earlier one (no valid "
    "consistency proof between them): the log was forked or rewritten.",
    "Keep the earlier checkpoint as evidence and report both to the store's operator.")
LOG_ROLLBACK = register(
    "log.rollback", "The log's checkpoint is smaller than one already seen (a rollback, or a "
    "view split from the one this host saw).",
    "The store serves an older log than it served before: do not install from it; report it.")
LOG_NOT_INCLUDED = register(
    "log.not-included", "The store's index entry for the bundle is not in the log's "
    "checkpoint, or names another archive digest.",
    "Publish the bundle again with the log key set (a publish adds what is missing), or use "
    "the bundle the store's entry names.")
LOG_WITNESS = register(
    "log.witness", "Fewer than the required number of the named witnesses cosigned the "
    "checkpoint (or a witness key is malformed).",
    "Wait for the witnesses to cosign the new checkpoint, or check the witness keys given.")
LOG_UNSUPPORTED = register(
    "log.unsupported", "--log names something other than a local store directory or file:// "
    "URL.", "Copy the store's log/ and index/ locally (they are static files) and name the "
    "copy.", exit_status=EXIT_USAGE)
