"""The convoy render store for Python, on the Rust host library.

Every call goes through the C ABI of the Rust host (``host/capi``, the shared library
this wheel carries, with the WebAssembly component inside it), called with ctypes: the
same sandbox, limits, buckets and rules as the ``render-store`` CLI and the Go package.
:func:`open` opens a store from a render-store URL (``s3://``, ``gs://``, ``azblob://``,
``file://``, ``mem://``, with every parameter the Rust library takes, credentials from
each cloud's environment); :class:`RenderStore` also runs over a bucket written in
Python.

A Python bucket is any object with ``get(key) -> bytes``, ``put(key, value)``,
``exists(key) -> size or None``, ``list(prefix) -> [ObjectMeta(key, size, modified)]``
(every object whose key starts with ``prefix``, ``modified`` a :class:`SyncTime` by the
bucket's clock) and ``delete(key)``, and optionally ``delete_many(keys)`` for a backend
with a batch request: it returns one entry per key, in order, ``None`` when deleted and
a :class:`BucketError` (returned, not raised) for a key it could not delete, and raises
when the whole request failed. A bucket reports failures by raising :class:`NotFound`,
:class:`Denied` or :class:`Failed`; any other exception becomes the failure of that one
bucket call, ``<call> "<key>": <exception>``. Its methods are called on the thread that
made the store call, several threads at once when several threads call the store.

Errors are :class:`RenderStoreError`, its ``kind`` the C ABI's kind name
(``invalid-input``, ``invalid-object``, ``invalid-yaml``, ``not-found``, ``corrupt``,
``bucket``, ``backend``, ``url``, ``memory-cap``, ``fuel``, ``trap``, ``no-history``,
``denied``, ``too-large``, ...), ``str(error)`` the whole sentence the Rust library
words (what the CLI prints) and ``message`` the part the kind carries (the component's
text, which a trace records).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import math
import os
import threading
import time
from ctypes import byref, c_bool, c_int64, c_uint32, c_uint64
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple,
                    TypeVar, Union)

from . import _api, _codec, _lib
from . import wit  # noqa: F401 - render_store.wit: the WIT's types, as the generated calls give them
from ._api import *  # noqa: F401,F403 - the generated functions (their names: _api.__all__)
from ._api import LogicCalls, StoreCalls
from ._lib import lib

#: A file system path, as ``open()`` takes one.
PathLike = Union[str, "os.PathLike[str]"]


def _check_required(encryption_required: Any) -> None:
    """``encryption_required`` is a bool: any other value (a string "false" among
    them) could read as the opposite of what was meant."""
    if not isinstance(encryption_required, bool):
        raise TypeError(f"encryption_required must be a bool, not {type(encryption_required).__name__}")


class _Keyring:
    """A keyring read from a keyring file by the library, held for one call (``with``);
    ``handle`` is NULL when no file is given (a plaintext store)."""

    def __init__(self, path: Optional[PathLike], runtime: "Runtime"):
        self.handle: Optional[int] = None
        if path is not None:
            out = ctypes.c_void_p()
            _check(lib.rs_keyring_open(*_lib.text(os.fspath(path)), runtime._opt(), byref(out)))
            self.handle = out.value

    def __enter__(self) -> "_Keyring":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.handle:
            lib.rs_keyring_free(self.handle)
            self.handle = None

__all__ = [
    "DEFAULT_CONTEXT",
    "RenderStoreError", "BucketError", "NotFound", "Denied", "Failed", "TraceError",
    "DeadlineExceeded", "Cancelled",
    "Release", "SyncTime", "ObjectMeta", "Delimited", "NewEntry", "HistoryEntry", "HistoryKey", "HistoryPage", "GcPlan",
    "ObjectId", "ChangedObject", "RenderDiff", "Replay", "ShownObject", "HistorySummary",
    "ImageInterval", "Images", "FieldBlame", "Blame", "IndexReport", "Reindexed",
    "Runtime", "RenderStore", "StoreBucket", "MemoryBucket", "open",
    "default_runtime", "set_default_runtime",
    "canonical", "render_ref", "check_objects", "validate_render_ref", "sha256_hex",
    "release_prefix",
    "render_key", "history_key", "parse_key",
    "format_synced_at", "parse_synced_at", "plan_gc", "diff_renders", "show_objects",
    "summarize_history", "yaml_objects", "yaml_canonical", "yaml_render_ref",
    "effective_keep_history", "history_count", "protected_refs",
    "put_render", "get_render", "has_history_ref", "record_history", "list_history",
    "gc", "delete_release", "record", "Recorded", "replay",
    "object_key_error", "now",
]
# The functions generated from the WIT for the exports above lack (_api.py).
__all__ += _api.__all__

_T = TypeVar("_T")

#: Lines of context a diff shows around each change unless asked otherwise
#: (``RS_DEFAULT_CONTEXT``).
DEFAULT_CONTEXT = 3


# --------------------------------------------------------------------------------------
# Errors


class RenderStoreError(Exception):
    """An error of the Rust host library.

    ``kind``: the C ABI's kind name (``invalid-input``, ``invalid-object``,
    ``invalid-yaml``, ``not-found``, ``corrupt``, ``bucket``, ``backend``, ``url``,
    ``memory-cap``, ``fuel``, ``trap``, ``runtime``, ``no-history``, ``denied``,
    ``too-large``, ``invalid-argument``, ``encryption-key``); ``message``: the text the
    kind carries (the component's words for its own kinds); ``str(error)``: the whole
    sentence. ``index``:
    the bad object's position (``invalid-object``). For ``invalid-yaml``, ``stage``
    (``split``, ``yaml`` or ``object``), ``document`` (from 0, empty and ``null``
    documents counted), ``line`` and ``column`` (from 1); ``None`` for other kinds.
    """

    def __init__(self, kind: str, message: str, index: Optional[int] = None, *,
                 stage: Optional[str] = None, document: Optional[int] = None,
                 line: Optional[int] = None, column: Optional[int] = None,
                 text: Optional[str] = None):
        super().__init__(text if text is not None else f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.index = index
        self.stage = stage
        self.document = document
        self.line = line
        self.column = column

    def to_json(self) -> Dict[str, Any]:
        """The error as a trace's result records it (TRACES.md)."""
        if self.kind == "invalid-object":
            return {"kind": self.kind, "index": self.index, "message": self.message}
        return {"kind": self.kind, "message": self.message}


class TraceError(RenderStoreError, ValueError):
    """A trace that does not follow TRACES.md: ``line`` is its first bad line."""

    def __init__(self, line: int, message: str, text: Optional[str] = None):
        super().__init__("trace", message, text=text or f"trace line {line}: {message}")
        self.line = line


class DeadlineExceeded(RenderStoreError, TimeoutError):
    """A call's ``timeout=`` passed before it finished (kind ``deadline-exceeded``): the
    call was cut where it waited, the bucket request in flight abandoned, and the store
    is as a crash at that moment leaves it (nothing half-written). Also a
    :class:`TimeoutError`, as the standard library's timeouts are."""


class Cancelled(RenderStoreError):
    """A call was cancelled before it finished (kind ``cancelled``), and cut as at a
    deadline."""


def _raise(fields: _lib.ErrorFields) -> Exception:
    if fields.code == _lib.KIND_TRACE:
        return TraceError(fields.trace_line or 0, fields.detail, fields.message)
    if fields.code == _lib.KIND_DEADLINE_EXCEEDED:
        return DeadlineExceeded(fields.kind, fields.detail, text=fields.message)
    if fields.code == _lib.KIND_CANCELLED:
        return Cancelled(fields.kind, fields.detail, text=fields.message)
    stage = document = line = column = None
    if fields.yaml is not None:
        stage, document, line, column = fields.yaml
    return RenderStoreError(fields.kind, fields.detail, fields.index, stage=stage, document=document,
                            line=line, column=column, text=fields.message)


def _check(err: Optional[int]) -> None:
    if err:
        _lib.check(err, _raise)


class BucketError(Exception):
    """Raised by a bucket: one of the bucket contract's failures."""

    kind = "failed"

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message


class NotFound(BucketError):
    """The key does not exist (``get``, ``exists``, ``delete``)."""

    kind = "not-found"


class Denied(BucketError):
    """The bucket refused the call (a key it cannot store, a read-only bucket)."""

    kind = "denied"


class Failed(BucketError):
    """The backend failed."""

    kind = "failed"


# --------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class Release:
    """A Release: its keys lie under ``<namespace>/<name>/``."""

    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> "Release":
        """``NAMESPACE/NAME``, split at the first ``/`` (the names are checked by each call)."""
        if "/" not in text:
            raise ValueError(f"{text!r} is not NAMESPACE/NAME")
        namespace, name = text.split("/", 1)
        return cls(namespace, name)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class SyncTime:
    """Seconds since 1970-01-01T00:00:00Z and nanoseconds (< 10^9)."""

    seconds: int
    nanoseconds: int = 0


def now() -> SyncTime:
    """This machine's clock as a :class:`SyncTime`."""
    return SyncTime(*divmod(time.time_ns(), 1_000_000_000))


_now = now  # for the methods whose `now` parameter hides it


@dataclass(frozen=True)
class ObjectMeta:
    """One object of a listing: its key, its size in bytes and when it was last
    written, by the bucket's clock."""

    key: str
    size: int
    modified: SyncTime


@dataclass(frozen=True)
class Delimited:
    """A delimiter listing (CONTRACT.md §2): the folders directly under a folder prefix
    (each ending in ``/``) and the objects directly in it, each sorted by bytes."""

    folders: List[str]
    objects: List[ObjectMeta]


@dataclass(frozen=True)
class NewEntry:
    """A history entry to record."""

    render_ref: str
    synced_at: SyncTime
    summary: str = ""


@dataclass(frozen=True)
class HistoryEntry:
    """A stored history entry. ``authenticated`` and ``unauthenticated`` say what the
    keyring it was read with says of it (CONTRACT.md §14): the id of the key its MAC
    verifies under, or why it does not authenticate; both ``None`` when it was read
    without a keyring and its body agrees with its key."""

    key: str
    render_ref: str
    synced_at: SyncTime
    summary: str
    authenticated: Optional[str] = None
    unauthenticated: Optional[str] = None


@dataclass(frozen=True)
class HistoryPage:
    """One page of a history, newest first, and the cursor of the next, older page
    (``None`` at the end)."""

    entries: List[HistoryEntry]
    next_before: Optional[str]


@dataclass(frozen=True)
class HistoryKey:
    """A history key's parts."""

    synced_at: SyncTime
    render_ref: str


@dataclass(frozen=True)
class GcPlan:
    """What a garbage collection deletes and keeps (full keys, lexical order). Every
    history key listed is in exactly one of ``delete_history``, ``keep_history`` and
    ``ignored``; ``future_history`` and ``dangling_history`` name the kept entries that
    did not count toward ``keep``."""

    delete_history: List[str]
    #: The newest ``keep`` entries of those that count, and every entry that does not.
    keep_history: List[str]
    delete_renders: List[str]
    keep_renders: List[str]
    ignored: List[str]
    #: Unreferenced blobs kept only because they are younger than the grace period.
    recent_renders: List[str]
    #: Kept entries dated more than the component's tolerance (five minutes) after GC's
    #: ``now`` (a replica whose clock runs ahead, or planted keys): neither counted
    #: toward ``keep`` nor deleted; their renders are kept.
    future_history: List[str] = field(default_factory=list)
    #: Kept entries whose render is not stored: neither counted toward ``keep`` nor deleted.
    dangling_history: List[str] = field(default_factory=list)
    #: With encryption required: kept entries whose body does not authenticate under the
    #: keyring, not counted toward ``keep``.
    unauthenticated_history: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, List[str]]:
        extra = ({"unauthenticatedHistory": list(self.unauthenticated_history)}
                 if self.unauthenticated_history else {})
        return {**extra, **{
            "deleteHistory": list(self.delete_history),
            "keepHistory": list(self.keep_history),
            "deleteRenders": list(self.delete_renders),
            "keepRenders": list(self.keep_renders),
            "ignored": list(self.ignored),
            "recentRenders": list(self.recent_renders),
            "futureHistory": list(self.future_history),
            "danglingHistory": list(self.dangling_history),
        }}


@dataclass(frozen=True)
class ObjectId:
    """Which object: its apiVersion, kind, namespace and name."""

    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class ChangedObject:
    """An object in both renders with other content, and its diff lines."""

    id: ObjectId
    lines: List[str]


@dataclass(frozen=True)
class RenderDiff:
    """What changed between two renders."""

    #: The objects only the new render holds, each whole (as kubectl diff shows them).
    added: List[ShownObject]
    #: The objects only the old render holds, each whole.
    removed: List[ShownObject]
    changed: List[ChangedObject]
    unchanged: int


@dataclass(frozen=True)
class HistorySummary:
    """A release's history as one listing shows it (``summarize_history``)."""

    entries: int
    newest: Optional[HistoryKey]


@dataclass(frozen=True)
class ShownObject:
    """An object of a render written out for people (``show_objects``)."""

    id: ObjectId
    text: str


@dataclass(frozen=True)
class ImageInterval:
    """An interval of a release's history during which an image was in the recorded
    render (``RenderStore.images``): from an entry's sync until the next entry's."""

    #: The image as container runtimes read it (``nginx`` is
    #: ``docker.io/library/nginx:latest``).
    image: str
    #: The release.
    release: Release
    #: The sync of the interval's first entry.
    since: SyncTime
    #: The sync of the first later entry without the image; ``None`` while open.
    until: Optional[SyncTime]
    #: The renders of the interval's entries, in history order.
    render_refs: List[str]


@dataclass(frozen=True)
class Images:
    """What ``RenderStore.images`` found, and what it could not see."""

    #: The intervals, by image, then release, then start.
    intervals: List[ImageInterval]
    #: False when a folder or a release could not be read: the answer then says
    #: nothing of them, and must not be read as "not there".
    complete: bool
    #: The namespace folders that could not be listed, with why.
    unlisted: List[Tuple[str, str]]
    #: The releases whose history or renders could not be read, with why.
    unread: List[Tuple[Release, str]]


@dataclass(frozen=True)
class IndexReport:
    """What ``RenderStore.index_release`` did to a release's index (CONTRACT.md §3)."""

    release: Release
    #: The distinct renders the history names.
    renders: int
    #: The renders the index names afterwards.
    indexed: int
    #: The renders read to index them.
    read: int
    #: The renders the index named that the history no longer does, dropped.
    pruned: int
    #: Each render that could not be read (``REF: WHY``): not indexed.
    unreadable: List[str]
    #: What was wrong with a stored index that could not be used; ``None`` if nothing.
    replaced: Optional[str]
    #: Whether the index was written (or deleted, for an empty history).
    written: bool


@dataclass(frozen=True)
class Reindexed:
    """What ``RenderStore.reindex`` did across the store."""

    #: Each release indexed, by namespace then name.
    releases: List[IndexReport]
    #: False when a folder, a release or a render could not be read.
    complete: bool
    #: The namespace folders that could not be listed, with why.
    unlisted: List[Tuple[str, str]]
    #: The releases whose index could not be brought up to date, with why.
    failed: List[Tuple[Release, str]]


def _py_index_report(r: Dict[str, Any]) -> IndexReport:
    return IndexReport(Release(r["namespace"], r["name"]), int(r["renders"]), int(r["indexed"]),
                       int(r["read"]), int(r["pruned"]), list(r["unreadable"]), r["replaced"],
                       bool(r["written"]))


@dataclass(frozen=True)
class FieldBlame:
    """One field of a blamed object and the entry since which it has its value."""

    #: Its path, as the diff's hunk headers write places.
    path: str
    #: Its value as compact JSON (cut when long), masked if a Secret's unless asked.
    value: str
    #: The place of the entry (0 the newest) since which it has this value.
    entry: int
    synced_at: SyncTime
    render_ref: str
    summary: str


@dataclass(frozen=True)
class Blame:
    """Which history entry last changed each field of an object (``RenderStore.blame``)."""

    object: ObjectId
    #: Its fields, in the order of its text.
    fields: List[FieldBlame]
    #: The place of the newest entry whose render holds the object.
    newest: int


ReleaseLike = Union[Release, str, Tuple[str, str]]
TimeLike = Union[SyncTime, str]
BytesLike = Union[bytes, bytearray, memoryview, str]


def _release(r: ReleaseLike) -> Release:
    if isinstance(r, Release):
        return r
    if isinstance(r, str):
        return Release.parse(r)
    namespace, name = r
    return Release(namespace, name)


@functools.lru_cache(maxsize=1024)
def _rel_text(text: str) -> Tuple[bytes, int, bytes, int]:
    release = Release.parse(text)
    return _lib.text(release.namespace) + _lib.text(release.name)


def _rel(r: ReleaseLike) -> Tuple[bytes, int, bytes, int]:
    if type(r) is str:
        # A controller names the same few releases over and over.
        return _rel_text(r)
    release = _release(r)
    return _lib.text(release.namespace) + _lib.text(release.name)


def _bytes(b: BytesLike, what: str = "value") -> bytes:
    if isinstance(b, bytes):
        return b
    if isinstance(b, str):
        return b.encode("utf-8")
    try:
        return bytes(memoryview(b).cast("B"))
    except TypeError:
        raise TypeError(f"{what}: expected bytes, bytearray, memoryview or str, "
                        f"not {type(b).__name__}") from None


def _objects(objects: Iterable[BytesLike]) -> Tuple[bytes, int, Any, int]:
    if type(objects) is list:
        # The usual case, a list of bytes, taken as it is: join refuses a str, and a
        # length that is not the byte count (a memoryview of wider items) shows in the
        # total; either way the objects are converted one by one.
        try:
            return _lib.joined(objects)
        except TypeError:
            pass
    elif isinstance(objects, (bytes, bytearray, memoryview, str)):
        raise TypeError("objects must be a sequence of objects, each one JSON object's bytes")
    return _lib.joined([_bytes(o, f"objects[{i}]") for i, o in enumerate(objects)])


def _strings(items: Sequence[str]) -> Tuple[bytes, int, Any, int]:
    if isinstance(items, str):
        raise TypeError("expected a sequence of strings, not one string")
    return _lib.joined([s.encode("utf-8") for s in items])


def _time(t: SyncTime) -> _lib.Time:
    if (not isinstance(t, SyncTime) or not isinstance(t.seconds, int)
            or not isinstance(t.nanoseconds, int) or not 0 <= t.nanoseconds < 1_000_000_000
            or not -(1 << 63) <= t.seconds < (1 << 63)):
        raise TypeError(f"expected a SyncTime with nanoseconds from 0 to 999999999, not {t!r}")
    return _lib.Time(t.seconds, t.nanoseconds)


def _py_time(t: Any) -> SyncTime:
    if isinstance(t, _lib.Time):
        return SyncTime(int(t.seconds), int(t.nanoseconds))
    return SyncTime(int(t["seconds"]), int(t["nanoseconds"]))


def _py_entry(e: Dict[str, Any]) -> HistoryEntry:
    trust = e.get("trust") or {}
    return HistoryEntry(e["key"], e["renderRef"], _py_time(e["syncedAt"]), e["summary"],
                        trust.get("authenticated"), trust.get("unauthenticated"))


def _py_plan(p: Dict[str, Any]) -> GcPlan:
    return GcPlan(p["deleteHistory"], p["keepHistory"], p["deleteRenders"], p["keepRenders"],
                  p["ignored"], p["recentRenders"], p["futureHistory"], p["danglingHistory"],
                  p.get("unauthenticatedHistory", []))


def _py_id(i: Dict[str, Any]) -> ObjectId:
    return ObjectId(i["apiVersion"], i["kind"], i["namespace"], i["name"])


def _py_diff(d: Dict[str, Any]) -> RenderDiff:
    return RenderDiff(
        added=[ShownObject(_py_id(i), i["text"]) for i in d["added"]],
        removed=[ShownObject(_py_id(i), i["text"]) for i in d["removed"]],
        changed=[ChangedObject(_py_id(c), list(c["diff"])) for c in d["changed"]],
        unchanged=int(d["unchanged"]),
    )


def _form(form: str) -> int:
    try:
        return _lib.FORMS[form]
    except (KeyError, TypeError):
        raise RenderStoreError("invalid-input", f"form {form!r}: expected 'yaml' or 'json'") from None


def _context(context: int) -> int:
    if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 0xFFFFFFFF:
        raise TypeError(f"context: expected a whole number from 0 to 4294967295, not {context!r}")
    return context


def _secret_values(show_secrets: bool) -> int:
    """Only ``True`` shows values: a truthy ``"no"`` is a TypeError, never a reason to
    show a Secret."""
    if not isinstance(show_secrets, bool):
        raise TypeError(f"show_secrets: expected True or False, not {type(show_secrets).__name__}")
    return 1 if show_secrets else 0


def _int(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TypeError(f"{what}: expected a whole number from {low} to {high}, not {value!r}")
    return value


# --------------------------------------------------------------------------------------
# The runtime: the limits the calls run under


class Runtime(LogicCalls):
    """The limits of the sandboxed calls made through it: ``memory_bytes`` (one call's
    memory cap), ``fuel`` (its CPU budget), ``concurrent_calls`` (calls that may run at
    once, over every store with the same limits) and ``gc_grace_seconds`` (GC's grace
    period for stores opened with it). ``None`` takes the library's default for each.
    The logic functions (``canonical``, ``render_ref``, ...) run in the component too,
    those generated from the WIT (``parse_keys``, ``index_objects``, ...) among them."""

    def __init__(self, *, memory_bytes: Optional[int] = None, fuel: Optional[int] = None,
                 concurrent_calls: Optional[int] = None, gc_grace_seconds: Optional[int] = None):
        options = _lib.Options()
        lib.rs_options_init(byref(options), ctypes.sizeof(options))
        u64 = (1 << 64) - 1
        if memory_bytes is not None:
            options.memory_bytes = _int(memory_bytes, 1, u64, "memory_bytes")
        if fuel is not None:
            options.fuel = _int(fuel, 1, u64, "fuel")
        if concurrent_calls is not None:
            options.concurrent_calls = _int(concurrent_calls, 1, (1 << 32) - 1, "concurrent_calls")
        if gc_grace_seconds is not None:
            options.gc_grace_seconds = _int(gc_grace_seconds, 0, u64, "gc_grace_seconds")
        self.options = options

    @property
    def memory_bytes(self) -> int:
        return int(self.options.memory_bytes)

    @property
    def fuel(self) -> int:
        return int(self.options.fuel)

    @property
    def gc_grace_seconds(self) -> int:
        return int(self.options.gc_grace_seconds)

    def _opt(self) -> Any:
        return byref(self.options)

    def _text(self, fn: Callable[..., Any], *args: Any) -> str:
        buf = _lib.Buf()
        _check(fn(self._opt(), *args, byref(buf)))
        return _lib.take_text(buf)

    def _wit_call(self, call: _codec.Call[_T], values: Tuple[Any, ...]) -> _T:
        """A generated call (``rs_call_logic_*``, ``rs_call_trace_*``) with these limits:
        the arguments checked and written as JSON, the answer read back."""
        args = call.arguments(values)
        buf = _lib.Buf()
        _check(getattr(lib, call.c_name)(self._opt(), args, len(args), byref(buf)))
        return call.answer(_lib.take_text(buf))

    def _bytes(self, fn: Callable[..., Any], *args: Any) -> bytes:
        buf = _lib.Buf()
        _check(fn(self._opt(), *args, byref(buf)))
        return _lib.take(buf)

    def canonical(self, objects: Iterable[BytesLike]) -> bytes:
        """The canonical bytes of a render (CONTRACT.md §4)."""
        return self._bytes(lib.rs_canonical, *_objects(objects))

    def render_ref(self, objects: Iterable[BytesLike]) -> str:
        """The renderRef of a render, the one a Go controller computes."""
        return self._text(lib.rs_render_ref, *_objects(objects))

    def check_objects(self, objects: Iterable[BytesLike]) -> None:
        """Raises ``invalid-object`` for the first object that is not a Kubernetes
        object as a person's or a tool's render must be (CONTRACT.md §4): ``apiVersion``,
        ``kind``, and ``metadata.name`` or ``metadata.generateName``; a ``List`` or
        ``*List`` item by item; no Secret holding the ``***`` of a masked view. Storing
        does not check this: a controller stores what it applied."""
        _check(lib.rs_check_objects(self._opt(), *_objects(objects)))

    def yaml_objects(self, yaml: BytesLike) -> List[bytes]:
        """The objects of a multi-document Kubernetes YAML stream, as a Go controller
        reads it (CONTRACT.md §11), each one object's compact JSON. A stream that is not
        a render raises ``invalid-yaml`` naming the first failing document."""
        data = _bytes(yaml, "yaml")
        return _lib.list_of_bytes(self._bytes(lib.rs_yaml_objects, data, len(data)))

    def yaml_canonical(self, yaml: BytesLike) -> bytes:
        """``canonical(yaml_objects(yaml))`` in one call."""
        data = _bytes(yaml, "yaml")
        return self._bytes(lib.rs_yaml_canonical, data, len(data))

    def yaml_render_ref(self, yaml: BytesLike) -> str:
        """``render_ref(yaml_objects(yaml))`` in one call."""
        data = _bytes(yaml, "yaml")
        return self._text(lib.rs_yaml_render_ref, data, len(data))

    def validate_render_ref(self, render_ref: str) -> None:
        """Raises ``invalid-input`` saying what is wrong with ``render_ref``."""
        _check(lib.rs_validate_render_ref(self._opt(), *_lib.text(render_ref)))

    def sha256_hex(self, data: BytesLike) -> str:
        b = _bytes(data, "data")
        return self._text(lib.rs_sha256_hex, b, len(b))

    def release_prefix(self, release: ReleaseLike) -> str:
        return self._text(lib.rs_release_prefix, *_rel(release))

    def render_key(self, release: ReleaseLike, render_ref: str) -> str:
        return self._text(lib.rs_render_key, *_rel(release), *_lib.text(render_ref))

    def history_key(self, release: ReleaseLike, synced_at: TimeLike, render_ref: str) -> str:
        return self._text(lib.rs_history_key, *_rel(release), _time(self._sync_time(synced_at)),
                          *_lib.text(render_ref))

    def parse_key(self, release: ReleaseLike, key: str) -> Optional[Tuple[str, Any]]:
        """``None``, ``("render", renderRef)`` or ``("history", HistoryKey)``."""
        kind, buf, t = c_uint32(), _lib.Buf(), _lib.Time()
        _check(lib.rs_parse_key(self._opt(), *_rel(release), *_lib.text(key), byref(kind), byref(buf),
                                byref(t)))
        render_ref = _lib.take_text(buf)
        if kind.value == _lib.KEY_RENDER:
            return ("render", render_ref)
        if kind.value == _lib.KEY_HISTORY:
            return ("history", HistoryKey(_py_time(t), render_ref))
        return None

    def format_synced_at(self, t: SyncTime) -> str:
        """RFC 3339 in UTC with nanoseconds, as Go's ``time.RFC3339Nano``."""
        return self._text(lib.rs_format_synced_at, _time(t))

    def parse_synced_at(self, text: str) -> SyncTime:
        t = _lib.Time()
        _check(lib.rs_parse_synced_at(self._opt(), *_lib.text(text), byref(t)))
        return _py_time(t)

    def plan_gc(self, release: ReleaseLike, keep: int, history_keys: Sequence[str],
                render_keys: Sequence[str], protected: Sequence[str] = (), *,
                now: Optional[SyncTime] = None) -> GcPlan:
        """The GC decision from listings alone, at ``now`` (default: this machine's
        clock), which decides the entries too far in the future to count. No grace
        period applies."""
        keep = _int(keep, -(1 << 63), (1 << 63) - 1, "keep")
        plan = self._text(lib.rs_plan_gc, *_rel(release), keep, *_strings(history_keys),
                          *_strings(render_keys), *_strings(protected),
                          _time(now if now is not None else _now()))
        return _py_plan(json.loads(plan))

    def diff_renders(self, old: BytesLike, new: BytesLike, form: str = "yaml", *,
                     show_secrets: bool = False, context: int = DEFAULT_CONTEXT) -> RenderDiff:
        """The difference between two canonical renders: changed objects' lines in
        ``form`` (``"yaml"`` or ``"json"``) with ``context`` lines around each change.
        Every value of a v1 Secret's ``data`` and ``stringData`` (and inside its
        last-applied-configuration annotation) is shown as ``***``, or ``*** (before)``
        and ``*** (after)`` where it changed, unless ``show_secrets`` is true."""
        a, b = _bytes(old, "old"), _bytes(new, "new")
        diff = self._text(lib.rs_diff_renders, a, len(a), b, len(b), _form(form),
                          _secret_values(show_secrets), _context(context))
        return _py_diff(json.loads(diff))

    def show_objects(self, canonical: BytesLike, form: str = "yaml", *,
                     show_secrets: bool = False) -> List[ShownObject]:
        """Every object of a canonical render, in order, with its text in ``form``, as
        ``diff_renders`` writes a changed object: Secret values masked unless
        ``show_secrets`` is true."""
        data = _bytes(canonical, "canonical")
        shown = json.loads(self._text(lib.rs_show_objects, data, len(data), _form(form),
                                      _secret_values(show_secrets)))
        return [ShownObject(_py_id(o), o["text"]) for o in shown]

    def summarize_history(self, release: ReleaseLike, history_keys: Sequence[str]) -> HistorySummary:
        """The entry count and newest entry from the keys listed under
        ``<prefix>history/``, no entry read; keys that are not the release's entries are
        not counted."""
        s = json.loads(self._text(lib.rs_summarize_history, *_rel(release), *_strings(history_keys)))
        newest = s["newest"]
        return HistorySummary(
            int(s["entries"]),
            None if newest is None else HistoryKey(_py_time(newest["syncedAt"]), newest["renderRef"]))

    def _sync_time(self, t: TimeLike) -> SyncTime:
        return self.parse_synced_at(t) if isinstance(t, str) else t


_DEFAULT: Dict[str, Optional[Runtime]] = {"runtime": None}
_DEFAULT_LOCK = threading.Lock()


def default_runtime() -> Runtime:
    """The runtime of the module-level functions: the library's default limits."""
    with _DEFAULT_LOCK:
        if _DEFAULT["runtime"] is None:
            _DEFAULT["runtime"] = Runtime()
        return _DEFAULT["runtime"]  # type: ignore[return-value]


def set_default_runtime(runtime: Optional[Runtime]) -> None:
    """Replaces the runtime of the module-level functions (``None``: the defaults)."""
    with _DEFAULT_LOCK:
        _DEFAULT["runtime"] = runtime


# --------------------------------------------------------------------------------------
# Buckets written in Python, served to the library through callbacks


def object_key_error(key: str) -> Optional[str]:
    """Why ``key`` is not a clean object key, by the rule every bucket of the Rust
    library applies (``None`` if it is clean)."""
    try:
        _lib.check(lib.rs_check_key(*_lib.text(key)), lambda fields: Denied(fields.detail))
    except Denied as refusal:
        return refusal.message
    return None


def _check_key(key: str) -> None:
    why = object_key_error(key)
    if why:
        raise Denied(why)


class MemoryBucket:
    """Blobs in a dict, with the bucket contract (like the Rust library's ``mem://``).
    Each blob's modification time is what ``clock()`` (a :class:`SyncTime`; default this
    machine's clock) gave at its put; a blob set in ``blobs`` directly lists as modified
    at 1970-01-01T00:00:00Z."""

    def __init__(self, blobs: Optional[Dict[str, bytes]] = None, clock: Optional[Callable[[], SyncTime]] = None):
        self.blobs: Dict[str, bytes] = dict(blobs or {})
        self.modified: Dict[str, SyncTime] = {}
        self.clock = clock or now
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes:
        _check_key(key)
        with self._lock:
            try:
                return self.blobs[key]
            except KeyError:
                raise NotFound(f"{key} does not exist") from None

    def put(self, key: str, value: bytes) -> None:
        _check_key(key)
        with self._lock:
            self.blobs[key] = bytes(value)
            self.modified[key] = self.clock()

    def exists(self, key: str) -> Optional[int]:
        _check_key(key)
        with self._lock:
            value = self.blobs.get(key)
            return None if value is None else len(value)

    def list(self, prefix: str) -> List[ObjectMeta]:
        # A listing starts from a clean folder, as the library's buckets check it.
        if "/" in prefix:
            _check_key(prefix[: prefix.rfind("/")])
        with self._lock:
            return [ObjectMeta(k, len(self.blobs[k]), self.modified.get(k, SyncTime(0, 0)))
                    for k in sorted(k for k in self.blobs if k.startswith(prefix))]

    def delete(self, key: str) -> None:
        _check_key(key)
        with self._lock:
            self.blobs.pop(key, None)
            self.modified.pop(key, None)


def _key(data: Any, n: int) -> str:
    return ctypes.string_at(data, n).decode("utf-8")


def _text_of(x: Any) -> str:
    """``str(x)``, or what ``x`` is when even that raises: a bucket's own object may."""
    try:
        return str(x)
    except Exception:
        try:
            return f"an object of type {type(x).__name__}, whose text cannot be read"
        except Exception:
            return "an object whose text cannot be read"


def _message(e: BucketError) -> str:
    """The message of a :class:`BucketError` a bucket raised or returned; a TypeError
    unless it is a ``str`` (reading it may raise too)."""
    message = e.message
    if not isinstance(message, str):
        raise TypeError(f"{type(e).__name__} with a message of type {type(message).__name__}, not str")
    return message


def _unreadable(call: str, key: str, e: BaseException) -> bytes:
    """The failure of a call whose answer could not be read (a property, ``__str__`` or
    ``__len__`` of the bucket's own object that raises): never an exception through the
    library."""
    return f"{call} {json.dumps(key)}: the bucket's answer could not be read: {_text_of(e)}".encode(
        "utf-8", "replace")


def _answer_error(answer: int, call: str, key: str, e: BaseException) -> None:
    """Answers a call with what the bucket raised: its own failure as it worded it, any
    other exception as the failure of this call, naming it and the key."""
    where = f"{call} {json.dumps(key)}"
    try:
        if isinstance(e, NotFound) and call in ("get", "exists", "delete"):
            if call == "delete":
                lib.rs_answer_ok(answer)
            else:
                lib.rs_answer_not_found(answer)
            return
        if isinstance(e, Denied):
            message = _lib.text(_message(e) or f"{where}: denied")
            lib.rs_answer_denied(answer, *message)
            return
        if isinstance(e, BucketError) and _message(e):
            lib.rs_answer_failed(answer, *_lib.text(_message(e)))
            return
        text = _text_of(e) or _text_of(repr(e))
        failure = f"{where}: {text}".encode("utf-8", "replace")
    except Exception as unreadable:  # nothing may unwind into the library
        failure = _unreadable(call, key, unreadable)
    lib.rs_answer_failed(answer, failure, len(failure))


class _Served:
    """The Python buckets the library holds, by the id it passes back as user data."""

    lock = threading.Lock()
    buckets: Dict[int, Any] = {}
    next_id = 1

    @classmethod
    def add(cls, bucket: Any) -> int:
        with cls.lock:
            n = cls.next_id
            cls.next_id += 1
            cls.buckets[n] = bucket
            return n

    @classmethod
    def of(cls, user_data: Optional[int]) -> Any:
        # One dict read: atomic under the GIL, so no lock on the path of every call.
        return cls.buckets[user_data or 0]

    @classmethod
    def drop(cls, user_data: Optional[int]) -> None:
        with cls.lock:
            cls.buckets.pop(int(user_data or 0), None)


@_lib.GET_FN
def _serve_get(user_data: Optional[int], key_p: Any, key_len: int, limit: int, answer: int) -> None:
    key = ""
    try:
        key = _key(key_p, key_len)
        value = _bytes(_Served.of(user_data).get(key), "get")
        if len(value) > limit:
            lib.rs_answer_too_large(answer, len(value))
        else:
            lib.rs_answer_bytes(answer, value, len(value))
    except BaseException as e:  # nothing may unwind into the library
        _answer_error(answer, "get", key, e)


@_lib.PUT_FN
def _serve_put(user_data: Optional[int], key_p: Any, key_len: int, value_p: Any, value_len: int,
               answer: int) -> None:
    key = ""
    try:
        key = _key(key_p, key_len)
        _Served.of(user_data).put(key, ctypes.string_at(value_p, value_len))
        lib.rs_answer_ok(answer)
    except BaseException as e:
        _answer_error(answer, "put", key, e)


@_lib.KEY_FN
def _serve_exists(user_data: Optional[int], key_p: Any, key_len: int, answer: int) -> None:
    key = ""
    try:
        key = _key(key_p, key_len)
        size = _Served.of(user_data).exists(key)
        if size is None:
            lib.rs_answer_not_found(answer)
        elif isinstance(size, bool) or not isinstance(size, int) or not 0 <= size < (1 << 64):
            raise TypeError(f"exists returned {size!r}, not a size or None")
        else:
            lib.rs_answer_size(answer, size)
    except BaseException as e:
        _answer_error(answer, "exists", key, e)


def _listed(o: Any) -> Tuple[str, int, SyncTime]:
    """A listing entry a bucket answered, checked (ctypes would wrap a negative size or
    time into the C types rather than refuse it)."""
    key, size, t = getattr(o, "key", None), getattr(o, "size", None), getattr(o, "modified", None)
    if (not isinstance(key, str) or isinstance(size, bool) or not isinstance(size, int)
            or not 0 <= size < (1 << 64) or not isinstance(t, SyncTime)
            or not isinstance(t.seconds, int) or not -(1 << 63) <= t.seconds < (1 << 63)
            or not isinstance(t.nanoseconds, int) or not 0 <= t.nanoseconds < 1_000_000_000):
        raise TypeError(f"the bucket's list answered {o!r}, not an ObjectMeta(key, size, modified) "
                        "with a size from 0 to 2^64 - 1 and nanoseconds below 10^9")
    return key, size, t


@_lib.KEY_FN
def _serve_list(user_data: Optional[int], key_p: Any, key_len: int, answer: int) -> None:
    prefix = ""
    try:
        prefix = _key(key_p, key_len)
        for o in _Served.of(user_data).list(prefix):
            key, size, t = _listed(o)
            if not lib.rs_answer_listed(answer, *_lib.text(key), size, t.seconds, t.nanoseconds):
                return  # the library refused the item and answered the call itself
        lib.rs_answer_ok(answer)
    except BaseException as e:
        _answer_error(answer, "list", prefix, e)


@_lib.KEY_FN
def _serve_delete(user_data: Optional[int], key_p: Any, key_len: int, answer: int) -> None:
    key = ""
    try:
        key = _key(key_p, key_len)
        _Served.of(user_data).delete(key)
        lib.rs_answer_ok(answer)
    except BaseException as e:
        _answer_error(answer, "delete", key, e)


@_lib.DELETE_MANY_FN
def _serve_delete_many(user_data: Optional[int], keys_p: Any, count: int, answer: int) -> None:
    first = ""
    try:
        keys = [_key(keys_p[i].data, keys_p[i].len) for i in range(count)]
        first = keys[0] if keys else ""
        bucket = _Served.of(user_data)
        if not callable(getattr(bucket, "delete_many", None)):
            for i, key in enumerate(keys):
                try:
                    bucket.delete(key)
                    lib.rs_answer_key_ok(answer, i)
                except BaseException as e:
                    _answer_key_error(answer, i, "delete", key, e)
            return
        try:
            got = bucket.delete_many(keys)
        except BaseException as e:
            _answer_error(answer, "delete-many", first, e)
            return
        try:
            each = list(got)  # once: a subclass could answer differently on a second read
            if len(each) != len(keys):
                failure = (f"delete-many {json.dumps(first)}: the bucket's delete_many answered "
                           f"{len(each)} entries for {len(keys)} keys; it must answer one entry per "
                           "key: None when deleted, a BucketError when not").encode("utf-8")
                lib.rs_answer_failed(answer, failure, len(failure))
                return
            outcomes: List[Tuple[str, bytes]] = []
            for key, outcome in zip(keys, each):
                if outcome is None or isinstance(outcome, NotFound):
                    outcomes.append(("ok", b""))
                elif isinstance(outcome, Denied):
                    outcomes.append(("denied", (_message(outcome) or f"delete {json.dumps(key)}: denied")
                                     .encode("utf-8")))
                elif isinstance(outcome, BucketError):
                    outcomes.append(("failed", (_message(outcome) or f"delete {json.dumps(key)}: failed")
                                     .encode("utf-8")))
                else:
                    raise TypeError(f"the bucket's delete_many answered {type(outcome).__name__} for "
                                    f"{json.dumps(key)}, not None or a BucketError")
        except Exception as e:
            failure = _unreadable("delete-many", first, e)
            lib.rs_answer_failed(answer, failure, len(failure))
            return
        for i, (kind, message) in enumerate(outcomes):
            if kind == "ok":
                lib.rs_answer_key_ok(answer, i)
            elif kind == "denied":
                lib.rs_answer_key_denied(answer, i, message, len(message))
            else:
                lib.rs_answer_key_failed(answer, i, message, len(message))
    except BaseException as e:
        _answer_error(answer, "delete-many", first, e)


def _answer_key_error(answer: int, index: int, call: str, key: str, e: BaseException) -> None:
    """Answers key ``index`` of a ``delete_many`` served by single deletes with what the
    bucket's ``delete`` raised."""
    try:
        if isinstance(e, NotFound):
            lib.rs_answer_key_ok(answer, index)
            return
        if isinstance(e, Denied):
            message = (_message(e) or f"{call} {json.dumps(key)}: denied").encode("utf-8")
            lib.rs_answer_key_denied(answer, index, message, len(message))
            return
        if isinstance(e, BucketError) and _message(e):
            failure = _message(e).encode("utf-8")
        else:
            failure = f"{call} {json.dumps(key)}: {_text_of(e) or _text_of(repr(e))}".encode("utf-8", "replace")
    except Exception as unreadable:
        failure = _unreadable(call, key, unreadable)
    lib.rs_answer_key_failed(answer, index, failure, len(failure))


@_lib.DROP_FN
def _serve_drop(user_data: Optional[int]) -> None:
    _Served.drop(user_data)


# --------------------------------------------------------------------------------------
# The store


class _Recording(threading.local):
    traces: Optional[List[str]] = None


_RECORDING = _Recording()


class StoreBucket:
    """The bucket under a store, called directly (no component): what a store opened
    from a URL holds, with the bucket methods, for tools that look at keys."""

    def __init__(self, store: "RenderStore"):
        self._store = store

    @staticmethod
    def _call(err: Optional[int]) -> None:
        """The library's error of a bucket call as the bucket contract raises it:
        :class:`NotFound`, :class:`Denied`, or :class:`Failed` (with the library's
        sentence) for a failure of the backend; other kinds (a closed store, a bad
        argument) as :class:`RenderStoreError`."""
        try:
            _check(err)
        except RenderStoreError as e:
            if e.kind == "not-found":
                raise NotFound(e.message) from None
            if e.kind == "denied":
                raise Denied(e.message) from None
            if e.kind in ("backend", "bucket", "too-large"):
                raise Failed(str(e)) from e
            raise

    def get(self, key: str, limit: Optional[int] = None) -> bytes:
        """The whole content of ``key``; :class:`Failed` past ``limit`` bytes (default:
        the store's memory cap), refused before it is read. :class:`NotFound` for an
        absent key."""
        buf = _lib.Buf()
        cap = self._store.runtime.memory_bytes if limit is None else limit
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_get(handle, *_lib.text(key), cap, byref(buf)))
        return _lib.take(buf)

    def put(self, key: str, value: BytesLike) -> None:
        data = _bytes(value)
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_put(handle, *_lib.text(key), data, len(data)))

    def exists(self, key: str) -> Optional[int]:
        found, size = c_bool(), c_uint64()
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_exists(handle, *_lib.text(key), byref(found), byref(size)))
        return int(size.value) if found.value else None

    def list(self, prefix: str) -> List[ObjectMeta]:
        buf = _lib.Buf()
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_list(handle, *_lib.text(prefix), byref(buf)))
        return [ObjectMeta(o["key"], int(o["size"]), _py_time(o["modified"]))
                for o in json.loads(_lib.take_text(buf))]

    def list_delimited(self, prefix: str) -> Delimited:
        """What lies directly under the folder ``prefix`` (empty, or ending in ``/``):
        the bucket's delimiter listing (one request a page on a cloud bucket), the plain
        listing folded where the bucket has none. :class:`Denied` for a prefix that names
        no folder."""
        buf = _lib.Buf()
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_list_delimited(handle, *_lib.text(prefix), byref(buf)))
        listed = json.loads(_lib.take_text(buf))
        return Delimited(list(listed["folders"]),
                         [ObjectMeta(o["key"], int(o["size"]), _py_time(o["modified"]))
                          for o in listed["objects"]])

    def delete(self, key: str) -> None:
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_delete(handle, *_lib.text(key)))

    def delete_many(self, keys: Sequence[str]) -> List[Optional[BucketError]]:
        buf = _lib.Buf()
        with self._store._bounded(None) as handle:
            self._call(lib.rs_store_bucket_delete_many(handle, *_strings(keys), byref(buf)))
        out: List[Optional[BucketError]] = []
        for item in json.loads(_lib.take_text(buf)):
            if item is None:
                out.append(None)
            elif item["kind"] == _KIND_DENIED:
                out.append(Denied(item["message"]))
            else:
                out.append(Failed(item["message"]))
        return out


_KIND_DENIED = 17


# Closing is rare: one lock for every store's, rather than a lock made with each store.
_CLOSING = threading.Lock()


def _timeout_ns(timeout: Any) -> Optional[int]:
    """A ``timeout=`` in seconds as the library's nanoseconds; ``None`` (or infinity) for
    no limit."""
    if timeout is None or timeout == math.inf:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a number of seconds above 0 (or None), not {timeout!r}")
    return max(1, int(timeout * 1_000_000_000))


class RenderStore(StoreCalls):
    """The store operations over a bucket, in the Rust host library: a store from
    :func:`open`, or ``RenderStore(bucket)`` over a bucket written in Python. Safe to use
    from many threads at once. ``close()`` (or ``with``) frees it; so does the garbage
    collector. ``encryption_keys`` and ``encryption_required``: as :func:`open` takes
    them.

    ``timeout``: the most each call may take, in seconds (``None``: no limit); every
    operation also takes ``timeout=`` for itself (``math.inf``: no limit for that call).
    A call still running then is cut where it waits, the bucket request in flight
    abandoned (for a Python bucket, when its method returns: it runs on the calling
    thread), and raises :class:`DeadlineExceeded`; the store is as a crash at that
    moment leaves it (CONTRACT.md §15)."""

    def __init__(self, bucket: Any = None, runtime: Optional[Runtime] = None, *,
                 encryption_keys: Optional[PathLike] = None, encryption_required: bool = False,
                 timeout: Optional[float] = None):
        _check_required(encryption_required)
        _timeout_ns(timeout)
        self.timeout = timeout
        self.runtime = runtime or default_runtime()
        # The bucket given, or None for a store opened from a URL (_adopt), whose
        # StoreBucket is made when asked: one kept here would hold the store in a
        # reference cycle, and a dropped store would wait for the garbage collector.
        self._bucket: Any = None
        self._ptr: Optional[int] = None
        for method in ("get", "put", "exists", "list", "delete"):
            if not callable(getattr(bucket, method, None)):
                raise TypeError(f"the bucket has no {method}() method")
        table = _lib.Bucket()
        table.size = ctypes.sizeof(table)
        user_data = _Served.add(bucket)
        table.user_data = user_data
        table.get, table.put, table.exists = _serve_get, _serve_put, _serve_exists
        table.list, table.delete_key = _serve_list, _serve_delete
        table.delete_many, table.drop = _serve_delete_many, _serve_drop
        out = ctypes.c_void_p()
        try:
            _check(lib.rs_store_new(byref(table), self.runtime._opt(), byref(out)))
        except BaseException:
            _Served.drop(user_data)
            raise
        self._ptr = out.value
        self._bucket = bucket
        self._seal(encryption_keys, encryption_required)

    @classmethod
    def _adopt(cls, ptr: int, runtime: Runtime, encryption_keys: Optional[PathLike],
               encryption_required: bool, timeout: Optional[float] = None) -> "RenderStore":
        """A store over a library store ``ptr`` (freed on error)."""
        store = cls.__new__(cls)
        store.runtime, store._bucket, store._ptr = runtime, None, ptr
        store.timeout = timeout
        store._seal(encryption_keys, encryption_required)
        return store

    @property
    def bucket(self) -> Any:
        """The bucket under the store: the object given to ``RenderStore(bucket)``, or
        for a store from :func:`open` a :class:`StoreBucket` over the library's bucket
        (which keeps the store open while it is held)."""
        return self._bucket if self._bucket is not None else StoreBucket(self)

    def _seal(self, encryption_keys: Optional[PathLike], encryption_required: bool) -> None:
        """Puts the keyring file's keys, and the rule that every render blob be sealed
        under them, on this store (CONTRACT.md, Encryption at rest); the library refuses
        the rule without keys. On error the store is freed."""
        if encryption_keys is None and not encryption_required:
            return
        try:
            with _Keyring(encryption_keys, self.runtime) as keyring:
                out = ctypes.c_void_p()
                _check(lib.rs_store_with_keyring(self._ptr, keyring.handle, encryption_required,
                                                 byref(out)))
        except BaseException:
            self.close()
            raise
        old, self._ptr = self._ptr, out.value
        lib.rs_store_free(old)

    def _handle(self) -> int:
        ptr = self._ptr
        if not ptr:
            raise ValueError("this RenderStore is closed")
        return ptr

    @contextlib.contextmanager
    def _bounded(self, timeout: Optional[float]) -> Iterator[int]:
        """The handle one call runs on: the store's, or for a call with a timeout (its
        own, else the store's) a handle whose calls end then (``rs_store_with_deadline``,
        freed after the call)."""
        ns = _timeout_ns(self.timeout if timeout is None else timeout)
        handle = self._handle()
        if ns is None:
            yield handle
            return
        out = ctypes.c_void_p()
        _check(lib.rs_store_with_deadline(handle, ns, None, byref(out)))
        try:
            yield out.value  # type: ignore[misc]
        finally:
            lib.rs_store_free(out.value)

    def close(self) -> None:
        """Frees the store (no call on it may be running). Idempotent."""
        with _CLOSING:
            ptr, self._ptr = self._ptr, None
        if ptr:
            lib.rs_store_free(ptr)

    def __enter__(self) -> "RenderStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # No lock: a running call holds a reference, so none can be running now.
        ptr = getattr(self, "_ptr", None)
        if ptr:
            self._ptr = None
            try:
                lib.rs_store_free(ptr)
            except Exception:  # interpreter shutdown
                pass

    def _traced(self, timeout: Optional[float], fn: Callable[..., Any], *args: Any) -> None:
        """Runs a traceable operation within ``timeout``, its trace kept when
        :func:`record` asks."""
        traces = _RECORDING.traces
        with self._bounded(timeout) as handle:
            if traces is None:
                _check(fn(handle, *args, None))
                return
            trace = _lib.Buf()
            try:
                err = fn(handle, *args, byref(trace))
            finally:
                text = _lib.take_text(trace)
        if text:
            traces.append(text)
        _check(err)

    def _call(self, timeout: Optional[float], fn: Callable[..., Any], *args: Any) -> None:
        """Runs an operation that is not traced, within ``timeout``."""
        with self._bounded(timeout) as handle:
            _check(fn(handle, *args))

    def _wit_call(self, call: _codec.Call[_T], values: Tuple[Any, ...],
                  timeout: Optional[float]) -> _T:
        """A generated call (``rs_call_store_*``) on this store within ``timeout``: the
        arguments checked and written as JSON before anything runs, the answer read
        back. Not traced."""
        args = call.arguments(values)
        buf = _lib.Buf()
        with self._bounded(timeout) as handle:
            _check(getattr(lib, call.c_name)(handle, args, len(args), byref(buf)))
        return call.answer(_lib.take_text(buf))

    def put_render(self, release: ReleaseLike, objects: Iterable[BytesLike], *,
                   timeout: Optional[float] = None) -> str:
        """Stores the render unless its blob is stored intact; its renderRef."""
        buf = _lib.Buf()
        if _RECORDING.traces is None and timeout is None and self.timeout is None:
            # The controller's hottest call, without the wrappers' frames.
            _check(lib.rs_store_put_render(self._ptr or self._handle(), *_rel(release), *_objects(objects),
                                           byref(buf), None))
        else:
            self._traced(timeout, lib.rs_store_put_render, *_rel(release), *_objects(objects), byref(buf))
        return _lib.take_text(buf)

    def rekey_release(self, release: ReleaseLike, *, timeout: Optional[float] = None) -> Tuple[int, int]:
        """Seals every render blob of the release not sealed under the first key of the
        store's keyring (``encryption_keys``) under it: plaintext blobs of a store where
        encryption was turned on, and blobs of an older key. Each is read, verified and
        replaced atomically, so a crash loses nothing and a second run finishes. Returns
        how many blobs were rewritten and how many already were sealed under the first
        key. A store without a keyring raises kind ``invalid-input``. Not traced."""
        rewritten, kept = c_uint32(), c_uint32()
        self._call(timeout, lib.rs_store_rekey_release, *_rel(release), byref(rewritten), byref(kept))
        return int(rewritten.value), int(kept.value)

    def put_render_yaml(self, release: ReleaseLike, yaml: BytesLike, *,
                        timeout: Optional[float] = None) -> str:
        """Stores the render a multi-document YAML stream stands for, as a Go controller
        reads it; its renderRef."""
        data, buf = _bytes(yaml, "yaml"), _lib.Buf()
        self._traced(timeout, lib.rs_store_put_render_yaml, *_rel(release), data, len(data), byref(buf))
        return _lib.take_text(buf)

    def get_render(self, release: ReleaseLike, render_ref: str, *,
                   timeout: Optional[float] = None) -> bytes:
        """The canonical bytes stored for ``render_ref``, verified against it."""
        buf = _lib.Buf()
        self._traced(timeout, lib.rs_store_get_render, *_rel(release), *_lib.text(render_ref), byref(buf))
        return _lib.take(buf)

    def has_history_ref(self, release: ReleaseLike, render_ref: str, *,
                        timeout: Optional[float] = None) -> bool:
        """Whether a history entry records ``render_ref``."""
        found = c_bool()
        self._traced(timeout, lib.rs_store_has_history_ref, *_rel(release), *_lib.text(render_ref),
                     byref(found))
        return bool(found.value)

    def record_history(self, release: ReleaseLike, entry: Union[NewEntry, None] = None, *,
                       render_ref: Optional[str] = None, synced_at: Optional[TimeLike] = None,
                       summary: str = "", timeout: Optional[float] = None) -> bool:
        """Appends a history entry unless one records the same render; whether it was
        added. Give ``entry``, or ``render_ref`` and ``synced_at`` (a :class:`SyncTime`
        or RFC 3339 text) and ``summary``."""
        if entry is None:
            if render_ref is None or synced_at is None:
                raise TypeError("record_history needs an entry, or render_ref and synced_at")
            entry = NewEntry(render_ref, self.runtime._sync_time(synced_at), summary)
        added = c_bool()
        self._traced(timeout, lib.rs_store_record_history, *_rel(release), *_lib.text(entry.render_ref),
                     _time(entry.synced_at), *_lib.text(entry.summary), byref(added))
        return bool(added.value)

    def list_history(self, release: ReleaseLike, *, timeout: Optional[float] = None) -> List[HistoryEntry]:
        """The history, oldest first."""
        buf = _lib.Buf()
        self._traced(timeout, lib.rs_store_list_history, *_rel(release), byref(buf))
        return [_py_entry(e) for e in json.loads(_lib.take_text(buf))["entries"]]

    def list_history_page(self, release: ReleaseLike, limit: int,
                          before: Optional[str] = None, *, timeout: Optional[float] = None) -> HistoryPage:
        """At most ``limit`` entries, newest first, older than the entry key ``before``
        when given (the previous page's ``next_before``). Not a traced operation."""
        limit = _int(limit, 1, (1 << 32) - 1, "limit")
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_list_history_page, *_rel(release), limit, *_lib.optional(before),
                   byref(buf))
        page = json.loads(_lib.take_text(buf))
        return HistoryPage([_py_entry(e) for e in page["entries"]], page["nextBefore"])

    def gc(self, release: ReleaseLike, keep: int, protected: Sequence[str] = (),
           dry_run: bool = False, *, now: Optional[SyncTime] = None,
           grace_seconds: Optional[int] = None, timeout: Optional[float] = None) -> GcPlan:
        """Garbage collection keeping the newest ``keep`` entries and the renders they
        and ``protected`` name. A render blob modified less than ``grace_seconds``
        (default: the runtime's ``gc_grace_seconds``) before ``now`` (default: this
        machine's clock) is not deleted: the plan lists it in ``recent_renders``.
        Entries dated more than five minutes after ``now``, and entries whose render
        is not stored, do not count toward ``keep`` and are never deleted
        (``future_history``, ``dangling_history``)."""
        keep = _int(keep, -(1 << 63), (1 << 63) - 1, "keep")
        grace = None
        if now is not None or grace_seconds is not None:
            seconds = self.runtime.gc_grace_seconds if grace_seconds is None else grace_seconds
            grace = byref(_lib.Grace(_time(now if now is not None else _now()),
                                     _int(seconds, 0, (1 << 64) - 1, "grace_seconds")))
        buf = _lib.Buf()
        self._traced(timeout, lib.rs_store_gc, *_rel(release), keep, *_strings(protected), bool(dry_run),
                     grace, byref(buf))
        return _py_plan(json.loads(_lib.take_text(buf)))

    def delete_release(self, release: ReleaseLike, *, timeout: Optional[float] = None) -> int:
        """Deletes every key of the release; how many."""
        deleted = c_uint32()
        self._traced(timeout, lib.rs_store_delete_release, *_rel(release), byref(deleted))
        return int(deleted.value)

    def diff_renders(self, release: ReleaseLike, old_ref: str, new_ref: str, form: str = "yaml", *,
                     show_secrets: bool = False, context: int = DEFAULT_CONTEXT,
                     timeout: Optional[float] = None) -> RenderDiff:
        """The difference from the stored render ``old_ref`` to ``new_ref``, Secret
        values masked unless ``show_secrets`` is true. Not a traced operation."""
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_diff, *_rel(release), *_lib.text(new_ref), *_lib.text(old_ref),
                   _form(form), _secret_values(show_secrets), _context(context), byref(buf))
        return _py_diff(json.loads(_lib.take_text(buf)))

    def images(self, pattern: Optional[str] = None, *, namespace: Optional[str] = None,
               since: Optional[TimeLike] = None, until: Optional[TimeLike] = None,
               timeout: Optional[float] = None) -> Images:
        """Where each container image matching ``pattern`` ran across the releases of the
        store (or of ``namespace``), and when, as the histories record it: a repository
        (``nginx``), a reference (``nginx:1.25``), a digest (``@sha256:HEX``) or a glob
        (``ghcr.io/org/*``); ``None`` is every image. ``since`` and ``until`` keep the
        intervals that meet the window. A bad pattern raises ``RenderStoreError`` (kind
        invalid input) before anything is read; a release that cannot be read makes the
        answer incomplete (``complete`` false), never "not there"."""
        rt = self.runtime
        window = [None if t is None else _time(rt._sync_time(t)) for t in (since, until)]
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_images, *_lib.optional(namespace), *_lib.optional(pattern),
                   *[None if t is None else byref(t) for t in window], byref(buf))
        found = json.loads(_lib.take_text(buf))

        def when(text: Optional[str]) -> Optional[SyncTime]:
            return None if text is None else rt.parse_synced_at(text)

        return Images(
            intervals=[ImageInterval(i["image"], Release(i["namespace"], i["name"]),
                                     rt.parse_synced_at(i["from"]), when(i["until"]),
                                     list(i["renderRefs"]))
                       for i in found["images"]],
            complete=bool(found["complete"]),
            unlisted=[(u["folder"], u["error"]) for u in found["unlisted"]],
            unread=[(Release(u["namespace"], u["name"]), u["error"]) for u in found["unread"]],
        )

    def index_release(self, release: ReleaseLike, read_missing: bool = True, *,
                      timeout: Optional[float] = None) -> IndexReport:
        """Brings the release index (what each render of the history holds, one blob a
        release, which ``images`` reads in place of every render) up to date with the
        history. A controller calls it with ``read_missing`` after ``record_history``
        added an entry, and without after a GC that deleted something (it then only
        drops what the history no longer names). The index is a cache: an error here
        loses nothing."""
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_index_release, *_rel(release), bool(read_missing), byref(buf))
        return _py_index_report(json.loads(_lib.take_text(buf)))

    def reindex(self, namespace: Optional[str] = None, *,
                timeout: Optional[float] = None) -> Reindexed:
        """Brings the index of every release of the store (or of ``namespace``) up to
        date, reading the renders each lacks: for renders stored before the index
        existed, or by a controller that does not keep it."""
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_reindex, *_lib.optional(namespace), byref(buf))
        done = json.loads(_lib.take_text(buf))
        return Reindexed(
            releases=[_py_index_report(r) for r in done["releases"]],
            complete=bool(done["complete"]),
            unlisted=[(u["folder"], u["error"]) for u in done["unlisted"]],
            failed=[(Release(f["namespace"], f["name"]), f["error"]) for f in done["failed"]],
        )

    def changes(self, since: Optional[TimeLike] = None, until: Optional[TimeLike] = None, *,
                namespace: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Every history entry of the fleet (of ``namespace``) synced from ``since`` until
        ``until`` (each ``None``: open), newest first, each with what changed against the
        entry before it in its release: ``render-store changes -o json``'s answer, a dict
        with ``entries`` (``namespace``, ``name``, ``entry``, ``syncedAt``, ``summary``,
        ``renderRef``, ``previousRenderRef``, ``added``, ``removed``, ``changed``,
        ``images``, ``secretKeys``: key names, never values), ``complete`` (false when a
        folder could not be listed or a release read), ``unlisted`` and ``unread`` (each
        release that could not be read: ``namespace``, ``name``, ``error``)."""
        rt = self.runtime
        window = [None if t is None else _time(rt._sync_time(t)) for t in (since, until)]
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_changes, *_lib.optional(namespace),
                   *[None if t is None else byref(t) for t in window], byref(buf))
        found: Dict[str, Any] = json.loads(_lib.take_text(buf))
        return found

    def blame(self, release: ReleaseLike, object_name: str, field: Optional[str] = None, *,
              show_secrets: bool = False, timeout: Optional[float] = None) -> Blame:
        """Which entry of the release's history last changed each field of the object
        ``object_name`` names (``KIND/NAME`` or ``NAMESPACE/KIND/NAME``), or each field
        under ``field`` (a path as the diff's hunk headers write them), in the newest
        render that holds it; Secret values masked unless ``show_secrets``. Raises
        ``RenderStoreError`` of kind ``not-found`` when no render holds the object."""
        buf = _lib.Buf()
        self._call(timeout, lib.rs_store_blame, *_rel(release), *_lib.text(object_name),
                   *_lib.optional(field), _secret_values(show_secrets), byref(buf))
        b = json.loads(_lib.take_text(buf))
        rt = self.runtime
        return Blame(
            object=_py_id(b["object"]),
            fields=[FieldBlame(f["path"], f["value"], int(f["entry"]), rt.parse_synced_at(f["syncedAt"]),
                               f["renderRef"], f["summary"]) for f in b["fields"]],
            newest=int(b["newest"]),
        )

    def diff_local(self, release: ReleaseLike, canonical: BytesLike, against: Optional[str] = None,
                   form: str = "yaml", *, show_secrets: bool = False,
                   context: int = DEFAULT_CONTEXT, timeout: Optional[float] = None) -> RenderDiff:
        """What applying a render that is not stored (its canonical bytes) would change,
        from ``against`` (default: the newest history entry's render). Reads only."""
        data, buf = _bytes(canonical, "canonical"), _lib.Buf()
        self._call(timeout, lib.rs_store_diff_local, *_rel(release), data, len(data),
                   *_lib.optional(against), _form(form), _secret_values(show_secrets),
                   _context(context), byref(buf))
        return _py_diff(json.loads(_lib.take_text(buf)))


def open(url: str, runtime: Optional[Runtime] = None, *,  # noqa: A001
         encryption_keys: Optional[PathLike] = None,
         encryption_required: bool = False, timeout: Optional[float] = None,
         request_timeout: Optional[float] = None, connect_timeout: Optional[float] = None,
         retries: Optional[int] = None, retry_timeout: Optional[float] = None) -> Optional[RenderStore]:
    """The store a render-store URL names (``s3://BUCKET``, ``gs://BUCKET``,
    ``azblob://CONTAINER``, ``file:///abs/path``, ``mem://``, with the parameters the
    Rust library takes and each cloud's credentials from the environment), or ``None``
    for an empty URL ("no render store", as the controller reads it). A bad URL raises
    :class:`RenderStoreError` of kind ``url``. ``encryption_keys``: a keyring file
    (lines ``ID KEY``, KEY the base64 of 32 random bytes, readable by its owner alone)
    whose first key seals new render blobs and whose keys read them; without it the
    store is plaintext. ``encryption_required`` (needs ``encryption_keys``): every
    render blob must be sealed under a key of the keyring; a plaintext one (which a
    writer of the bucket without the key could have planted) raises kind ``corrupt``
    where it is read and is rewritten sealed by ``put_render``. Asked for without a
    keyring, it raises kind ``invalid-input`` before the store is used.

    ``timeout``: the most each call may take, in seconds (see :class:`RenderStore`).
    A cloud store's HTTP client: ``request_timeout`` (one request, from connecting to
    the last byte of its answer; default 30 s), ``connect_timeout`` (default 5 s),
    ``retries`` (how many times a request that failed in a way worth retrying is made
    again; default 3) and ``retry_timeout`` (no retry starts later than this after the
    first attempt; default 15 s), in seconds; the URL's ``timeout``,
    ``connect_timeout``, ``retries`` and ``retry_timeout`` win."""
    _check_required(encryption_required)
    _timeout_ns(timeout)
    runtime = runtime or default_runtime()
    options = _lib.Options()
    ctypes.memmove(byref(options), runtime._opt(), ctypes.sizeof(options))

    def millis(value: Optional[float], name: str) -> Optional[int]:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e15:
            raise ValueError(f"{name} must be a number of seconds above 0, not {value!r}")
        return max(1, int(value * 1000))

    for name, value in (("request_timeout_ms", millis(request_timeout, "request_timeout")),
                        ("connect_timeout_ms", millis(connect_timeout, "connect_timeout")),
                        ("retry_timeout_ms", millis(retry_timeout, "retry_timeout"))):
        if value is not None:
            setattr(options, name, value)
    if retries is not None:
        options.max_retries = _int(retries, 0, (1 << 32) - 1, "retries")
    out = ctypes.c_void_p()
    _check(lib.rs_store_open(*_lib.text(url), byref(options), byref(out)))
    if not out.value:
        return None
    return RenderStore._adopt(out.value, runtime, encryption_keys, encryption_required, timeout)


# --------------------------------------------------------------------------------------
# The controller's rules, from the host library


def effective_keep_history(keep_history: Optional[int]) -> int:
    """The number of entries GC keeps for a Release whose keepHistory is
    ``keep_history`` (``None``: unset, the library's default), or 0 when GC is off."""
    keep = c_int64()
    given = keep_history is not None
    _check(lib.rs_effective_keep_history(given, int(keep_history or 0), byref(keep)))
    return int(keep.value)


def history_count(store: Optional[RenderStore], keep_history: Optional[int]) -> int:
    """``resolvedRetentionPolicy.historyCount`` for a Release with this keepHistory and
    ``store`` (``None``: no render store, which gives 0)."""
    count = c_int64()
    given = keep_history is not None
    handle = store._handle() if store is not None else None
    _check(lib.rs_history_count(handle, given, int(keep_history or 0), byref(count)))
    return int(count.value)


def protected_refs(applied: Optional[str] = None, last_successful: Optional[str] = None,
                   last_attempted: Optional[str] = None, pin: Optional[str] = None,
                   last_healthy: Optional[str] = None) -> List[str]:
    """The renders GC must keep whatever the history says, sorted and distinct: the
    ``protected`` list of :meth:`RenderStore.gc`."""
    buf = _lib.Buf()
    args: List[Any] = []
    for ref in (applied, last_successful, last_attempted, pin, last_healthy):
        args.extend(_lib.optional(ref))
    _check(lib.rs_protected_refs(*args, byref(buf)))
    return list(json.loads(_lib.take_text(buf)))


# --------------------------------------------------------------------------------------
# Module-level functions over the default runtime


def canonical(objects: Iterable[BytesLike]) -> bytes:
    return default_runtime().canonical(objects)


def render_ref(objects: Iterable[BytesLike]) -> str:
    return default_runtime().render_ref(objects)


def check_objects(objects: Iterable[BytesLike]) -> None:
    default_runtime().check_objects(objects)


def yaml_objects(yaml: BytesLike) -> List[bytes]:
    return default_runtime().yaml_objects(yaml)


def yaml_canonical(yaml: BytesLike) -> bytes:
    return default_runtime().yaml_canonical(yaml)


def yaml_render_ref(yaml: BytesLike) -> str:
    return default_runtime().yaml_render_ref(yaml)


def validate_render_ref(ref: str) -> None:
    default_runtime().validate_render_ref(ref)


def sha256_hex(data: BytesLike) -> str:
    return default_runtime().sha256_hex(data)


def release_prefix(release: ReleaseLike) -> str:
    return default_runtime().release_prefix(release)


def render_key(release: ReleaseLike, ref: str) -> str:
    return default_runtime().render_key(release, ref)


def history_key(release: ReleaseLike, synced_at: TimeLike, ref: str) -> str:
    return default_runtime().history_key(release, synced_at, ref)


def parse_key(release: ReleaseLike, key: str) -> Optional[Tuple[str, Any]]:
    return default_runtime().parse_key(release, key)


def format_synced_at(t: SyncTime) -> str:
    return default_runtime().format_synced_at(t)


def parse_synced_at(text: str) -> SyncTime:
    return default_runtime().parse_synced_at(text)


def plan_gc(release: ReleaseLike, keep: int, history_keys: Sequence[str],
            render_keys: Sequence[str], protected: Sequence[str] = (), *,
            now: Optional[SyncTime] = None) -> GcPlan:
    return default_runtime().plan_gc(release, keep, history_keys, render_keys, protected, now=now)


def diff_renders(old: BytesLike, new: BytesLike, form: str = "yaml", *,
                 show_secrets: bool = False, context: int = DEFAULT_CONTEXT) -> RenderDiff:
    """The difference between two canonical renders (``Runtime.diff_renders``)."""
    return default_runtime().diff_renders(old, new, form, show_secrets=show_secrets, context=context)


def show_objects(canonical: BytesLike, form: str = "yaml", *,
                 show_secrets: bool = False) -> List[ShownObject]:
    """Every object of a canonical render (``Runtime.show_objects``)."""
    return default_runtime().show_objects(canonical, form, show_secrets=show_secrets)


def summarize_history(release: ReleaseLike, history_keys: Sequence[str]) -> HistorySummary:
    """A release's history from one listing's keys (``Runtime.summarize_history``)."""
    return default_runtime().summarize_history(release, history_keys)


def _over(bucket: Any, fn: Callable[[RenderStore], Any]) -> Any:
    store = RenderStore(bucket)
    try:
        return fn(store)
    finally:
        store.close()


def put_render(bucket: Any, release: ReleaseLike, objects: Iterable[BytesLike]) -> str:
    return _over(bucket, lambda s: s.put_render(release, objects))


def get_render(bucket: Any, release: ReleaseLike, ref: str) -> bytes:
    return _over(bucket, lambda s: s.get_render(release, ref))


def has_history_ref(bucket: Any, release: ReleaseLike, ref: str) -> bool:
    return _over(bucket, lambda s: s.has_history_ref(release, ref))


def record_history(bucket: Any, release: ReleaseLike, entry: Optional[NewEntry] = None, **kw: Any) -> bool:
    return _over(bucket, lambda s: s.record_history(release, entry, **kw))


def list_history(bucket: Any, release: ReleaseLike) -> List[HistoryEntry]:
    return _over(bucket, lambda s: s.list_history(release))


def gc(bucket: Any, release: ReleaseLike, keep: int, protected: Sequence[str] = (), dry_run: bool = False,
       *, now: Optional[SyncTime] = None, grace_seconds: Optional[int] = None) -> GcPlan:
    return _over(bucket, lambda s: s.gc(release, keep, protected, dry_run, now=now,
                                        grace_seconds=grace_seconds))


def delete_release(bucket: Any, release: ReleaseLike) -> int:
    return _over(bucket, lambda s: s.delete_release(release))


# --------------------------------------------------------------------------------------
# Traces (TRACES.md): the host library records them; the component writes, reads and
# replays them.


class Recorded(NamedTuple):
    """A recorded store call: its trace (TRACES.md), what it returned, or the
    :class:`RenderStoreError` it raised (a failure is traced too)."""

    trace: str
    value: Any
    error: Optional[RenderStoreError]


def record(fn: Callable[[], Any]) -> Recorded:
    """Runs ``fn``, which makes one traceable store call (``store.gc(...)``,
    ``store.put_render(...)``, ...) on this thread, and records it."""
    previous = _RECORDING.traces
    traces: List[str] = []
    _RECORDING.traces = traces
    value, error = None, None
    try:
        value = fn()
    except RenderStoreError as e:
        error = e
    finally:
        _RECORDING.traces = previous
    if len(traces) != 1:
        raise RuntimeError(f"record: {len(traces)} store calls were traced; a trace records exactly one")
    return Recorded(traces[0], value, error)


class Replay(NamedTuple):
    """What a replay found (the component's report): ``matches`` (every call and the
    result), the first differing call (``None`` when the calls agree), the replayed
    ``result``, the report for people (``text``, what ``render-store replay`` prints)
    and the whole JSON report (``report``, as ``render-store replay --json`` prints it)."""

    matches: bool
    first_difference: Optional[Dict[str, Any]]
    result: Dict[str, Any]
    text: str
    report: Dict[str, Any]


def replay(trace_text: str, runtime: Optional[Runtime] = None, *,
           encryption_keys: Optional[PathLike] = None) -> Replay:
    """Replays a trace in the component against its recorded answers alone. A trace of
    an encrypted store replays only with the keyring file it was recorded with
    (``encryption_keys``); another raises :class:`TraceError` at line 1. Raises
    :class:`TraceError` for a malformed trace, :class:`RenderStoreError` when the replay
    itself was stopped."""
    runtime = runtime or default_runtime()
    matches, text, report = c_bool(), _lib.Buf(), _lib.Buf()
    with _Keyring(encryption_keys, runtime) as keyring:
        _check(lib.rs_replay(runtime._opt(), *_lib.text(str(trace_text)), keyring.handle, byref(matches),
                             byref(text), byref(report)))
    text_value = _lib.take_text(text)
    report_value = json.loads(_lib.take_text(report))
    return Replay(bool(matches.value), report_value["firstDifference"], report_value["result"], text_value,
                  report_value)
