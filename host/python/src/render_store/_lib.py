"""The C ABI of the render-store host library (``host/capi/include/render_store.h``),
declared for ctypes, and the few helpers every call needs: buffers in and out, and the
library's errors turned into Python exceptions.

The library is the one the wheel carries beside this module (``librender_store_capi.so``,
with the component inside it), or the file ``RENDER_STORE_LIBRARY`` names.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.resources
import itertools
import os
import struct
import threading
from ctypes import (POINTER, Structure, c_bool, c_char_p, c_int32, c_int64, c_size_t, c_uint8,
                    c_uint32, c_uint64, c_void_p)
from typing import Any, Callable, List, Optional, Sequence, Tuple

from ._calls import RUNTIME_CALLS, STORE_CALLS

#: The ABI this module is written against (``RS_ABI_VERSION``).
ABI_VERSION = 3
LIBRARY_NAME = "librender_store_capi.so"

KIND_INVALID_OBJECT = 2
KIND_INVALID_YAML = 3
KIND_TRACE = 14
KIND_DEADLINE_EXCEEDED = 20
KIND_CANCELLED = 21

FORMS = {"yaml": 0, "json": 1}
YAML_STAGES = {1: "split", 2: "yaml", 3: "object"}
KEY_RENDER = 1
KEY_HISTORY = 2


class _BufData(ctypes.Union):
    # ``text`` reads a text buffer up to the NUL the library puts after it, in one step
    # (string_at is a foreign call of its own).
    _fields_ = [("data", POINTER(c_uint8)), ("text", c_char_p)]


class Buf(Structure):
    """``rs_buf``: bytes the library allocated; freed with ``rs_buf_free``."""

    _anonymous_ = ("_start",)
    _fields_ = [("_start", _BufData), ("len", c_size_t), ("cap", c_size_t)]


class Options(Structure):
    """``rs_options``, filled by ``rs_options_init``."""

    _fields_ = [("size", c_size_t), ("memory_bytes", c_uint64), ("fuel", c_uint64),
                ("gc_grace_seconds", c_uint64), ("concurrent_calls", c_uint32),
                ("request_timeout_ms", c_uint64), ("connect_timeout_ms", c_uint64),
                ("max_retries", c_uint32), ("retry_timeout_ms", c_uint64)]


class Time(Structure):
    """``rs_time``."""

    _fields_ = [("seconds", c_int64), ("nanoseconds", c_uint32)]


class Grace(Structure):
    """``rs_grace``."""

    _fields_ = [("now", Time), ("seconds", c_uint64)]


class Str(Structure):
    """``rs_str``: a key the library lends a ``delete_many`` callback."""

    _fields_ = [("data", POINTER(c_uint8)), ("len", c_size_t)]


# Pointers the callbacks only read from come as plain addresses (c_void_p): a ctypes
# pointer object a call would cost more than the read.
GET_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_uint64, c_void_p)
PUT_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p)
KEY_FN = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_void_p)
DELETE_MANY_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(Str), c_size_t, c_void_p)
DROP_FN = ctypes.CFUNCTYPE(None, c_void_p)


class Bucket(Structure):
    """``rs_bucket``: the callback table of a bucket written in Python."""

    _fields_ = [("size", c_size_t), ("user_data", c_void_p), ("get", GET_FN), ("put", PUT_FN),
                ("exists", KEY_FN), ("list", KEY_FN), ("delete_key", KEY_FN),
                ("delete_many", DELETE_MANY_FN), ("drop", DROP_FN)]


_ERR = c_void_p  # rs_error *
_STORE = c_void_p  # rs_store *
_OPT = POINTER(Options)
_BUF = POINTER(Buf)
_BYTES = c_char_p  # pointer and a length beside it; never read as a C string
# The ends of a joined list: a buffer of native size_t values (struct's "N"), passed as a
# pointer; bytes convert to it with no ctypes array built per call.
_ENDS = c_char_p
_S = (_BYTES, c_size_t)  # a string or bytes argument: pointer, length
_REL = _S + _S  # a release: namespace, name

#: Each function's arguments and result (the header's declarations, in its order).
_SIGNATURES: Sequence[Tuple[str, Any, Tuple[Any, ...]]] = (
    ("rs_abi_version", c_uint32, ()),
    ("rs_answer_bytes", c_bool, (c_void_p, _BYTES, c_size_t)),
    ("rs_answer_too_large", c_bool, (c_void_p, c_uint64)),
    ("rs_answer_size", c_bool, (c_void_p, c_uint64)),
    ("rs_answer_not_found", c_bool, (c_void_p,)),
    ("rs_answer_ok", c_bool, (c_void_p,)),
    ("rs_answer_denied", c_bool, (c_void_p,) + _S),
    ("rs_answer_failed", c_bool, (c_void_p,) + _S),
    ("rs_answer_listed", c_bool, (c_void_p,) + _S + (c_uint64, c_int64, c_uint32)),
    ("rs_answer_key_ok", c_bool, (c_void_p, c_size_t)),
    ("rs_answer_key_denied", c_bool, (c_void_p, c_size_t) + _S),
    ("rs_answer_key_failed", c_bool, (c_void_p, c_size_t) + _S),
    ("rs_effective_keep_history", _ERR, (c_bool, c_int64, POINTER(c_int64))),
    ("rs_history_count", _ERR, (_STORE, c_bool, c_int64, POINTER(c_int64))),
    ("rs_protected_refs", _ERR, _S + _S + _S + _S + _S + (_BUF,)),
    ("rs_error_kind", c_int32, (_ERR,)),
    ("rs_error_kind_name", c_char_p, (c_int32,)),
    ("rs_error_message", None, (_ERR, POINTER(POINTER(c_uint8)), POINTER(c_size_t))),
    ("rs_error_detail", None, (_ERR, POINTER(POINTER(c_uint8)), POINTER(c_size_t))),
    ("rs_error_object_index", c_bool, (_ERR, POINTER(c_uint32))),
    ("rs_error_yaml", c_bool, (_ERR, POINTER(c_uint32), POINTER(c_uint32), POINTER(c_uint32),
                               POINTER(c_uint32))),
    ("rs_error_trace_line", c_bool, (_ERR, POINTER(c_uint32))),
    ("rs_error_free", None, (_ERR,)),
    ("rs_canonical", _ERR, (_OPT, _BYTES, c_size_t, _ENDS, c_size_t, _BUF)),
    ("rs_render_ref", _ERR, (_OPT, _BYTES, c_size_t, _ENDS, c_size_t, _BUF)),
    ("rs_check_objects", _ERR, (_OPT, _BYTES, c_size_t, _ENDS, c_size_t)),
    ("rs_yaml_objects", _ERR, (_OPT,) + _S + (_BUF,)),
    ("rs_yaml_canonical", _ERR, (_OPT,) + _S + (_BUF,)),
    ("rs_yaml_render_ref", _ERR, (_OPT,) + _S + (_BUF,)),
    ("rs_validate_render_ref", _ERR, (_OPT,) + _S),
    ("rs_check_key", _ERR, _S),
    ("rs_sha256_hex", _ERR, (_OPT,) + _S + (_BUF,)),
    ("rs_release_prefix", _ERR, (_OPT,) + _REL + (_BUF,)),
    ("rs_render_key", _ERR, (_OPT,) + _REL + _S + (_BUF,)),
    ("rs_history_key", _ERR, (_OPT,) + _REL + (Time,) + _S + (_BUF,)),
    ("rs_parse_key", _ERR, (_OPT,) + _REL + _S + (POINTER(c_uint32), _BUF, POINTER(Time))),
    ("rs_format_synced_at", _ERR, (_OPT, Time, _BUF)),
    ("rs_parse_synced_at", _ERR, (_OPT,) + _S + (POINTER(Time),)),
    ("rs_plan_gc", _ERR, (_OPT,) + _REL + (c_int64,) + (_BYTES, c_size_t, _ENDS, c_size_t) * 3
     + (Time, _BUF)),
    ("rs_summarize_history", _ERR, (_OPT,) + _REL + (_BYTES, c_size_t, _ENDS, c_size_t, _BUF)),
    ("rs_diff_renders", _ERR, (_OPT,) + _S + _S + (c_uint32, c_uint32, c_uint32, _BUF)),
    ("rs_show_objects", _ERR, (_OPT,) + _S + (c_uint32, c_uint32, _BUF)),
    ("rs_options_init", None, (_OPT, c_size_t)),
    ("rs_store_open", _ERR, _S + (_OPT, POINTER(_STORE))),
    ("rs_store_new", _ERR, (POINTER(Bucket), _OPT, POINTER(_STORE))),
    ("rs_store_free", None, (_STORE,)),
    ("rs_store_put_render", _ERR, (_STORE,) + _REL + (_BYTES, c_size_t, _ENDS, c_size_t, _BUF, _BUF)),
    ("rs_store_put_render_yaml", _ERR, (_STORE,) + _REL + _S + (_BUF, _BUF)),
    ("rs_store_get_render", _ERR, (_STORE,) + _REL + _S + (_BUF, _BUF)),
    ("rs_store_has_history_ref", _ERR, (_STORE,) + _REL + _S + (POINTER(c_bool), _BUF)),
    ("rs_store_record_history", _ERR, (_STORE,) + _REL + _S + (Time,) + _S
     + (POINTER(c_bool), _BUF)),
    ("rs_store_list_history", _ERR, (_STORE,) + _REL + (_BUF, _BUF)),
    ("rs_store_list_history_page", _ERR, (_STORE,) + _REL + (c_uint32,) + _S + (_BUF,)),
    ("rs_store_gc", _ERR, (_STORE,) + _REL + (c_int64, _BYTES, c_size_t, _ENDS, c_size_t, c_bool,
                                              POINTER(Grace), _BUF, _BUF)),
    ("rs_store_delete_release", _ERR, (_STORE,) + _REL + (POINTER(c_uint32), _BUF)),
    ("rs_store_diff", _ERR, (_STORE,) + _REL + _S + _S + (c_uint32, c_uint32, c_uint32, _BUF)),
    ("rs_store_images", _ERR, (_STORE,) + _S + _S + (POINTER(Time), POINTER(Time), _BUF)),
    ("rs_store_blame", _ERR, (_STORE,) + _REL + _S + _S + (c_uint32, _BUF)),
    ("rs_store_changes", _ERR, (_STORE,) + _S + (POINTER(Time), POINTER(Time), _BUF)),
    ("rs_store_index_release", _ERR, (_STORE,) + _REL + (c_bool, _BUF)),
    ("rs_store_reindex", _ERR, (_STORE,) + _S + (_BUF,)),
    ("rs_store_diff_local", _ERR, (_STORE,) + _REL + _S + _S + (c_uint32, c_uint32, c_uint32, _BUF)),
    ("rs_store_bucket_get", _ERR, (_STORE,) + _S + (c_uint64, _BUF)),
    ("rs_store_bucket_put", _ERR, (_STORE,) + _S + _S),
    ("rs_store_bucket_exists", _ERR, (_STORE,) + _S + (POINTER(c_bool), POINTER(c_uint64))),
    ("rs_store_bucket_list", _ERR, (_STORE,) + _S + (_BUF,)),
    ("rs_store_bucket_list_delimited", _ERR, (_STORE,) + _S + (_BUF,)),
    ("rs_store_bucket_delete", _ERR, (_STORE,) + _S),
    ("rs_store_bucket_delete_many", _ERR, (_STORE, _BYTES, c_size_t, _ENDS, c_size_t, _BUF)),
    ("rs_replay", _ERR, (_OPT,) + _S + (c_void_p, POINTER(c_bool), _BUF, _BUF)),
    ("rs_keyring_open", _ERR, _S + (_OPT, POINTER(c_void_p))),
    ("rs_keyring_free", None, (c_void_p,)),
    ("rs_store_with_keyring", _ERR, (_STORE, c_void_p, c_bool, POINTER(_STORE))),
    ("rs_cancel_new", _ERR, (POINTER(c_void_p),)),
    ("rs_cancel_cancel", None, (c_void_p,)),
    ("rs_cancel_free", None, (c_void_p,)),
    ("rs_store_with_deadline", _ERR, (_STORE, c_uint64, c_void_p, POINTER(_STORE))),
    ("rs_store_rekey_release", _ERR, (_STORE,) + _REL + (POINTER(c_uint32), POINTER(c_uint32))),
    ("rs_buf_free", None, (_BUF,)),
)


def _library_path() -> str:
    given = os.environ.get("RENDER_STORE_LIBRARY")
    if given:
        return given
    path = importlib.resources.files(__package__) / LIBRARY_NAME
    if not path.is_file():
        raise ImportError(
            f"render_store: {LIBRARY_NAME} is not inside this package: install the built wheel "
            "(host/python/run.sh builds one), or set RENDER_STORE_LIBRARY to the library "
            "`cargo build -p render-store-capi` writes")
    return str(path)


def _load() -> ctypes.CDLL:
    lib = ctypes.CDLL(_library_path())
    for name, restype, argtypes in _SIGNATURES:
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)
    # The generated entry points, one per export (``_calls.py``, generated from the WIT):
    # the runtime's options or the store, the arguments' JSON, the answer's buffer.
    for names, first in ((RUNTIME_CALLS, _OPT), (STORE_CALLS, _STORE)):
        for name in names:
            fn = getattr(lib, name)
            fn.restype = _ERR
            fn.argtypes = [first, _BYTES, c_size_t, _BUF]
    version = lib.rs_abi_version()
    if version != ABI_VERSION:
        raise ImportError(f"render_store: the library speaks C ABI {version}; this package speaks "
                          f"{ABI_VERSION}: install a matching wheel")
    return lib


lib = _load()


def text(value: str) -> Tuple[bytes, int]:
    """A string argument: its UTF-8 bytes and their length."""
    data = value.encode("utf-8")
    return data, len(data)


def optional(value: Optional[str]) -> Tuple[Optional[bytes], int]:
    """An optional string argument: NULL when absent."""
    return (None, 0) if value is None else text(value)


def joined(items: Sequence[bytes]) -> Tuple[bytes, int, bytes, int]:
    """A list argument: one buffer and the end of each item (native ``size_t`` values).
    Raises TypeError for an item that is not bytes-like, or whose length is not its byte
    count (a memoryview of wider items)."""
    data = b"".join(items)
    ends = list(itertools.accumulate(map(len, items)))
    if ends and ends[-1] != len(data):
        raise TypeError("an item's length is not its number of bytes")
    return data, len(data), _ends_packer(len(ends))(*ends), len(ends)


@functools.lru_cache(maxsize=256)
def _ends_packer(count: int) -> Callable[..., bytes]:
    # Compiled once per count: a render's object count repeats from call to call.
    return struct.Struct(f"{count}N").pack


# A large result is copied out through a buffer each thread keeps, so that the library's
# buffer is freed before the result's bytes are made. Copied straight out, the two are
# freed one after the other, side by side at the top of glibc's heap: together they
# cross its trim threshold (which adapts to the largest block freed so far), and then
# every call shrinks the heap and the next grows it again, a quarter more time in a
# large get_render. One at a time, each stays under it. An extra copy, for results of
# these sizes only: below, the heap is not trimmed; above, the thread would keep too
# much memory.
_SCRATCH_FROM = 64 << 10
_SCRATCH_UP_TO = 8 << 20


class _Scratch(threading.local):
    def __init__(self) -> None:
        self.buf = bytearray()


_SCRATCH = _Scratch()


def take(buf: Buf) -> bytes:
    """The bytes of a buffer the library filled, copied; the buffer freed."""
    n = buf.len
    try:
        if n < _SCRATCH_FROM or n > _SCRATCH_UP_TO:
            return ctypes.string_at(buf.data, n) if n else b""
        scratch = _SCRATCH.buf
        if len(scratch) < n:
            scratch = _SCRATCH.buf = bytearray(n)
        ctypes.memmove(ctypes.addressof(ctypes.c_char.from_buffer(scratch)), buf.data, n)
    finally:
        lib.rs_buf_free(ctypes.byref(buf))
    return bytes(memoryview(scratch)[:n])


def take_text(buf: Buf) -> str:
    """The text of a buffer the library filled (one a call documents as text); the
    buffer freed."""
    try:
        n = buf.len
        if not n:
            return ""
        text = buf.text
        if len(text) != n:  # a NUL inside the text: read its whole length
            text = ctypes.string_at(buf.data, n)
        return text.decode("utf-8")
    finally:
        lib.rs_buf_free(ctypes.byref(buf))


def _error_bytes(fn: Callable[..., None], err: int) -> str:
    data, n = POINTER(c_uint8)(), c_size_t()
    fn(err, ctypes.byref(data), ctypes.byref(n))
    return ctypes.string_at(data, n.value).decode("utf-8", "replace") if n.value else ""


class ErrorFields:
    """What an ``rs_error`` holds, read before it is freed."""

    def __init__(self, err: int):
        self.code = lib.rs_error_kind(err)
        self.kind = lib.rs_error_kind_name(self.code).decode("ascii")
        self.message = _error_bytes(lib.rs_error_message, err)
        self.detail = _error_bytes(lib.rs_error_detail, err)
        index = c_uint32()
        self.index: Optional[int] = index.value if lib.rs_error_object_index(err, ctypes.byref(index)) else None
        document, line, column, stage = c_uint32(), c_uint32(), c_uint32(), c_uint32()
        self.yaml: Optional[Tuple[str, int, int, int]] = None
        if lib.rs_error_yaml(err, ctypes.byref(document), ctypes.byref(line), ctypes.byref(column),
                             ctypes.byref(stage)):
            self.yaml = (YAML_STAGES.get(stage.value, "object"), document.value, line.value, column.value)
        trace_line = c_uint32()
        self.trace_line: Optional[int] = (
            trace_line.value if lib.rs_error_trace_line(err, ctypes.byref(trace_line)) else None)


def check(err: Optional[int], raise_error: Callable[[ErrorFields], Exception]) -> None:
    """Raises what ``raise_error`` makes of a returned error (freed here); nothing for
    NULL."""
    if not err:
        return
    try:
        fields = ErrorFields(err)
    finally:
        lib.rs_error_free(err)
    raise raise_error(fields)


def new_buf() -> Buf:
    return Buf()


def list_of_bytes(text_lines: bytes) -> List[bytes]:
    """The items of a text the library wrote one a line."""
    return [line for line in text_lines.split(b"\n") if line]
