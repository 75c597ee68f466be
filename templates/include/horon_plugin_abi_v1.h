/*
 * horon_plugin_abi_v1.h: the Horon agent plugin ABI, version 1.
 *
 * A Horon plugin is a native shared library (.so / .dylib / .dll) that the
 * host loads into its own process. Host and plugin meet through exactly one
 * exported symbol, horon_agent_plugin_get_api_v1. The host asks; the plugin
 * either refuses with a status code or fills in a table of nine function
 * pointers, and every later call goes through that table. Requests and
 * results cross as JSON (wire schema "horon.wire.v1").
 *
 * The full contract, with examples, is `horon-bundle docs abi-v1`. The Rust
 * mirror of this header is the template's src/abi.rs; the two must not drift.
 *
 * ABI v1 is defined for 64-bit targets (LP64 and LLP64) only.
 *
 * Licensed under the Apache License, Version 2.0.
 */
#ifndef HORON_PLUGIN_ABI_V1_H
#define HORON_PLUGIN_ABI_V1_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions and names                                                       */
/* ------------------------------------------------------------------------ */

/* A host and a plugin with different majors never talk. */
#define HORON_ABI_MAJOR 1
/* Minor versions only append entries to the end of the table. */
#define HORON_ABI_MINOR 0
/* The JSON exchanged through start/next. */
#define HORON_WIRE_SCHEMA "horon.wire.v1"
/* The one exported symbol, as a string for dlsym/GetProcAddress. */
#define HORON_ENTRY_SYMBOL "horon_agent_plugin_get_api_v1"

/* Static metadata section (see "Static metadata section" below). */
#define HORON_SECTION_FORMAT "horon.abi.v1"
#define HORON_SECTION_NAME_ELF_PE ".horon_abi"
#define HORON_SECTION_SEGMENT_MACHO "__DATA"
#define HORON_SECTION_NAME_MACHO "__horon_abi"

/* Bytes of HoronHostRequestV1 a v1 plugin needs and of HoronPluginApiV1 it writes. */
#define HORON_HOST_REQUEST_V1_SIZE 24u
#define HORON_PLUGIN_API_V1_SIZE 104u

/* A request (start) or a frame (next) above this size is refused: 64 MiB. */
#define HORON_MAX_MESSAGE_BYTES ((size_t)64 * 1024 * 1024)

/* ------------------------------------------------------------------------ */
/* Handshake status codes                                                   */
/* ------------------------------------------------------------------------ */

/*
 * The plugin checks the request in exactly this order and answers with the
 * first check that fails, so a request with several faults always gets the
 * same, predictable answer:
 *
 *   struct_size 8, abi_major 2, out_capacity 0         -> 2 STRUCT_TOO_SHORT
 *   abi_major 2, wire_schema NULL, out_capacity 96     -> 3 ABI_MAJOR_MISMATCH
 *   wire_schema "horon.wire.v0", out_capacity 0        -> 4 WIRE_SCHEMA_MISMATCH
 *   out_capacity 0, required_features "imap" (absent)  -> 5 CAPACITY_TOO_SMALL
 *   req NULL (nothing else can be read)                -> 1 NULL_POINTER
 *
 * On any refusal *out is left untouched; on success exactly 104 bytes are
 * written, whatever the capacity. A plugin built for ABI 2 answers
 * ABI_MAJOR_MISMATCH before any instance exists.
 */
#define HORON_STATUS_OK                   0
#define HORON_STATUS_NULL_POINTER         1 /* req or out is NULL */
#define HORON_STATUS_STRUCT_TOO_SHORT     2 /* req->struct_size < 24 */
#define HORON_STATUS_ABI_MAJOR_MISMATCH   3 /* req->abi_major != HORON_ABI_MAJOR */
#define HORON_STATUS_WIRE_SCHEMA_MISMATCH 4 /* req->wire_schema NULL or != HORON_WIRE_SCHEMA */
#define HORON_STATUS_CAPACITY_TOO_SMALL   5 /* out_capacity < 104 */
#define HORON_STATUS_FEATURE_MISSING      6 /* a required feature is not advertised */

/* ------------------------------------------------------------------------ */
/* Entry return values                                                      */
/*                                                                          */
/* The ABI fixes the sign: 0 is success, next() returns 1 for "no more      */
/* frames", and any negative value is an error. A host must treat every     */
/* negative value as an error. The values below are the convention of the  */
/* Horon template plugin, which hosts may use for messages.                 */
/* ------------------------------------------------------------------------ */

#define HORON_NEXT_FRAME      0  /* *frame_out holds a frame */
#define HORON_NEXT_NO_MORE    1  /* the terminal frame has been handed out */

#define HORON_ERR_NULL_ARGUMENT (-1) /* a required pointer argument is NULL */
#define HORON_ERR_INVALID       (-2) /* malformed UTF-8/JSON/shape, empty directory, bad feature list */
#define HORON_ERR_UNSUPPORTED   (-3) /* request kind or tool name not offered */
#define HORON_ERR_FEATURE       (-4) /* the create grant names a feature not advertised */
#define HORON_ERR_UNKNOWN_OP    (-5) /* no such operation on this instance */
#define HORON_ERR_BUSY          (-6) /* 64 active operations already */
#define HORON_ERR_SHUT_DOWN     (-7) /* start after shutdown */
#define HORON_ERR_TOO_LARGE     (-8) /* request above HORON_MAX_MESSAGE_BYTES */

/* ------------------------------------------------------------------------ */
/* Feature lists                                                            */
/*                                                                          */
/* A feature list is one NUL-terminated string of comma-separated tokens:   */
/* no spaces, no empty or duplicate tokens, sorted by byte order, each      */
/* token [a-z0-9][a-z0-9_-]*. The empty string is the empty list, e.g.      */
/* "" or "clock,greeting". A plugin built from the template advertises      */
/* exactly the Cargo features it was compiled with (build.rs reads          */
/* CARGO_CFG_FEATURE), so the advertised list cannot drift from the build.  */
/* ------------------------------------------------------------------------ */

/* What the host asks for: 24 bytes. */
typedef struct HoronHostRequestV1 {
  uint32_t struct_size;          /* bytes the host filled in; >= 24 for v1. A newer
                                    host may send more: a v1 plugin reads only the
                                    24-byte prefix it knows. */
  uint16_t abi_major;            /* HORON_ABI_MAJOR */
  uint16_t host_api_minor;       /* informational: never a reason to refuse */
  const char *wire_schema;       /* NUL-terminated; NULL counts as a mismatch */
  const char *required_features; /* feature list the plugin must advertise every
                                    token of; NULL or "" = none */
} HoronHostRequestV1;

/* A byte buffer owned by the plugin (the JSON of describe and of each frame).
 * The host reads ptr[0..len), then hands the struct back, unchanged and
 * exactly once, to free_buffer. Never free() it: host and plugin may use
 * different allocators. free_buffer of {NULL, 0} is a no-op. */
typedef struct HoronBuf {
  uint8_t *ptr;
  size_t len;
} HoronBuf;

/* The nine entries. `instance` is the opaque handle from create. */

/* Creates an instance from the grant, which is all the host hands over:
 *   config_json/config_len  a JSON object (UTF-8, strict), copied;
 *   instance_dir            the one directory the instance may write to;
 *   config_dir              the directory it reads configuration from;
 *   features                the features enabled for this instance: a feature
 *                           list, every token advertised ("" = none).
 * No login, no socket, no other path: creating, loading or describing an
 * instance performs no upstream connection. Returns 0 and sets *instance_out,
 * or a negative code and leaves *instance_out untouched. */
typedef int32_t (*HoronCreateFn)(const uint8_t *config_json, size_t config_len,
                                 const char *instance_dir, const char *config_dir,
                                 const char *features, void **instance_out);

/* JSON {"id":…,"version":…,"features":[…],"tools":[{"name":"<id>__<tool>",…}]}
 * into *out (plugin-owned, return it through free_buffer). */
typedef int32_t (*HoronDescribeFn)(void *instance, HoronBuf *out);

/* Starts an operation from a request
 *   {"kind":"tool_call","name":"<id>__<tool>","arguments":{…}}
 * and returns its id in *op_out. Requests above 64 MiB are refused. */
typedef int32_t (*HoronStartFn)(void *instance, const uint8_t *request_json, size_t len,
                                uint64_t *op_out);

/* Hands out the operation's next frame in *frame_out (returns 0), or returns
 * 1 when the terminal frame has already been handed out, or < 0 on error.
 * Frames are JSON objects {"seq":N,"kind":K[,"body":…]}:
 *   - zero or more K = "tool_envelope" frames, the product's result in "body";
 *   - then exactly one terminal frame, K = "done" or K = "error" (the error
 *     frame's "body" is {"code":…,"message":…});
 *   - seq starts at 0 and grows by 1 with no gaps: a dropped, repeated or
 *     reordered frame is a protocol error, and so is a second terminal frame;
 *   - a frame above 64 MiB is refused by the host. */
typedef int32_t (*HoronNextFn)(void *instance, uint64_t op, HoronBuf *frame_out);

/* Asks an operation to stop: its remaining frames become one terminal "error"
 * frame unless the terminal frame is already out. */
typedef int32_t (*HoronCancelFn)(void *instance, uint64_t op);

/* Forgets an operation (finished or not); its id is not reused. */
typedef int32_t (*HoronReleaseFn)(void *instance, uint64_t op);

/* Refuses new operations; active ones end with an "error" frame. */
typedef int32_t (*HoronShutdownFn)(void *instance);

/* Frees the instance; the handle is dead afterwards. NULL is a no-op. */
typedef void (*HoronDestroyFn)(void *instance);

/* Takes back a buffer from describe or next. */
typedef void (*HoronFreeBufferFn)(HoronBuf buf);

/* What the plugin fills in: 104 bytes. Every pointer is static for the
 * library's lifetime; every entry of a conformant plugin is non-NULL. A host
 * built against a newer header reads only the prefix it knows. */
typedef struct HoronPluginApiV1 {
  uint32_t struct_size;          /*   0: bytes written, 104 */
  uint16_t abi_major;            /*   4: HORON_ABI_MAJOR */
  uint16_t abi_minor;            /*   6: HORON_ABI_MINOR */
  const char *wire_schema;       /*   8: HORON_WIRE_SCHEMA */
  const char *features;          /*  16: the advertised feature list */
  const char *plugin_id;         /*  24: ^[a-z][a-z0-9-]{1,62}$ */
  HoronCreateFn create;          /*  32 */
  HoronDescribeFn describe;      /*  40 */
  HoronStartFn start;            /*  48 */
  HoronNextFn next;              /*  56 */
  HoronCancelFn cancel;          /*  64 */
  HoronReleaseFn release;        /*  72 */
  HoronShutdownFn shutdown;      /*  80 */
  HoronDestroyFn destroy;        /*  88 */
  HoronFreeBufferFn free_buffer; /*  96 */
} HoronPluginApiV1;

/* The handshake. Pure metadata: it creates no instance, allocates nothing the
 * host must free, opens no file or socket, starts no thread. Checks run in
 * the order of the status codes above; on any refusal *out is untouched, on
 * success exactly HORON_PLUGIN_API_V1_SIZE bytes are written to *out.
 * out_capacity is the number of bytes available at out. */
typedef int32_t (*HoronGetApiV1Fn)(const HoronHostRequestV1 *req, HoronPluginApiV1 *out,
                                   uint32_t out_capacity);

#if defined(_WIN32)
#define HORON_PLUGIN_EXPORT __declspec(dllexport)
#else
#define HORON_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

HORON_PLUGIN_EXPORT int32_t horon_agent_plugin_get_api_v1(const HoronHostRequestV1 *req,
                                                          HoronPluginApiV1 *out,
                                                          uint32_t out_capacity);

/* ------------------------------------------------------------------------ */
/* Static metadata section                                                  */
/*                                                                          */
/* A library built from the template also carries its advertised metadata  */
/* as compact JSON (keys sorted) in a section named ".horon_abi" (ELF, PE)  */
/* or "__DATA,__horon_abi" (Mach-O), e.g.                                   */
/*   {"abi_major":1,"abi_minor":0,"features":["clock","greeting"],          */
/*    "format":"horon.abi.v1","plugin_id":"example",                        */
/*    "wire_schema":"horon.wire.v1"}                                        */
/* so a verifier can compare claims without loading the library. It holds   */
/* the same constants as the handshake table. PE images keep only 8 bytes   */
/* of a section name: in a linked DLL the section reads ".horon_a".         */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Not a sandbox                                                            */
/*                                                                          */
/* The plugin runs in the host's address space. NULL and length checks      */
/* catch honest mistakes, not a hostile library: a panic=abort, a double    */
/* free or a segfault ends the whole process. Load untrusted libraries in a */
/* child process.                                                           */
/* ------------------------------------------------------------------------ */

/* Layout checks: the sizes and offsets are the contract. */
#if defined(__cplusplus)
#define HORON_STATIC_ASSERT_ static_assert
#else
#define HORON_STATIC_ASSERT_ _Static_assert
#endif
HORON_STATIC_ASSERT_(sizeof(void *) == 8, "Horon plugin ABI v1 is defined for 64-bit targets only");
HORON_STATIC_ASSERT_(sizeof(HoronHostRequestV1) == HORON_HOST_REQUEST_V1_SIZE,
                     "HoronHostRequestV1 must be 24 bytes");
HORON_STATIC_ASSERT_(offsetof(HoronHostRequestV1, abi_major) == 4, "request layout");
HORON_STATIC_ASSERT_(offsetof(HoronHostRequestV1, host_api_minor) == 6, "request layout");
HORON_STATIC_ASSERT_(offsetof(HoronHostRequestV1, wire_schema) == 8, "request layout");
HORON_STATIC_ASSERT_(offsetof(HoronHostRequestV1, required_features) == 16, "request layout");
HORON_STATIC_ASSERT_(sizeof(HoronBuf) == 16, "HoronBuf must be 16 bytes");
HORON_STATIC_ASSERT_(sizeof(HoronPluginApiV1) == HORON_PLUGIN_API_V1_SIZE,
                     "HoronPluginApiV1 must be 104 bytes");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, abi_minor) == 6, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, wire_schema) == 8, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, features) == 16, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, plugin_id) == 24, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, create) == 32, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, next) == 56, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, destroy) == 88, "table layout");
HORON_STATIC_ASSERT_(offsetof(HoronPluginApiV1, free_buffer) == 96, "table layout");
#undef HORON_STATIC_ASSERT_

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HORON_PLUGIN_ABI_V1_H */
