"""The `doctor` mode of the child process: every phase of the ABI v1 contract, observed.

The child observes and the parent judges: this module calls the library the way a host
would and reports raw facts (status codes, bytes written, buffers handed out). It never
trusts the library: the table is read only as far as its `struct_size` says, a pointer that
still holds the canary pattern is never called, strings are read with a length bound, and
buffers above the contract's 64 MiB are not read at all.

Phases run in a fixed order. Before each one, `phase()` calls `loading.marker()` (a stat a
tracer sees, so syscalls can be split by phase) and writes `{"begin": NAME}` to the progress
file descriptor; after it, `{"phase": NAME, "result": …}`. If the library crashes or hangs,
the parent still knows what finished and where the child died.
"""

from __future__ import annotations

import binascii
import ctypes
import json
import os
import sys
import time

from horon_bundle.abi import types as t
from horon_bundle.load.child import loading

TYPE_CHECKING = False  # not typing's: the child does not import typing (its start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CANARY = 0xA5
OUT_BYTES = 256
PHASES = ("load", "handshake", "refusals", "create", "describe", "tool-call", "release",
          "shutdown", "destroy", "unload")
_CANARY_WORD = int.from_bytes(bytes([CANARY]) * 8, sys.byteorder)
_STRING_LIMIT = 4096
_FIELDS = {name: (getattr(t.PluginApi, name).offset, getattr(t.PluginApi, name).size)
           for name, _ in t.PluginApi._fields_}
_GET_API = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32)
_LIBC = ctypes.CDLL(None)
_STRNLEN = _LIBC.strnlen
_STRNLEN.restype = ctypes.c_size_t
_STRNLEN.argtypes = (ctypes.c_void_p, ctypes.c_size_t)


class Progress:
    """Phase markers for the tracer and per-phase results for the parent."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.results: dict[str, Any] = {}

    def _write(self, document: dict[str, Any]) -> None:
        if self.fd is None:
            return
        data = (json.dumps(document, sort_keys=True) + "\n").encode("utf-8")
        while data:
            written = os.write(self.fd, data)
            data = data[written:]

    def begin(self, name: str) -> None:
        loading.marker(f"{name}-begin")
        self._write({"begin": name})

    def done(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        self.results[name] = result
        self._write({"phase": name, "result": result})
        return result


def _canary_buffer(size: int) -> Any:
    return (ctypes.c_uint8 * size)(*([CANARY] * size))


def _changed(raw: bytes) -> list[int] | None:
    changed = [i for i, b in enumerate(raw) if b != CANARY]
    return [changed[0], changed[-1]] if changed else None


def bounded_string(address: int) -> str | None:
    """A NUL-terminated string read with a length bound (strnlen, never strlen)."""
    length = int(_STRNLEN(address, _STRING_LIMIT + 1))
    raw = ctypes.string_at(address, min(length, _STRING_LIMIT))
    text = raw.decode("utf-8", errors="backslashreplace")
    return text + "...(no NUL within 4096 bytes)" if length > _STRING_LIMIT else text


def _cstr(value: str | None) -> bytes | None:
    return None if value is None else value.encode("utf-8")


class DoctorRun:
    def __init__(self, library: str, argument: dict[str, Any]) -> None:
        self.library = library
        self.argument = argument
        self.progress = Progress(argument.get("progress_fd"))
        self.inspect_limit = int(argument.get("inspect_limit", 1 << 20))
        self.entries: dict[str, int] = {}
        self.handed_out = 0
        self.returned = 0
        self.unreturnable = 0

    # -- phases ------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        get = self._load()
        if get is not None:
            self._handshake(get)
            self._refusals(get)
            self._instance()
        self.progress.begin("unload")
        self.progress.done("unload", {})
        return {"phases": self.progress.results,
                "buffers": {"handed_out": self.handed_out, "returned": self.returned,
                            "unreturnable": self.unreturnable}}

    def _load(self) -> Any:
        self.progress.begin("load")
        started = time.monotonic()
        try:
            handle = loading.load(self.library)
        except OSError as exc:
            self.progress.done("load", {"error": f"dlopen failed: {exc}"})
            return None
        try:
            address = ctypes.cast(getattr(handle, t.SYMBOL), ctypes.c_void_p).value
        except AttributeError:
            address = None
        if not address:
            self.progress.done("load", {"error": f"{t.SYMBOL} is not exported"})
            return None
        self.progress.done("load", {"ms": _ms(started)})
        return _GET_API(address)

    def _handshake(self, get: Any) -> None:
        self.progress.begin("handshake")
        request = t.HostRequest(t.REQUEST_SIZE, t.ABI_MAJOR, t.ABI_MINOR, t.WIRE_SCHEMA, None)
        out = _canary_buffer(OUT_BYTES)
        started = time.monotonic()
        status = int(get(ctypes.addressof(request), ctypes.addressof(out), t.TABLE_SIZE))
        result: dict[str, Any] = {"status": status, "ms": _ms(started)}
        raw = bytes(out)
        result["changed"] = _changed(raw)
        if status == 0:
            result["table"] = self._read_table(raw)
        self.progress.done("handshake", result)

    def _read_table(self, raw: bytes) -> dict[str, Any]:
        """Fields inside `struct_size` (capped at the 104 bytes v1 defines); never beyond."""
        def number(name: str) -> int:
            offset, size = _FIELDS[name]
            return int.from_bytes(raw[offset:offset + size], sys.byteorder)

        struct_size = number("struct_size")
        limit = min(struct_size, t.TABLE_SIZE)
        table: dict[str, Any] = {"struct_size": struct_size,
                                 "struct_size_written": raw[0:4] != bytes([CANARY]) * 4}
        fields: dict[str, str] = {}
        for name, (offset, size) in _FIELDS.items():
            if name == "struct_size":
                continue
            if offset + size > limit or not table["struct_size_written"]:
                fields[name] = "absent"
                continue
            value = number(name)
            if name in ("abi_major", "abi_minor"):
                table[name] = value
                fields[name] = "present"
            elif value == _CANARY_WORD:
                fields[name] = "unwritten"
            elif value == 0:
                fields[name] = "null"
            else:
                fields[name] = "present"
                if name in ("wire_schema", "features", "plugin_id"):
                    table[name] = bounded_string(value)
                else:
                    self.entries[name] = value
        table["fields"] = fields
        return table

    def _refusals(self, get: Any) -> None:
        self.progress.begin("refusals")
        rows = [self._row(get, row) for row in self.argument.get("rows", [])]
        self.progress.done("refusals", {"rows": rows})

    @staticmethod
    def _row(get: Any, row: dict[str, Any]) -> dict[str, Any]:
        keep: list[Any] = []
        request_address = None
        spec = row.get("req")
        if spec is not None:
            size = max(int(spec.get("bytes", t.REQUEST_SIZE)), t.REQUEST_SIZE)
            request = t.HostRequest(spec["struct_size"], spec["abi_major"],
                                    spec.get("host_api_minor", 0), _cstr(spec.get("wire_schema")),
                                    _cstr(spec.get("required")))
            memory = (ctypes.c_uint8 * size)()
            ctypes.memmove(memory, ctypes.byref(request), t.REQUEST_SIZE)
            keep += [request, memory]
            request_address = ctypes.addressof(memory)
        out = _canary_buffer(OUT_BYTES) if row.get("out", True) else None
        status = int(get(request_address, None if out is None else ctypes.addressof(out),
                         int(row["capacity"])))
        result: dict[str, Any] = {"id": row["id"], "status": status}
        if out is not None:
            result["changed"] = _changed(bytes(out))
        del keep
        return result

    def _instance(self) -> None:
        create = self.entries.get("create")
        if create is None:
            for name in ("create", "describe", "tool-call", "release", "shutdown", "destroy"):
                self.progress.begin(name)
                self.progress.done(name, {"skipped": "no usable create entry in the table"})
            return
        self.progress.begin("create")
        argument = self.argument
        config = argument.get("config", "{}").encode("utf-8")
        config_memory = ctypes.create_string_buffer(config, len(config))
        instance = ctypes.c_void_p(None)
        status = int(t.CREATE(create)(
            ctypes.addressof(config_memory), len(config),
            argument["instance_dir"].encode(), argument["config_dir"].encode(),
            argument.get("features", "").encode(), ctypes.byref(instance)))
        handle = instance.value
        self.progress.done("create", {"status": status, "instance": bool(handle)})
        if status != 0 or not handle:
            for name in ("describe", "tool-call", "release", "shutdown", "destroy"):
                self.progress.begin(name)
                self.progress.done(name, {"skipped": "create did not make an instance"})
            return
        self._describe(handle)
        op = self._tool_call(handle)
        self._simple("release", handle, op)
        self._simple("shutdown", handle, None)
        self.progress.begin("destroy")
        destroy = self.entries.get("destroy")
        if destroy is None:
            self.progress.done("destroy", {"skipped": "destroy is not in the table"})
        else:
            t.DESTROY(destroy)(handle)
            self.progress.done("destroy", {"status": 0})

    def _describe(self, handle: int) -> None:
        self.progress.begin("describe")
        describe = self.entries.get("describe")
        if describe is None:
            self.progress.done("describe", {"skipped": "describe is not in the table"})
            return
        buf = t.Buf()
        status = int(t.DESCRIBE(describe)(handle, ctypes.byref(buf)))
        result: dict[str, Any] = {"status": status}
        if status == 0:
            result["buffer"] = self._take(buf)
        self.progress.done("describe", result)

    def _tool_call(self, handle: int) -> int | None:
        self.progress.begin("tool-call")
        start, next_ = self.entries.get("start"), self.entries.get("next")
        if start is None or next_ is None:
            self.progress.done("tool-call", {"skipped": "start or next is not in the table"})
            return None
        if not self.argument.get("tool"):
            self.progress.done("tool-call", {"skipped": "no tool to call"})
            return None
        request = json.dumps({"kind": "tool_call", "name": self.argument["tool"],
                              "arguments": {}}, separators=(",", ":")).encode("utf-8")
        request_memory = ctypes.create_string_buffer(request, len(request))
        op = ctypes.c_uint64(0)
        status = int(t.START(start)(handle, ctypes.addressof(request_memory), len(request),
                                    ctypes.byref(op)))
        result: dict[str, Any] = {"start": status, "frames": []}
        if status != 0:
            self.progress.done("tool-call", result)
            return None
        call_next = t.NEXT(next_)
        limit = int(self.argument.get("frame_limit", 256))
        end = None
        for _ in range(limit):
            buf = t.Buf()
            code = int(call_next(handle, op.value, ctypes.byref(buf)))
            if code != 0:
                end = code
                break
            result["frames"].append(self._take(buf))
        result["end"] = end
        self.progress.done("tool-call", result)
        return op.value

    def _simple(self, name: str, handle: int, op: int | None) -> None:
        self.progress.begin(name)
        address = self.entries.get(name)
        if address is None:
            self.progress.done(name, {"skipped": f"{name} is not in the table"})
            return
        if name == "release":
            if op is None:
                self.progress.done(name, {"skipped": "no operation was started"})
                return
            status = int(t.OP(address)(handle, op))
        else:
            status = int(t.INSTANCE(address)(handle))
        self.progress.done(name, {"status": status})

    # -- buffers -----------------------------------------------------------------------------

    def _take(self, buf: Any) -> dict[str, Any]:
        """Read a plugin-owned buffer (within bounds) and give it back through free_buffer."""
        pointer = ctypes.cast(buf.ptr, ctypes.c_void_p).value
        length = int(buf.len)
        info: dict[str, Any] = {"len": length, "null": not pointer}
        self.handed_out += 1
        if pointer and length <= t.MAX_FRAME_BYTES:
            data = ctypes.string_at(pointer, length)
            if length <= self.inspect_limit:
                info["data"] = binascii.b2a_base64(data, newline=False).decode("ascii")
            else:
                info["summary"] = _summary(data)
        free = self.entries.get("free_buffer")
        if free is None:
            self.unreturnable += 1
            info["returned"] = False
        else:
            t.FREE_BUFFER(free)(buf)
            self.returned += 1
            info["returned"] = True
        return info


def _summary(data: bytes) -> dict[str, Any]:
    """For a buffer above the inspection limit: just its seq and kind (lenient parse)."""
    try:
        value = json.loads(data)
    except ValueError:
        return {"json": False}
    if not isinstance(value, dict):
        return {"json": True, "object": False}
    return {"json": True, "object": True, "seq": value.get("seq"), "kind": value.get("kind")}


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 3)


def mode_doctor(library: str, argument: dict[str, Any]) -> dict[str, Any]:
    try:
        return DoctorRun(library, argument).run()
    except Exception as exc:  # noqa: BLE001 - a defect of this child, reported as such
        return {"child_error": f"{type(exc).__name__}: {exc}"}


MODE: Callable[[str, dict[str, Any]], dict[str, Any]] = mode_doctor
