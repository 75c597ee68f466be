"""The child process that loads a plugin library; the toolchain itself never loads one.

Run as `python -I -B -m horon_bundle.abi_child MODE LIBRARY [ARGUMENT-JSON]`. Before the
library is loaded, file descriptor 1 is pointed at stderr so nothing the library prints can
pass for an answer; the one JSON answer goes to the saved original stdout. A crash or hang
ends this process, and the parent reports it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
from typing import Any

from horon_bundle import abi_types as t

_answer_fd = -1


def _answer(document: dict[str, Any]) -> None:
    data = (json.dumps(document, sort_keys=True) + "\n").encode("utf-8")
    os.write(_answer_fd, data)


def marker(name: str) -> None:
    """A syscall a tracer can see (stat of a path that never exists), to split phases."""
    with contextlib.suppress(OSError):
        os.stat(f"/.horon-doctor-phase/{name}")  # noqa: PTH116 - the raw syscall is the point


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


def mode_doctor(library: str, argument: dict[str, Any]) -> dict[str, Any]:
    # Imported here, still before loading: doctor_child imports this module.
    from horon_bundle.doctor_child import mode_doctor as run  # noqa: PLC0415

    return run(library, argument)


MODES = {"handshake": mode_handshake, "doctor": mode_doctor}


def main(argv: list[str]) -> int:
    global _answer_fd  # noqa: PLW0603 - the answer channel is set once, before loading
    _answer_fd = os.dup(1)
    os.dup2(2, 1)
    mode, library = argv[0], argv[1]
    argument = json.loads(argv[2]) if len(argv) > 2 else {}
    try:
        answer = MODES[mode](library, argument)
    except OSError as exc:  # dlopen failure
        answer = {"step": "load", "error": str(exc)}
    _answer(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
