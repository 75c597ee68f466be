"""ABI v1 of horon_agent_plugin_get_api_v1 as ctypes types (see templates/include/).

Imported only inside the child process that loads a library; the parent never loads one.
"""

from __future__ import annotations

import ctypes

ABI_MAJOR = 1
ABI_MINOR = 0
WIRE_SCHEMA = b"horon.wire.v1"
SYMBOL = "horon_agent_plugin_get_api_v1"
REQUEST_SIZE = 24
TABLE_SIZE = 104
MAX_FRAME_BYTES = 64 << 20

STATUS_NAMES = {
    0: "OK",
    1: "NULL_POINTER",
    2: "STRUCT_TOO_SHORT",
    3: "ABI_MAJOR_MISMATCH",
    4: "WIRE_SCHEMA_MISMATCH",
    5: "CAPACITY_TOO_SMALL",
    6: "FEATURE_MISSING",
}
ENTRY_NAMES = ("create", "describe", "start", "next", "cancel", "release", "shutdown", "destroy",
               "free_buffer")


class HostRequest(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_uint32),
        ("abi_major", ctypes.c_uint16),
        ("host_api_minor", ctypes.c_uint16),
        ("wire_schema", ctypes.c_char_p),
        ("required_features", ctypes.c_char_p),
    )


class Buf(ctypes.Structure):
    _fields_ = (("ptr", ctypes.POINTER(ctypes.c_uint8)), ("len", ctypes.c_size_t))


CREATE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                          ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p))
DESCRIBE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(Buf))
START = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                         ctypes.POINTER(ctypes.c_uint64))
NEXT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(Buf))
OP = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64)
INSTANCE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
FREE_BUFFER = ctypes.CFUNCTYPE(None, Buf)


class PluginApi(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_uint32),
        ("abi_major", ctypes.c_uint16),
        ("abi_minor", ctypes.c_uint16),
        ("wire_schema", ctypes.c_void_p),
        ("features", ctypes.c_void_p),
        ("plugin_id", ctypes.c_void_p),
        ("create", ctypes.c_void_p),
        ("describe", ctypes.c_void_p),
        ("start", ctypes.c_void_p),
        ("next", ctypes.c_void_p),
        ("cancel", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("shutdown", ctypes.c_void_p),
        ("destroy", ctypes.c_void_p),
        ("free_buffer", ctypes.c_void_p),
    )


ENTRY_TYPES = {"create": CREATE, "describe": DESCRIBE, "start": START, "next": NEXT,
               "cancel": OP, "release": OP, "shutdown": INSTANCE, "destroy": DESTROY,
               "free_buffer": FREE_BUFFER}

GET_API = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(HostRequest), ctypes.c_void_p,
                           ctypes.c_uint32)

assert ctypes.sizeof(HostRequest) == REQUEST_SIZE
assert ctypes.sizeof(PluginApi) == TABLE_SIZE
