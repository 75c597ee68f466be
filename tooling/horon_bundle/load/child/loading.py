"""Loading the library inside the child, and reading what it hands back, defensively.

Runs in the child only: imports nothing from the toolchain but the ABI types.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

from horon_bundle.abi import types as t

TYPE_CHECKING = False  # not typing's: the child does not import typing (its start-up)
if TYPE_CHECKING:
    from typing import Any


def marker(name: str) -> None:
    """A syscall a tracer can see (readlink of a path that never exists), to split phases.
    readlink, not stat: the interpreter's start-up stats hundreds of paths and readlinks a few,
    so the tracer is asked for readlink alone (`doctor.trace.TRACED`) and the start-up's stats
    run without stopping."""
    with contextlib.suppress(OSError):
        os.readlink(f"/.horon-doctor-phase/{name}")  # noqa: PTH115 - the raw syscall is the point


def c_string(address: int | None, limit: int = 4096) -> str | None:
    if not address:
        return None
    raw = ctypes.string_at(address)
    return raw[:limit].decode("utf-8", errors="replace")


def load(library: str) -> Any:
    marker("load-begin")
    handle = ctypes.CDLL(library)
    marker("load-end")
    return handle


def get_api(handle: Any) -> Any:
    try:
        address = ctypes.cast(getattr(handle, t.SYMBOL), ctypes.c_void_p).value
    except AttributeError:
        return None
    return None if address is None else t.GET_API(address)


def request(*, size: int = t.REQUEST_SIZE, major: int = t.ABI_MAJOR,
            wire: bytes | None = t.WIRE_SCHEMA, required: bytes | None = None) -> t.HostRequest:
    return t.HostRequest(size, major, t.ABI_MINOR, wire, required)


def read_table(api: t.PluginApi) -> dict[str, Any]:
    return {
        "struct_size": api.struct_size,
        "abi_major": api.abi_major,
        "abi_minor": api.abi_minor,
        "wire_schema": c_string(api.wire_schema),
        "features": c_string(api.features),
        "plugin_id": c_string(api.plugin_id),
        "null_entries": [name for name in t.ENTRY_NAMES if not getattr(api, name)],
    }


def handshake(get: Any, *, capacity: int = t.TABLE_SIZE) -> tuple[int, t.PluginApi]:
    api = t.PluginApi()
    req = request()
    status = get(ctypes.byref(req), ctypes.addressof(api), capacity)
    return int(status), api


def mode_handshake(library: str, _argument: dict[str, Any]) -> dict[str, Any]:
    handle = load(library)
    get = get_api(handle)
    if get is None:
        return {"step": "symbol", "error": f"{t.SYMBOL} is not exported"}
    marker("handshake-begin")
    status, api = handshake(get)
    marker("handshake-end")
    answer: dict[str, Any] = {"step": "handshake", "status": status}
    if status == 0:
        answer["table"] = read_table(api)
    return answer
