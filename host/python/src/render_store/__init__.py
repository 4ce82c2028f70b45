"""A Python host of the render-store WebAssembly component.

The component (``render-store component --out FILE.wasm``) is run as its main core module
under wasmtime's C API (``render_store._capi``, the library the wasmtime wheel ships),
with the component model's canonical ABI done by this package (``render_store._abi``),
as the npm package does in JavaScript. It is granted one capability, the
WIT ``bucket`` interface, served by a Python bucket and scoped to the release being
served exactly as the Rust host scopes it; nothing else (no WASI) is linked.

Every piece of render-store logic -- canonical JSON, hashing, keys, history, GC, diffs
and the masking of Secret values in them -- runs inside the component. This module only
converts values, serves bucket calls and, for traces (TRACES.md), records them: the
component writes, reads and replays traces.

Errors of the WIT ``error`` variant are raised as :class:`RenderStoreError` with
``kind`` set to the variant case (``invalid-input``, ``invalid-object``, ``not-found``,
``corrupt``, ``bucket``, ``invalid-yaml``) and ``message`` its text (``index`` too for
``invalid-object``; ``stage``, ``document``, ``line`` and ``column`` for
``invalid-yaml``). A call wasmtime stopped (trap, memory cap, fuel), or one whose
answer broke the canonical ABI, is ``kind == "trap"``.

A Python bucket is any object with ``get(key) -> bytes``, ``put(key, value)``,
``exists(key) -> size or None``, ``list(prefix) -> [ObjectMeta(key, size, modified)]``
(every object whose key starts with ``prefix``, sorted by key, ``modified`` a
:class:`SyncTime` by the bucket's clock) and ``delete(key)``, and optionally
``delete_many(keys)`` for a backend with a batch request (GC and ``delete_release``
delete up to 1,000 keys a call; without it, each key is a ``delete``): it returns one
entry per key, in order, ``None`` when deleted and a :class:`BucketError` (returned, not
raised) for a key it could not delete, and raises when the whole request failed. It
reports failures by
raising :class:`NotFound`, :class:`Denied` or :class:`Failed` (the WIT ``bucket-error``
cases); any other exception, or an answer of the wrong type, becomes
``failed('<call> "<key>": <exception>')``, worded as every host words a backend
failure (wit/render-store.wit, ``bucket-error``; :class:`Messages`).

Speed: wasmtime-py's component API reads a function's type again and walks the cases of
every variant on each call, and moves a ``list<u8>`` one element at a time; doing the
ABI here, the WIT types are read once and bytes cross with one copy each way. Bytes go
to the component as the WIT ``data`` variant's ``raw`` case, a render's objects as the
``object-list``'s ``joined`` case (one buffer and the end of each object), and the
component answers in the same form. Nothing of wasmtime-py's private API is used or
patched.
"""

from __future__ import annotations

import errno
import importlib.resources
import itertools
import json
import logging
import os
import re
import stat
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import wasmtime
import wasmtime.component as wc

from . import _abi, _capi

__all__ = [
    "DEFAULT_CONTEXT",
    "RenderStoreError", "BucketError", "NotFound", "Denied", "Failed", "TraceError",
    "Release", "SyncTime", "ObjectMeta", "NewEntry", "HistoryEntry", "HistoryKey", "HistoryPage", "GcPlan",
    "ObjectId", "ChangedObject", "RenderDiff", "Replay", "ShownObject", "HistorySummary",
    "Runtime", "RenderStore", "MemoryBucket", "FolderBucket",
    "default_runtime", "set_default_runtime",
    "canonical", "render_ref", "validate_render_ref", "sha256_hex", "release_prefix",
    "render_key", "history_key", "parse_key", "format_key_time", "parse_key_time",
    "format_synced_at", "parse_synced_at", "plan_gc", "diff_renders", "show_objects",
    "summarize_history",
    "yaml_objects", "yaml_canonical", "yaml_render_ref",
    "put_render", "get_render", "has_history_ref", "record_history", "list_history",
    "gc", "delete_release", "record", "Recorded", "replay",
    "Messages", "object_key_error",
    "GC_GRACE_SECONDS", "now",
]

PACKAGE = "convoy:render-store"
VERSION = "0.6.0"
BUCKET_INTERFACE = f"{PACKAGE}/bucket@{VERSION}"

#: Lines of context a diff shows around each change unless asked otherwise.
DEFAULT_CONTEXT = 3

#: The Rust host's per-call limits (host/render-store/src/runtime.rs, ``Limits``).
DEFAULT_MEMORY_BYTES = 1 << 30
DEFAULT_FUEL = 100_000_000_000


#: GC's default grace period, as the Rust host's (``--grace 10m``): no render blob
#: written less than this many seconds before ``now`` is deleted.
GC_GRACE_SECONDS = 600


# --------------------------------------------------------------------------------------
# Errors


class RenderStoreError(Exception):
    """The component's WIT ``error`` variant, or ``kind == "trap"`` for a stopped call.

    ``kind``: ``invalid-input``, ``invalid-object``, ``not-found``, ``corrupt``,
    ``bucket``, ``invalid-yaml`` or ``trap``; ``message``: the text; ``index``: the bad
    object's position (``invalid-object`` only). For ``invalid-yaml`` (a YAML stream
    that is not a render: the first failing document), ``stage`` is the step that
    rejected it (``split``, ``yaml`` or ``object``), ``document`` the document's index
    from 0 (skipped empty or ``null`` documents counted), ``line`` and ``column`` where
    in the stream, from 1; all ``None`` for other kinds.
    """

    KINDS = ("invalid-input", "invalid-object", "not-found", "corrupt", "bucket", "invalid-yaml", "trap")

    def __init__(self, kind: str, message: str, index: Optional[int] = None, *,
                 stage: Optional[str] = None, document: Optional[int] = None,
                 line: Optional[int] = None, column: Optional[int] = None):
        if index is not None:
            text = f"{kind} (object {index}): {message}"
        elif stage is not None:
            text = f"{kind} ({stage}, document {document}, line {line}, column {column}): {message}"
        else:
            text = f"{kind}: {message}"
        super().__init__(text)
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


class BucketError(Exception):
    """Raised by a bucket: one of the WIT ``bucket-error`` cases."""

    kind = "failed"

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message


class NotFound(BucketError):
    """``not-found``: the key does not exist (``get``)."""

    kind = "not-found"


class Denied(BucketError):
    """``denied(message)``: the host refused the call."""

    kind = "denied"


class Failed(BucketError):
    """``failed(message)``: the backend failed."""

    kind = "failed"


class TraceError(ValueError):
    """A trace that does not follow TRACES.md."""

    def __init__(self, line: int, message: str):
        super().__init__(f"trace line {line}: {message}")
        self.line = line


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


def now() -> "SyncTime":
    """This machine's clock as a :class:`SyncTime`."""
    return SyncTime(*divmod(time.time_ns(), 1_000_000_000))


_now = now  # for functions whose `now` parameter hides it


@dataclass(frozen=True)
class ObjectMeta:
    """One object of a listing: its key, its size in bytes and when it was last
    written, by the bucket's clock (the WIT ``object-meta``)."""

    key: str
    size: int
    modified: SyncTime


@dataclass(frozen=True)
class NewEntry:
    """A history entry to record."""

    render_ref: str
    synced_at: SyncTime
    summary: str = ""


@dataclass(frozen=True)
class HistoryEntry:
    """A stored history entry."""

    key: str
    render_ref: str
    synced_at: SyncTime
    summary: str


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
    """What a garbage collection deletes and keeps (full keys, lexical order)."""

    delete_history: List[str]
    keep_history: List[str]
    delete_renders: List[str]
    keep_renders: List[str]
    ignored: List[str]
    #: Unreferenced blobs kept only because they are younger than the grace period.
    recent_renders: List[str]

    def to_json(self) -> Dict[str, List[str]]:
        return {
            "deleteHistory": list(self.delete_history),
            "keepHistory": list(self.keep_history),
            "deleteRenders": list(self.delete_renders),
            "keepRenders": list(self.keep_renders),
            "ignored": list(self.ignored),
            "recentRenders": list(self.recent_renders),
        }


@dataclass(frozen=True)
class ObjectId:
    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True)
class ChangedObject:
    id: ObjectId
    lines: List[str]


@dataclass(frozen=True)
class RenderDiff:
    added: List[ObjectId]
    removed: List[ObjectId]
    changed: List[ChangedObject]
    unchanged: int


@dataclass(frozen=True)
class ShownObject:
    """An object of a render written out for people (``show_objects``)."""

    id: ObjectId
    text: str


@dataclass(frozen=True)
class HistorySummary:
    """A release's history as one listing shows it (``summarize_history``)."""

    entries: int
    newest: Optional[HistoryKey]


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


# --------------------------------------------------------------------------------------
# Bytes across the boundary
#
# This package does the canonical ABI itself (``_abi``), so a ``list<u8>`` crosses with
# one copy, like a ``string``: bytes go to the component as the WIT ``data`` variant's
# ``raw`` case and come back as ``raw``, never decoded and encoded again. A render's
# objects go as ``joined``: one buffer and where each object ends, two allocations in the
# component however many objects there are (each allocation is a call into it).


def _data(b: BytesLike) -> Union[str, bytes]:
    """Bytes (or text) as the WIT ``data`` variant: ``bytes`` (``raw``) for bytes, kept
    byte for byte (Go's handling of invalid UTF-8 depends on the exact bytes); a ``str``
    as it is (``text``)."""
    if isinstance(b, (str, bytes)):
        return b
    try:
        return bytes(b)
    except TypeError:
        raise TypeError(f"expected bytes, bytearray, memoryview or str, not {type(b).__name__}") from None


def _object_list(objects: Iterable[BytesLike]) -> wc.Variant:
    """A render's objects as the WIT ``object-list``'s ``joined`` case: every object's
    bytes in one buffer (a ``str`` object as its UTF-8), and where each ends."""
    if isinstance(objects, (bytes, bytearray, memoryview, str)):
        raise TypeError("objects must be a sequence of objects, each one JSON object's bytes")
    # The usual case, a list of bytes, goes as it is; anything else is made bytes first.
    usual = isinstance(objects, (list, tuple)) and set(map(type, objects)) <= {bytes}
    parts = objects if usual else [_object_bytes(i, o) for i, o in enumerate(objects)]
    ends = list(itertools.accumulate(map(len, parts)))
    if ends and ends[-1] >= 1 << 32:
        raise ValueError(f"the objects are {ends[-1]} bytes together; a render is at most 4 GiB - 1")
    return wc.Variant("joined", _rec(bytes=b"".join(parts), ends=ends))


def _object_bytes(index: int, o: Any) -> Any:
    """One object as bytes or a byte view (a ``str`` as its UTF-8)."""
    if isinstance(o, str):
        return o.encode("utf-8")
    if isinstance(o, (bytes, bytearray)):
        return o
    try:
        return memoryview(o).cast("B")
    except TypeError:
        raise TypeError(f"objects[{index}]: expected bytes, bytearray, memoryview or str, "
                        f"not {type(o).__name__}") from None


def _utf8(text: str) -> bytes:
    """Text the component made (YAML's objects) as the bytes this API returns."""
    return text.encode("utf-8")


def _data_bytes(d: Union[str, bytes]) -> bytes:
    """A WIT ``data`` from the component (a canonical render, a stored blob, a value to
    store) as the bytes it stands for. The component answers in the form it was given:
    ``raw`` (``bytes``) for this package's calls, which send bytes; ``text`` (a ``str``)
    where the component builds the value itself (record-history's small entry body), and
    either is taken, since the component is untrusted input."""
    return d.encode("utf-8") if isinstance(d, str) else bytes(d)


# --------------------------------------------------------------------------------------
# Messages

_SURROGATE = re.compile("[\ud800-\udfff]")


class Messages:
    """Every message this host gives the component in a ``bucket-error``, and the line
    it logs for an entry a ``file://`` listing leaves out, worded as
    wit/render-store.wit specifies them (the Rust host's ``render_store::bucket::messages``,
    the Node host's ``messages``): tests/vectors/messages.json holds the same words for
    all three. Keys, prefixes and file names are quoted with :meth:`quote`."""

    #: ``denied``: a bucket call from a call that was given no bucket (the pure logic).
    NO_BUCKET = "this call has no bucket"

    #: What a ``file://`` listing met inside its prefix that it will not walk, and how
    #: to mend it (the ``why`` of :meth:`unwalkable`).
    UNWALKABLE_LINK = ("a symbolic link, which a file:// store never follows",
                       "remove the link, or move back what it points to")
    UNWALKABLE_NOT_FOLDER = ("which is not a folder, though the prefix needs one there",
                             "remove it, or move back the folder")
    UNWALKABLE_UNREADABLE = ("a folder this user cannot read", "make it readable by this user")

    #: Why a ``file://`` listing left an entry out (the ``why`` of :meth:`left_out`).
    LINK = "a symbolic link"
    LINK_OR_FILE = "a symbolic link or not a folder"
    NOT_PLAIN_FILE = "not a regular file"
    ODD_NAME = "a name that is not UTF-8 or holds control characters"

    @staticmethod
    def quote(text: str) -> str:
        """``text`` as a JSON string: ``json.dumps(text, ensure_ascii=False)``, which
        escapes ``"``, ``\\`` and U+0000 to U+001F and nothing else, byte for byte as
        serde_json and ``JSON.stringify`` do. A lone surrogate (a ``str`` can hold one,
        a key from the component never does) is written ``\\udXXX`` as
        ``JSON.stringify`` writes it, where ``json.dumps`` would leave a message that
        cannot be encoded as UTF-8."""
        quoted = json.dumps(text, ensure_ascii=False)
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)

    @staticmethod
    def outside_prefix(key: str, prefix: str) -> str:
        """``denied``: ``key`` does not start with the prefix of the release being served."""
        return (f"key {Messages.quote(key)} lies outside {Messages.quote(prefix)}, "
                "the prefix of the release being served")

    @staticmethod
    def invalid_key(key: str) -> str:
        """``denied``: ``key`` is not a clean ``/``-separated path."""
        return (f"{Messages.quote(key)} is not a valid object key (empty, `.` or `..` components, "
                "or control characters)")

    @staticmethod
    def read_only(call: str, key: str) -> str:
        """``denied``: a ``put`` or ``delete`` (``call``) on a read-only bucket."""
        return f"{call} {Messages.quote(key)}: this bucket is read-only"

    @staticmethod
    def too_large(key: str, size: int, limit: int) -> str:
        """``failed``: a ``get`` of an object over the call's memory cap (the Rust
        host's; this host does not bound reads)."""
        return (f"get {Messages.quote(key)}: the object is {size} bytes, over the call's memory cap "
                f"of {limit} bytes; raise the cap (--memory-cap-mib) if the object is legitimate")

    @staticmethod
    def backend(call: str, key: str, description: Any) -> str:
        """``failed``: the backend failed ``call``; ``description`` is its own text."""
        return f"{call} {Messages.quote(key)}: {description}"

    @staticmethod
    def crosses_link(key: str, component: str) -> str:
        """``denied`` (``file://``): a folder on the way to ``key``, ``component``, is a
        link or a file."""
        return (f"key {Messages.quote(key)} crosses {Messages.quote(component)}, which is a symbolic "
                "link or not a folder; a file:// store never follows links: remove it")

    @staticmethod
    def not_plain_file(key: str) -> str:
        """``denied`` (``file://``): ``key`` names a FIFO, a socket or a device."""
        return f"{Messages.quote(key)} is not a regular file; a file:// store keeps blobs in plain files only"

    @staticmethod
    def staging_mark(key: str) -> str:
        """``denied`` (``file://``): a ``put`` of a key holding ``#``, which marks
        staging files."""
        return f'{Messages.quote(key)} holds "#", which a file:// store reserves for staging files'

    @staticmethod
    def folder_not_blob(key: str) -> str:
        """``denied`` (``file://``): a ``delete`` of a key that names a folder."""
        return f"{Messages.quote(key)} is a folder, not a blob"

    @staticmethod
    def unwalkable(prefix: str, path: str, why: Tuple[str, str]) -> str:
        """``denied`` (``file://``): a listing of ``prefix`` met ``path`` (the would-be
        key of what it met) inside it, which it will not walk (``why``, one of the
        ``UNWALKABLE_*``). The listing fails as a whole: an answer without what lies
        beyond ``path`` would read as "not there" to GC and ``delete_release``."""
        what, fix = why
        return (f"list {Messages.quote(prefix)} meets {Messages.quote(path)}, {what}; a listing fails "
                f"rather than leave out what it cannot see: {fix}")

    @staticmethod
    def entry(path: Union[str, bytes]) -> str:
        """The path a listing left out, quoted: a ``str``, or ``bytes`` that need not
        be UTF-8 (each invalid sequence becomes U+FFFD, as Rust's ``from_utf8_lossy``
        and ``TextDecoder`` decode)."""
        return Messages.quote(path.decode("utf-8", "replace") if isinstance(path, bytes) else path)

    @staticmethod
    def entry_at(dir_part: str, component: str) -> str:
        """The path a listing left out when the folder it names crosses ``component``."""
        return f"{Messages.quote(dir_part)} (at {Messages.quote(component)})"

    @staticmethod
    def left_out(entry: str, why: str) -> str:
        """The log line (after the host's own lead-in) for an entry a listing left out."""
        return (f"left out of listings: {entry} is {why}; a file:// store never follows links or "
                "lists what is not a plain file with a clean name")


# --------------------------------------------------------------------------------------
# Buckets

# A clean key in one match: segments of no "/" or control character, none "." or "..".
_SEGMENT = r"(?!\.\.?(?:/|\Z))[^/\x00-\x1f\x7f]+"
_CLEAN_KEY = re.compile(f"{_SEGMENT}(?:/{_SEGMENT})*")


def object_key_error(key: str) -> Optional[str]:
    """Why ``key`` is not a clean object key, the Rust host's check (``None`` if it is):
    no leading or trailing ``/``, no empty, ``.`` or ``..`` segment, no ASCII control
    character."""
    return None if _CLEAN_KEY.fullmatch(key) else Messages.invalid_key(key)


def _check_key(key: str) -> None:
    why = object_key_error(key)
    if why:
        raise Denied(why)


def _list_parent(prefix: str) -> Optional[str]:
    """The segment-aligned parent a listing starts from (checked like a key)."""
    i = prefix.rfind("/")
    if i < 0:
        return None
    parent = prefix[:i]
    _check_key(parent)
    return parent


class MemoryBucket:
    """Blobs in a dict, with the bucket contract (like the Rust host's ``mem://``). Each
    blob's modification time is what ``clock()`` (a :class:`SyncTime`; default this
    machine's clock) gave at its put; a blob set in ``blobs`` directly lists as modified
    at 1970-01-01T00:00:00Z."""

    def __init__(self, blobs: Optional[Dict[str, bytes]] = None, clock: Optional[Any] = None):
        self.blobs: Dict[str, bytes] = dict(blobs or {})
        self.modified: Dict[str, SyncTime] = {}
        self.clock = clock or now

    def get(self, key: str) -> bytes:
        _check_key(key)
        try:
            return self.blobs[key]
        except KeyError:
            raise NotFound(f"{key} does not exist") from None

    def put(self, key: str, value: bytes) -> None:
        _check_key(key)
        self.blobs[key] = bytes(value)
        self.modified[key] = self.clock()

    def exists(self, key: str) -> Optional[int]:
        _check_key(key)
        value = self.blobs.get(key)
        return None if value is None else len(value)

    def list(self, prefix: str) -> List[ObjectMeta]:
        _list_parent(prefix)
        return [ObjectMeta(k, len(self.blobs[k]), self.modified.get(k, SyncTime(0, 0)))
                for k in sorted(k for k in self.blobs if k.startswith(prefix))]

    def delete(self, key: str) -> None:
        _check_key(key)
        self.blobs.pop(key, None)
        self.modified.pop(key, None)


#: A name that cannot be part of a file:// key: Unicode control characters (Rust's
#: ``char::is_control``, category Cc).
_CC = re.compile("[\x00-\x1f\x7f-\x9f]")
#: Separates a key's file name from the staging suffix of its writer.
_STAGING_MARK = "#"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LOG = logging.getLogger("render_store")


def _components(key: str) -> List[str]:
    """A key's components, or ``denied`` naming the key (the Rust FolderBucket's check)."""
    parts = key.split("/")
    if not key or any(p in ("", ".", "..") or _CC.search(p) for p in parts):
        raise Denied(Messages.invalid_key(key))
    return parts


def _crosses_link(key: str, component: str) -> Denied:
    return Denied(Messages.crosses_link(key, component))


def _not_plain_file(key: str) -> Denied:
    return Denied(Messages.not_plain_file(key))


def _unwalkable(prefix: str, path: str, why: Tuple[str, str]) -> Denied:
    return Denied(Messages.unwalkable(prefix, path, why))


def _not_utf8(name: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in name)


class _Missing(Exception):
    """A folder on a key's way does not exist."""


class _Link(Exception):
    """A component on a key's way, ``dirs[at]``, is a link (``is_link``) or not a folder."""

    def __init__(self, component: str, at: int, is_link: bool):
        super().__init__(component)
        self.component, self.at, self.is_link = component, at, is_link


class _Unreadable(Exception):
    """A folder on a key's way, ``dirs[at]``, is one this user may not open (``error``)."""

    def __init__(self, component: str, at: int, error: OSError):
        super().__init__(component)
        self.component, self.at, self.error = component, at, error


def _is_link(name: str, dir_fd: int) -> bool:
    """Whether ``name`` in the folder ``dir_fd`` is a symbolic link (not followed)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


#: What a folder this user may not open or read answers.
_UNREADABLE = (errno.EACCES, errno.EPERM)


class FolderBucket:
    """Blobs as files under a folder, with the layout and rules of the Rust host's
    ``file://ROOT`` (host/render-store/src/bucket/folder.rs): key ``a/b/c`` is the file ``ROOT/a/b/c``.

    Nothing beneath the root is reached through a symbolic link: every path is walked
    one component at a time from the root's descriptor with ``openat(O_NOFOLLOW)``
    (``dir_fd``), so a component that is a link fails the open itself; a key that
    crosses a link is denied, naming the key. Folders are created 0700, files 0600. A
    ``put`` writes the staging file ``<name>#<pid>.<n>`` (created exclusively) and
    renames it over the key; staging files are listed like any other file (GC leaves
    them alone, ``delete_release`` removes them), and a key holding ``#`` cannot be
    put. A listing gives each object's size and modification time and leaves out, with
    a warning (once per entry; ``warn``, default the ``render_store`` logger), files that
    cannot be keys: FIFOs, sockets and devices, and names that are not UTF-8 or hold
    control characters. Inside the prefix it lists, a symbolic link, a file or FIFO
    where the prefix needs a folder, or a folder this user cannot read fails the
    listing with :class:`Denied` naming it (fail closed: GC and ``delete_release``
    decide from listings); a folder that does not exist lists as empty. ``delete``
    removes the folders it leaves empty (up to ROOT).
    """

    def __init__(self, root: Union[str, os.PathLike], create_dir: bool = False,
                 warn: Optional[Any] = None):
        root = os.path.abspath(os.fspath(root))
        if create_dir:
            missing = []
            while not os.path.isdir(root) and os.path.dirname(root) != root:
                missing.append(root)
                root = os.path.dirname(root)
            for folder in reversed(missing):
                try:
                    os.mkdir(folder, 0o700)
                except FileExistsError:
                    pass
            root = missing[0] if missing else root
        elif not os.path.isdir(root):
            raise FileNotFoundError(f"directory {root} does not exist; create it or pass create_dir=True")
        # The root is the operator's choice and may be reached through links; nothing
        # beneath it is.
        self.root = os.path.realpath(root)
        self._root: Optional[int] = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._staging = itertools.count()
        self._reported: set = set()
        self.warn = warn or _LOG.warning

    @classmethod
    def from_url(cls, url: str) -> "FolderBucket":
        """``file:///abs/path[?create_dir=true]``."""
        from urllib.parse import parse_qs, unquote, urlsplit

        parts = urlsplit(url)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            raise ValueError(f"{url!r} is not a file:///abs/path URL")
        query = parse_qs(parts.query)
        create = query.pop("create_dir", ["false"])[-1] == "true"
        if query:
            raise ValueError(f"{url!r}: unknown parameters {sorted(query)}")
        return cls(unquote(parts.path), create_dir=create)

    def close(self) -> None:
        """Closes the root's descriptor; the bucket cannot be used after."""
        if self._root is not None:
            os.close(self._root)
            self._root = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "FolderBucket":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _close(self, fds: List[int]) -> None:
        for fd in fds[1:]:
            os.close(fd)

    def _walk(self, dirs: Sequence[str], create: bool) -> List[int]:
        """Opens the folders ``dirs`` one by one from the root, never following a link;
        with ``create``, makes the missing ones (0700). Returns every folder opened, the
        root first (close them with ``_close``). Raises _Missing, _Link, _Unreadable or
        OSError."""
        if self._root is None:
            raise ValueError("the FolderBucket was closed")
        fds = [self._root]
        try:
            for name in dirs:
                here = fds[-1]
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=here)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(name, 0o700, dir_fd=here)
                    except FileExistsError:
                        pass
                    fd = os.open(name, _DIR_FLAGS, dir_fd=here)
                fds.append(fd)
            return fds
        except FileNotFoundError:
            self._close(fds)
            raise _Missing() from None
        except OSError as e:
            at = len(fds) - 1
            try:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    is_link = e.errno == errno.ELOOP or _is_link(dirs[at], fds[-1])
                    raise _Link(dirs[at], at, is_link) from None
                if e.errno in _UNREADABLE:
                    raise _Unreadable(dirs[at], at, e) from None
                raise
            finally:
                self._close(fds)

    def _parent(self, call: str, key: str, create: bool) -> Optional[Tuple[List[int], str]]:
        """The opened folders down to a key's folder and its file name; ``None`` when a
        folder on the way is missing."""
        parts = _components(key)
        try:
            return self._walk(parts[:-1], create), parts[-1]
        except _Missing:
            return None
        except _Link as e:
            raise _crosses_link(key, e.component) from None
        except _Unreadable as e:
            raise Failed(Messages.backend(call, key, e.error)) from None
        except OSError as e:
            raise Failed(Messages.backend(call, key, e)) from None

    def get(self, key: str) -> bytes:
        parent = self._parent("get", key, False)
        if parent is None:
            raise NotFound(f"{key} does not exist")
        fds, name = parent
        try:
            # NONBLOCK: opening a FIFO planted at a key must not hang the call.
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            try:
                fd = os.open(name, flags, dir_fd=fds[-1])
            except FileNotFoundError:
                raise NotFound(f"{key} does not exist") from None
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise _crosses_link(key, name) from None
                raise Failed(Messages.backend("get", key, e)) from None
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise _not_plain_file(key)
                chunks = []
                while True:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        return b"".join(chunks)
                    chunks.append(chunk)
            except OSError as e:
                raise Failed(Messages.backend("get", key, e)) from None
            finally:
                os.close(fd)
        finally:
            self._close(fds)

    def put(self, key: str, value: bytes) -> None:
        if _STAGING_MARK in key:
            raise Denied(Messages.staging_mark(key))
        # A concurrent delete may remove a folder this walk opened (it removes the
        # folders it leaves empty): then the staging file cannot be created, and the
        # walk is made again.
        for attempt in (1, 2, 3):
            parent = self._parent("put", key, True)
            if parent is None:
                raise Failed(Messages.backend("put", key, "a folder on the way disappeared"))
            fds, name = parent
            try:
                dir_fd = fds[-1]
                staging = f"{name}{_STAGING_MARK}{os.getpid()}.{next(self._staging)}"
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                try:
                    fd = os.open(staging, flags, 0o600, dir_fd=dir_fd)
                except FileNotFoundError as e:
                    if attempt < 3:
                        continue
                    raise Failed(Messages.backend("put", key, e)) from None
                except OSError as e:
                    raise Failed(Messages.backend("put", key, e)) from None
                try:
                    with os.fdopen(fd, "wb") as f:
                        f.write(value)
                    # rename replaces a link at the key itself, never what it points to.
                    os.rename(staging, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                except OSError as e:
                    try:
                        os.unlink(staging, dir_fd=dir_fd)
                    except OSError:
                        pass
                    raise Failed(Messages.backend("put", key, e)) from None
                return
            finally:
                self._close(fds)

    def exists(self, key: str) -> Optional[int]:
        parent = self._parent("exists", key, False)
        if parent is None:
            return None
        fds, name = parent
        try:
            try:
                st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                return None
            except OSError as e:
                raise Failed(Messages.backend("exists", key, e)) from None
            if stat.S_ISREG(st.st_mode):
                return st.st_size
            if stat.S_ISLNK(st.st_mode):
                raise _crosses_link(key, name)
            if stat.S_ISDIR(st.st_mode):
                # A folder made by a deeper key is not a key (as in the Rust FolderBucket
                # and every object store).
                return None
            raise _not_plain_file(key)
        finally:
            self._close(fds)

    def delete(self, key: str) -> None:
        parts = _components(key)
        dirs, name = parts[:-1], parts[-1]
        try:
            fds = self._walk(dirs, False)
        except _Missing:
            return
        except _Link as e:
            raise _crosses_link(key, e.component) from None
        except _Unreadable as e:
            raise Failed(Messages.backend("delete", key, e.error)) from None
        except OSError as e:
            raise Failed(Messages.backend("delete", key, e)) from None
        try:
            # unlink removes a link itself, never its target; a folder is refused.
            try:
                os.unlink(name, dir_fd=fds[-1])
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                raise Denied(Messages.folder_not_blob(key)) from None
            except OSError as e:
                raise Failed(Messages.backend("delete", key, e)) from None
            # Folders left empty go too, deepest first, so a deleted release leaves no
            # trace; a folder that is not empty (or already gone) ends the climb.
            for i in range(len(dirs) - 1, -1, -1):
                try:
                    os.rmdir(dirs[i], dir_fd=fds[i])
                except OSError:
                    break
        finally:
            self._close(fds)

    def list(self, prefix: str) -> List[ObjectMeta]:
        # Walk to the deepest folder the prefix names whole; filter by the string prefix.
        # What the walk will not enter inside the prefix (a link, a non-folder where a
        # folder must be, a folder this user cannot read) fails the whole listing: an
        # answer without what lies beyond it would read as "not there" to GC and
        # delete_release, which would then delete what it still refers to.
        i = prefix.rfind("/")
        dir_part = prefix[:i] if i >= 0 else ""
        dirs = _components(dir_part) if dir_part else []
        try:
            fds = self._walk(dirs, False)
        except _Missing:
            return []
        except _Link as e:
            why = Messages.UNWALKABLE_LINK if e.is_link else Messages.UNWALKABLE_NOT_FOLDER
            raise _unwalkable(prefix, "/".join(dirs[:e.at + 1]), why) from None
        except _Unreadable as e:
            raise _unwalkable(prefix, "/".join(dirs[:e.at + 1]), Messages.UNWALKABLE_UNREADABLE) from None
        except OSError as e:
            raise Failed(Messages.backend("list", prefix, e)) from None
        start = fds.pop()
        self._close(fds)
        listed: List[ObjectMeta] = []
        # An explicit stack: depth is bounded by the file system, not by Python's stack.
        pending = [(start, dir_part, start != self._root)]
        try:
            while pending:
                fd, folder, owned = pending.pop()
                try:
                    self._list_folder(fd, folder, prefix, listed, pending)
                finally:
                    if owned:
                        os.close(fd)
        finally:
            for fd, _, owned in pending:
                if owned:
                    os.close(fd)
        listed.sort(key=lambda o: o.key)
        return listed

    def _list_folder(self, fd: int, folder: str, prefix: str, listed: List[ObjectMeta],
                     pending: List[Tuple[int, str, bool]]) -> None:
        """Lists the folder ``fd`` (the key-path ``folder``, ``""`` for the root) into
        ``listed``, its subfolders onto ``pending``."""
        base = f"{folder}/" if folder else ""
        try:
            with os.scandir(fd) as it:
                names = [entry.name for entry in it]
        except OSError as e:
            if e.errno in _UNREADABLE:
                raise _unwalkable(prefix, folder, Messages.UNWALKABLE_UNREADABLE) from None
            raise Failed(Messages.backend("list", prefix, e)) from None
        for name in names:
            if _not_utf8(name) or _CC.search(name):
                self._report(Messages.entry(os.fsencode(f"{base}{name}")), Messages.ODD_NAME)
                continue
            key = f"{base}{name}"
            if not key.startswith(prefix) and not prefix.startswith(f"{key}/"):
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # deleted since the folder was read
            except OSError as e:
                # A folder that can be read but not searched.
                if e.errno in _UNREADABLE:
                    raise _unwalkable(prefix, folder, Messages.UNWALKABLE_UNREADABLE) from None
                raise Failed(Messages.backend("list", key, e)) from None
            if stat.S_ISREG(st.st_mode):
                if key.startswith(prefix):
                    listed.append(ObjectMeta(key, st.st_size, SyncTime(*divmod(st.st_mtime_ns, 1_000_000_000))))
            elif stat.S_ISDIR(st.st_mode):
                try:
                    pending.append((os.open(name, _DIR_FLAGS, dir_fd=fd), key, True))
                except FileNotFoundError:
                    pass
                except OSError as e:
                    # Swapped for a link or a file since the stat: never followed.
                    if e.errno in (errno.ELOOP, errno.ENOTDIR):
                        is_link = e.errno == errno.ELOOP or _is_link(name, fd)
                        why = Messages.UNWALKABLE_LINK if is_link else Messages.UNWALKABLE_NOT_FOLDER
                        raise _unwalkable(prefix, key, why) from None
                    if e.errno in _UNREADABLE:
                        raise _unwalkable(prefix, key, Messages.UNWALKABLE_UNREADABLE) from None
                    raise Failed(Messages.backend("list", key, e)) from None
            elif stat.S_ISLNK(st.st_mode):
                # Whatever it points to: a link named like an entry may be that entry, moved.
                raise _unwalkable(prefix, key, Messages.UNWALKABLE_LINK)
            else:
                self._report(Messages.entry(key), Messages.NOT_PLAIN_FILE)

    def _report(self, entry: str, why: str) -> None:
        """Reports, once per bucket, an entry (:meth:`Messages.entry`: quoted, so a name
        cannot forge a line) a listing left out."""
        if entry in self._reported:
            return
        self._reported.add(entry)
        self.warn(f"render-store FolderBucket {self.root}: {Messages.left_out(entry, why)}")


# --------------------------------------------------------------------------------------
# Bucket calls: the scope, the answers, the log

# An answer to a bucket call: ("ok", value) or ("error", kind, message-or-None).
Answer = Tuple[Any, ...]


def _wit_recorded_call(call: str, key: Any, value: Optional[Union[str, bytes]],
                       answer: Answer) -> wc.Variant:
    """A call and the answer the component got, as the WIT ``trace.recorded-call``
    (``key`` is the list of keys of a ``delete-many``)."""
    name = {"list": "prefix", "delete-many": "keys"}.get(call, "key")
    fields: Dict[str, Any] = {name: key, "answer": _to_wit_answer(call, answer)}
    if call == "put":
        # As the component gave it: a trace records the bytes, not the form.
        fields["value"] = value if value is not None else ""
    return wc.Variant(call, _rec(**fields))


class _Scope:
    """The bucket of one call, confined to the release's prefix (the Rust host's
    ``Scope``), optionally logging every call and answer for a trace (as WIT
    ``trace.recorded-call`` values)."""

    def __init__(self, bucket: Any, prefix: str, log: Optional[List[Any]] = None):
        self.bucket = bucket
        self.prefix = prefix
        self.log = log

    def check(self, key: str) -> Optional[Answer]:
        if key.startswith(self.prefix):
            return None
        return ("error", "denied", Messages.outside_prefix(key, self.prefix))

    def answer(self, call: str, key: str, value: Optional[Union[str, bytes]] = None) -> Answer:
        answer = self.check(key)
        if answer is None:
            try:
                answer = self._ask(call, key, value)
            except Exception as e:  # whatever reading a bucket's own objects raises
                answer = _unreadable(call, key, e)
        if self.log is not None:
            self.log.append(_wit_recorded_call(call, key, value, answer))
        return answer

    def answer_many(self, keys: List[str]) -> Answer:
        """``delete-many``: each key outside the scope is denied alone, as its
        ``delete`` would be; the others are asked for in one call."""
        checks = [self.check(k) for k in keys]
        inside = [k for k, c in zip(keys, checks) if c is None]
        answer: Answer = ("ok", [])
        if inside:
            try:
                answer = self._ask_many(inside)
            except Exception as e:  # whatever reading a bucket's own objects raises
                answer = _unreadable("delete-many", inside[0], e)
        if answer[0] == "ok":
            each = iter(answer[1])
            answer = ("ok", [c if c is not None else next(each) for c in checks])
        if self.log is not None:
            self.log.append(_wit_recorded_call("delete-many", list(keys), None, answer))
        return answer

    def _ask_many(self, keys: List[str]) -> Answer:
        """The bucket's ``delete_many`` in one call where it has one, else a ``delete``
        a key."""
        batch = getattr(self.bucket, "delete_many", None)
        if not callable(batch):
            return ("ok", [self._ask("delete", k, None) for k in keys])
        try:
            got = batch(list(keys))
        except NotFound:
            return ("error", "failed", Messages.backend("delete-many", keys[0], "not found"))
        except Denied as e:
            return ("error", "denied", _message(e))
        except Failed as e:
            return ("error", "failed", _message(e))
        except Exception as e:  # a bucket's own failure: worded as a backend's
            return ("error", "failed", Messages.backend("delete-many", keys[0], _text(e)))
        if isinstance(got, (list, tuple)):
            # Copied once: a subclass could answer differently on a second read.
            got = list(got)
        if not isinstance(got, list) or len(got) != len(keys):
            shown = f"{len(got)} entries" if isinstance(got, list) else type(got).__name__
            return ("error", "failed", Messages.backend(
                "delete-many", keys[0],
                f"the bucket's delete_many answered {shown} for {len(keys)} keys; it must "
                "answer one entry per key: None when deleted, a BucketError when not"))
        answers: List[Answer] = []
        for key, g in zip(keys, got):
            # A key's absence is no error for a delete (CONTRACT.md §2).
            if g is None or isinstance(g, NotFound):
                answers.append(("ok", None))
            elif isinstance(g, Denied):
                answers.append(("error", "denied", _message(g)))
            elif isinstance(g, Failed):
                answers.append(("error", "failed", _message(g)))
            else:
                answers.append(("error", "failed", Messages.backend("delete", key, _text(g))))
        return ("ok", answers)

    def _ask(self, call: str, key: str, value: Optional[Union[str, bytes]]) -> Answer:
        try:
            if call == "get":
                got = self.bucket.get(key)
                if not isinstance(got, (bytes, bytearray, memoryview)):
                    raise TypeError(f"the bucket's get answered {type(got).__name__}, not bytes")
                return ("ok", bytes(got))
            if call == "put":
                # put's value is a WIT ``data``; buckets keep bytes.
                self.bucket.put(key, _data_bytes(value if value is not None else ""))
                return ("ok", None)
            if call == "exists":
                size = self.bucket.exists(key)
                if size is None:
                    # WIT exists answers an absent key with not-found (see _to_wit_answer).
                    return ("error", "not-found", None)
                if not _is_u64(size):
                    raise TypeError(f"the bucket's exists answered {size!r}, not a size or None")
                return ("ok", size)
            if call == "list":
                listed = [_object_meta(o) for o in self.bucket.list(key)]
                return ("ok", listed)
            if call == "delete":
                self.bucket.delete(key)
                return ("ok", None)
            raise AssertionError(call)
        except NotFound:
            return ("error", "not-found", None)
        except Denied as e:
            return ("error", "denied", _message(e))
        except Failed as e:
            return ("error", "failed", _message(e))
        except Exception as e:  # a bucket's own failure: worded as a backend's
            return ("error", "failed", Messages.backend(call, key, _text(e)))


def _text(x: Any) -> str:
    """``str(x)``, or what ``x`` is when even that raises: a bucket's own object may."""
    try:
        return str(x)
    except Exception:
        try:
            return f"an object of type {type(x).__name__}, whose text cannot be read"
        except Exception:
            return "an object whose text cannot be read"


def _message(e: BucketError) -> str:
    """The message of a :class:`Denied` or :class:`Failed` a bucket raised, which must be
    a ``str`` to reach the component (a TypeError otherwise)."""
    message = e.message
    if not isinstance(message, str):
        raise TypeError(f"{type(e).__name__} with a message of type {type(message).__name__}, not str")
    return message


def _unreadable(call: str, key: str, e: Exception) -> Answer:
    """The answer of a bucket whose ``call`` of ``key`` gave something that could not be
    read (a property or ``__len__`` that raises): a failure of the call, in the words of a
    backend's own failure, never an exception through the component."""
    return ("error", "failed", Messages.backend(call, key, f"the bucket's answer could not be read: {_text(e)}"))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_u64(v: Any) -> bool:
    return _is_int(v) and 0 <= v < (1 << 64)


def _instant(t: Any) -> Optional[SyncTime]:
    """A time with ``seconds`` (s64) and ``nanoseconds`` (< 10^9), or ``None``."""
    seconds, nanoseconds = getattr(t, "seconds", None), getattr(t, "nanoseconds", None)
    if not _is_int(seconds) or not -(1 << 63) <= seconds < (1 << 63):
        return None
    if not _is_int(nanoseconds) or not 0 <= nanoseconds < 1_000_000_000:
        return None
    return SyncTime(seconds, nanoseconds)


def _object_meta(o: Any) -> ObjectMeta:
    """A listing entry a bucket answered, checked."""
    key, size = getattr(o, "key", None), getattr(o, "size", None)
    modified = _instant(getattr(o, "modified", None))
    if not isinstance(key, str) or not _is_u64(size) or modified is None:
        raise TypeError(f"the bucket's list answered {o!r}, not an ObjectMeta(key, size, modified) "
                        "with a size from 0 to 2^64 - 1 and nanoseconds below 10^9")
    return ObjectMeta(key, size, modified)


_NO_BUCKET: Answer = ("error", "denied", Messages.NO_BUCKET)


def _to_wit_answer(call: str, answer: Answer) -> Any:
    """An answer as wasmtime-py lowers a WIT ``result``: the ``ok`` value itself, or a
    ``bucket-error`` Variant. No ``ok`` type of the bucket (``data``, nothing, ``u64``,
    a list) can hold a Variant, so the value alone says the case."""
    if answer[0] == "ok":
        value = answer[1]
        if call == "list":
            value = [_rec(key=o.key, size=o.size, modified=_wit_time(o.modified)) for o in value]
        elif call == "get":
            value = _data(value)
        elif call == "delete-many":
            # Each key's result<_, bucket-error>: None or a Variant, told apart by value.
            value = [_to_wit_answer("delete", a) for a in value]
        return value
    kind, message = answer[1], answer[2]
    return wc.Variant(kind) if kind == "not-found" else wc.Variant(kind, message)


# --------------------------------------------------------------------------------------
# WIT values


def _rec(**fields: Any) -> wc.Record:
    r = wc.Record()
    for name, value in fields.items():
        setattr(r, name.replace("_", "-"), value)
    return r


def _get(rec: Any, name: str) -> Any:
    return getattr(rec, name.replace("_", "-"))


def _wit_release(r: ReleaseLike) -> wc.Record:
    r = _release(r)
    return _rec(namespace=r.namespace, name=r.name)


def _wit_time(t: SyncTime) -> wc.Record:
    return _rec(seconds=int(t.seconds), nanoseconds=int(t.nanoseconds))


def _py_time(r: Any) -> SyncTime:
    return SyncTime(r.seconds, r.nanoseconds)


def _py_entry(e: Any) -> HistoryEntry:
    return HistoryEntry(e.key, _get(e, "render_ref"), _py_time(_get(e, "synced_at")), e.summary)


def _py_plan(r: Any) -> GcPlan:
    return GcPlan(
        delete_history=list(_get(r, "delete_history")),
        keep_history=list(_get(r, "keep_history")),
        delete_renders=list(_get(r, "delete_renders")),
        keep_renders=list(_get(r, "keep_renders")),
        ignored=list(r.ignored),
        recent_renders=list(_get(r, "recent_renders")),
    )


def _py_object_id(r: Any) -> ObjectId:
    return ObjectId(_get(r, "api_version"), r.kind, r.namespace, r.name)


def _error_from_wit(v: Any) -> RenderStoreError:
    if isinstance(v, wc.Variant):
        if v.tag == "invalid-object":
            return RenderStoreError("invalid-object", v.payload.message, int(v.payload.index))
        if v.tag == "invalid-yaml":
            p = v.payload
            # An enum is lifted as its case name (a Variant without payload on versions
            # that give one).
            stage = p.stage.tag if isinstance(p.stage, wc.Variant) else str(p.stage)
            return RenderStoreError("invalid-yaml", p.message, stage=stage, document=int(p.document),
                                    line=int(p.line), column=int(p.column))
        return RenderStoreError(v.tag, v.payload)
    return RenderStoreError("trap", f"unexpected error value {v!r}")


# --------------------------------------------------------------------------------------
# The runtime


def _packaged_component() -> bytes:
    """The component this package was built with (``render_store.wasm`` beside this
    module, put there by the wheel build)."""
    try:
        return (importlib.resources.files(__name__) / "render_store.wasm").read_bytes()
    except FileNotFoundError:
        raise RuntimeError(
            "this render_store has no component inside: install the built wheel "
            "(`pip install host/python`), or pass a path to Runtime() or set "
            "RENDER_STORE_WASM (`render-store component --out FILE.wasm` writes one)") from None


class Runtime:
    """The compiled component; every call runs in an instance as good as new, in its own
    store, with the Rust host's memory cap and fuel budget, and a bucket scope or none.

    A new instance costs more than a small render's whole work, so, as wasmtime's pool
    does for the Rust host and the npm package does in JavaScript, an instance whose
    call returned normally (a value or a WIT error) has its memory written back to the
    image it had right after instantiation and zeroed above it, and serves the next
    call; one whose call trapped or raised through the guest, or whose memory grew past
    16 MiB, is dropped. :meth:`idle_instance_memories` shows what the idle ones hold.

    The component's main core module runs under wasmtime's C API (the library the
    wasmtime wheel ships, ``render_store._capi``), with the canonical ABI done by this
    package (``render_store._abi``): values move straight between Python and the
    instance's memory, bytes with one copy. ``component`` is the component compiled by
    wasmtime-py's component API, which this runtime reads the WIT types from once."""

    def __init__(self, wasm: Union[str, os.PathLike, bytes, None] = None, *,
                 memory_bytes: int = DEFAULT_MEMORY_BYTES, fuel: int = DEFAULT_FUEL):
        if wasm is None:
            wasm = os.environ.get("RENDER_STORE_WASM") or _packaged_component()
        if not isinstance(wasm, (bytes, bytearray)):
            with open(os.fspath(wasm), "rb") as f:
                wasm = f.read()
        binary = bytes(wasm)
        # wasmtime-py's engine only compiles the component to read its types (its code
        # never runs, so it is not optimized); the calls run in self._core's engine.
        config = wasmtime.Config()
        config.cranelift_opt_level = "none"
        self.engine = wasmtime.Engine(config)
        self.component = wc.Component(self.engine, binary)
        self.memory_bytes = memory_bytes
        self.fuel = fuel
        self._lock = threading.RLock()
        self._scope: Optional[_Scope] = None
        bucket = {
            "get": lambda key: self._serve("get", key),
            "put": lambda key, value: self._serve("put", key, value),
            "exists": lambda key: self._serve("exists", key),
            "list": lambda prefix: self._serve("list", prefix),
            "delete": lambda key: self._serve("delete", key),
            "delete-many": self._serve_many,
        }
        try:
            self._core = _abi.CoreComponent(self.engine, binary, self.component, {BUCKET_INTERFACE: bucket},
                                            memory_bytes=memory_bytes, fuel=fuel)
        except _abi.AbiError as e:
            raise RuntimeError(f"this host cannot run the component: {e}") from None

    def idle_instance_memories(self) -> List[bytes]:
        """A copy of the memory of each idle instance, for audits: each is the image
        right after instantiation, so nothing of an earlier call (a Secret) is in it."""
        with self._lock:
            return self._core.idle_memories()

    def _serve(self, call: str, key: str, value: Optional[Union[str, bytes]] = None) -> Any:
        scope = self._scope
        answer = _NO_BUCKET if scope is None else scope.answer(call, key, value)
        return _to_wit_answer(call, answer)

    def _serve_many(self, keys: List[str]) -> Any:
        scope = self._scope
        if scope is None:
            answer: Answer = ("ok", [_NO_BUCKET for _ in keys])
        else:
            answer = scope.answer_many(list(keys))
        return _to_wit_answer("delete-many", answer)

    def call(self, interface: str, name: str, *args: Any, scope: Optional[_Scope] = None) -> Any:
        """Calls export ``name`` of ``interface`` (``logic``, ``store`` or ``trace``) in
        a fresh instance and returns its WIT value in wasmtime-py's conventions. A trap,
        or a component that breaks the canonical ABI, raises :class:`RenderStoreError`
        of kind ``trap``."""
        with self._lock:
            previous, self._scope = self._scope, scope  # a bucket may call the runtime again
            try:
                return self._core.call(f"{PACKAGE}/{interface}@{VERSION}", name, args)
            except (_capi.WasmtimeError, _capi.Trap, _abi.AbiError) as e:
                raise RenderStoreError("trap", _trap_message(e)) from e
            finally:
                self._scope = previous

    def _result(self, interface: str, name: str, *args: Any, scope: Optional[_Scope] = None) -> Any:
        """An export returning ``result<T, error>``: T, or the error raised."""
        value = self.call(interface, name, *args, scope=scope)
        if isinstance(value, wc.Variant) and value.tag in RenderStoreError.KINDS:
            raise _error_from_wit(value)
        return value

    # -- logic ------------------------------------------------------------------------

    def canonical(self, objects: Iterable[BytesLike]) -> bytes:
        return _data_bytes(self._result("logic", "canonical", _object_list(objects)))

    def render_ref(self, objects: Iterable[BytesLike]) -> str:
        return self._result("logic", "render-ref", _object_list(objects))

    def yaml_objects(self, yaml: BytesLike) -> List[bytes]:
        """The objects of a multi-document Kubernetes YAML stream (bytes or str), as a Go
        controller reads it (CONTRACT.md §11), each one object's compact JSON. A stream
        that is not a render raises ``invalid-yaml`` naming the first failing document."""
        return [_utf8(o) for o in self._result("logic", "yaml-objects", _data(yaml))]

    def yaml_canonical(self, yaml: BytesLike) -> bytes:
        """``canonical(yaml_objects(yaml))`` in one call."""
        return _data_bytes(self._result("logic", "yaml-canonical", _data(yaml)))

    def yaml_render_ref(self, yaml: BytesLike) -> str:
        """``render_ref(yaml_objects(yaml))`` in one call."""
        return self._result("logic", "yaml-render-ref", _data(yaml))

    def validate_render_ref(self, render_ref: str) -> None:
        self._result("logic", "validate-render-ref", render_ref)

    def sha256_hex(self, data: BytesLike) -> str:
        return self.call("logic", "sha256-hex", _data(data))

    def release_prefix(self, release: ReleaseLike) -> str:
        return self._result("logic", "release-prefix", _wit_release(release))

    def render_key(self, release: ReleaseLike, render_ref: str) -> str:
        return self._result("logic", "render-key", _wit_release(release), render_ref)

    def history_key(self, release: ReleaseLike, synced_at: TimeLike, render_ref: str) -> str:
        t = self._time(synced_at)
        return self._result("logic", "history-key", _wit_release(release), _wit_time(t), render_ref)

    def parse_key(self, release: ReleaseLike, key: str) -> Optional[Tuple[str, Any]]:
        """``None``, ``("render", renderRef)`` or ``("history", HistoryKey)``."""
        v = self.call("logic", "parse-key", _wit_release(release), key)
        if v is None:
            return None
        # parsed-key's cases hold a string and a record: wasmtime-py gives the payload
        # alone (an untagged variant), or a Variant on versions that tag every variant.
        if isinstance(v, wc.Variant):
            v = v.payload
        if isinstance(v, str):
            return ("render", v)
        return ("history", HistoryKey(_py_time(_get(v, "synced_at")), _get(v, "render_ref")))

    def format_key_time(self, t: SyncTime) -> str:
        return self._result("logic", "format-key-time", _wit_time(t))

    def parse_key_time(self, text: str) -> SyncTime:
        return _py_time(self._result("logic", "parse-key-time", text))

    def format_synced_at(self, t: SyncTime) -> str:
        return self._result("logic", "format-synced-at", _wit_time(t))

    def parse_synced_at(self, text: str) -> SyncTime:
        return _py_time(self._result("logic", "parse-synced-at", text))

    def plan_gc(self, release: ReleaseLike, keep: int, history_keys: Sequence[str],
                render_keys: Sequence[str], protected: Sequence[str] = ()) -> GcPlan:
        return _py_plan(self._result("logic", "plan-gc", _wit_release(release), int(keep),
                                     list(history_keys), list(render_keys), list(protected)))

    def diff_renders(self, old: BytesLike, new: BytesLike, form: str = "yaml", *,
                     show_secrets: bool = False, context: int = DEFAULT_CONTEXT) -> RenderDiff:
        """Changed objects' lines in ``form``: ``"yaml"`` (as ``kubectl get -o yaml``
        shows objects) or ``"json"``, with ``context`` lines around each change (a
        number as long as the objects shows them whole, each hunk still headed by its
        path). Every value of a v1 Secret's ``data`` and ``stringData`` (and inside its
        last-applied-configuration annotation) is shown as ``***``, or ``*** (before)``
        and ``*** (after)`` where it changed, unless ``show_secrets`` is true."""
        return _py_diff(self._result("logic", "diff-renders", _data(old), _data(new), _form(form),
                                     _secret_values(show_secrets), _context(context)))

    def show_objects(self, canonical: BytesLike, form: str = "yaml", *,
                     show_secrets: bool = False) -> List[ShownObject]:
        """Every object of a canonical render, in order, with its text in ``form``
        (``"yaml"`` or ``"json"``), as ``diff_renders`` writes a changed object: Secret
        values as ``***`` unless ``show_secrets`` is true."""
        shown = self._result("logic", "show-objects", _data(canonical), _form(form),
                             _secret_values(show_secrets))
        return [ShownObject(_py_object_id(o.id), o.text) for o in shown]

    def summarize_history(self, release: ReleaseLike,
                          history_keys: Sequence[str]) -> HistorySummary:
        """The entry count and newest entry from the keys listed under
        ``<prefix>history/``; keys that are not the release's entries are not counted."""
        s = self._result("logic", "summarize-history", _wit_release(release),
                         list(history_keys))
        newest = s.newest
        return HistorySummary(
            entries=int(s.entries),
            newest=None if newest is None else HistoryKey(
                _py_time(_get(newest, "synced_at")), _get(newest, "render_ref")),
        )

    def _time(self, t: TimeLike) -> SyncTime:
        return self.parse_synced_at(t) if isinstance(t, str) else t


def _form(form: str) -> str:
    if form not in ("yaml", "json"):
        raise RenderStoreError("invalid-input", f"form {form!r}: expected 'yaml' or 'json'")
    return form


def _context(context: int) -> int:
    """``context`` as the WIT's ``u32``."""
    if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 0xFFFFFFFF:
        raise TypeError(f"context: expected a whole number from 0 to 4294967295, not {context!r}")
    return context


def _secret_values(show_secrets: bool) -> str:
    """``show_secrets`` as the WIT ``secret-values``. Only ``True`` shows values: a
    truthy ``"no"`` is a TypeError, never a reason to show a Secret."""
    if not isinstance(show_secrets, bool):
        raise TypeError(f"show_secrets: expected True or False, not {type(show_secrets).__name__}")
    return "shown" if show_secrets else "masked"


def _py_diff(d: Any) -> RenderDiff:
    return RenderDiff(
            added=[_py_object_id(i) for i in d.added],
            removed=[_py_object_id(i) for i in d.removed],
            changed=[ChangedObject(_py_object_id(c.id), list(c.lines)) for c in d.changed],
            unchanged=int(d.unchanged),
        )


def _trap_message(e: Exception) -> str:
    return str(e)


_DEFAULT: Dict[str, Optional[Runtime]] = {"runtime": None}


def default_runtime() -> Runtime:
    """The runtime of the module-level functions: the component named by
    ``RENDER_STORE_WASM``, compiled on first use."""
    if _DEFAULT["runtime"] is None:
        _DEFAULT["runtime"] = Runtime()
    return _DEFAULT["runtime"]  # type: ignore[return-value]


def set_default_runtime(runtime: Optional[Runtime]) -> None:
    _DEFAULT["runtime"] = runtime


# --------------------------------------------------------------------------------------
# The store operations


class RenderStore:
    """The store operations over a bucket. Each runs in a fresh instance whose bucket
    is scoped to ``<namespace>/<name>/`` of the release (built from the names as given;
    the component checks them before any bucket call)."""

    def __init__(self, bucket: Any, runtime: Optional[Runtime] = None):
        self.bucket = bucket
        self.runtime = runtime or default_runtime()

    def _scope(self, release: Release, log: Optional[List[Any]] = None) -> _Scope:
        return _Scope(self.bucket, f"{release.namespace}/{release.name}/", log)

    def _op(self, name: str, release: ReleaseLike, *args: Any) -> Any:
        r = _release(release)
        traces = _RECORDING.traces
        if traces is None:
            return self.runtime._result("store", name, _wit_release(r), *args, scope=self._scope(r))
        calls: List[Any] = []
        failure: Optional[RenderStoreError] = None
        try:
            raw = self.runtime._result("store", name, _wit_release(r), *args, scope=self._scope(r, calls))
            outcome = wc.Variant(name, raw)
        except RenderStoreError as e:
            failure, outcome = e, _wit_failure(name, e)
        operation = _wit_operation(name, _wit_release(r), args)
        traces.append(self.runtime.call("trace", "write-trace", operation, calls, outcome))
        if failure is not None:
            raise failure
        return raw

    def put_render(self, release: ReleaseLike, objects: Iterable[BytesLike]) -> str:
        """Stores the render's canonical bytes unless that blob exists with their size (a
        torn or truncated blob is written again); its renderRef."""
        return self._op("put-render", release, _object_list(objects))

    def get_render(self, release: ReleaseLike, render_ref: str) -> bytes:
        """The canonical bytes stored for ``render_ref``, verified against it."""
        return _data_bytes(self._op("get-render", release, render_ref))

    def list_history_page(self, release: ReleaseLike, limit: int,
                          before: Optional[str] = None) -> HistoryPage:
        """At most ``limit`` entries, newest first, older than the entry key ``before``
        when given (the previous page's ``next_before``). Reads only the page's entries.
        Not a traced operation."""
        if not _is_int(limit) or not 1 <= limit < (1 << 32):
            raise TypeError("limit: expected an integer from 1 to 2^32 - 1")
        r = _release(release)
        page = self.runtime._result("store", "list-history-page", _wit_release(r), limit, before,
                                    scope=self._scope(r))
        return HistoryPage([_py_entry(e) for e in page.entries], _get(page, "next_before"))

    def diff_renders(self, release: ReleaseLike, old_ref: str, new_ref: str, form: str = "yaml", *,
                     show_secrets: bool = False, context: int = DEFAULT_CONTEXT) -> RenderDiff:
        """The difference between two stored renders, each read and verified in the
        component (``get`` of ``old_ref``, then of ``new_ref``): the renders cross the
        boundary once, from the bucket. Both must fit in the call's memory together
        with the diff (see "Limits" in README.md). Secret values are masked as
        ``Runtime.diff_renders`` masks them unless ``show_secrets`` is true. Not a
        traced operation."""
        r = _release(release)
        return _py_diff(self.runtime._result("store", "diff-renders", _wit_release(r), old_ref, new_ref,
                                             _form(form), _secret_values(show_secrets), _context(context),
                                             scope=self._scope(r)))

    def has_history_ref(self, release: ReleaseLike, render_ref: str) -> bool:
        return self._op("has-history-ref", release, render_ref)

    def record_history(self, release: ReleaseLike, entry: Union[NewEntry, None] = None, *,
                       render_ref: Optional[str] = None, synced_at: Optional[TimeLike] = None,
                       summary: str = "") -> bool:
        """Appends a history entry unless one records the same render; whether it was
        added. Give ``entry``, or ``render_ref`` and ``synced_at`` (a :class:`SyncTime`
        or RFC 3339 text, parsed by the component) and ``summary``."""
        if entry is None:
            if render_ref is None or synced_at is None:
                raise TypeError("record_history needs an entry, or render_ref and synced_at")
            entry = NewEntry(render_ref, self.runtime._time(synced_at), summary)
        wit_entry = _rec(render_ref=entry.render_ref, synced_at=_wit_time(entry.synced_at), summary=entry.summary)
        return self._op("record-history", release, wit_entry)

    def list_history(self, release: ReleaseLike) -> List[HistoryEntry]:
        return [_py_entry(e) for e in self._op("list-history", release)]

    def gc(self, release: ReleaseLike, keep: int, protected: Sequence[str] = (),
           dry_run: bool = False, *, now: Optional[SyncTime] = None,
           grace_seconds: int = GC_GRACE_SECONDS) -> GcPlan:
        """Garbage collection keeping the newest ``keep`` entries and the renders they
        and ``protected`` name. A render blob modified less than ``grace_seconds``
        (default 600; 0: none) before ``now`` (default: this machine's clock) is not
        deleted: the plan lists it in ``recent_renders``."""
        at = _instant(now if now is not None else _now())
        if at is None:
            raise TypeError("now: expected a SyncTime with nanoseconds below 10^9")
        if not _is_u64(grace_seconds):
            raise TypeError("grace_seconds: expected an integer from 0 to 2^64 - 1")
        return _py_plan(self._op("gc", release, int(keep), list(protected), bool(dry_run),
                                 _wit_time(at), grace_seconds))

    def delete_release(self, release: ReleaseLike) -> int:
        return int(self._op("delete-release", release))


# Module-level functions over the default runtime.

def canonical(objects: Iterable[BytesLike]) -> bytes:
    """The canonical bytes of a render (each object one JSON object's bytes)."""
    return default_runtime().canonical(objects)


def render_ref(objects: Iterable[BytesLike]) -> str:
    """``sha256:<hex>`` of the canonical bytes."""
    return default_runtime().render_ref(objects)


def yaml_objects(yaml: BytesLike) -> List[bytes]:
    """The objects of a Kubernetes YAML stream, as a Go controller reads it."""
    return default_runtime().yaml_objects(yaml)


def yaml_canonical(yaml: BytesLike) -> bytes:
    """The canonical bytes of a YAML stream's render."""
    return default_runtime().yaml_canonical(yaml)


def yaml_render_ref(yaml: BytesLike) -> str:
    """The renderRef of a YAML stream's render."""
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


def format_key_time(t: SyncTime) -> str:
    return default_runtime().format_key_time(t)


def parse_key_time(text: str) -> SyncTime:
    return default_runtime().parse_key_time(text)


def format_synced_at(t: SyncTime) -> str:
    return default_runtime().format_synced_at(t)


def parse_synced_at(text: str) -> SyncTime:
    return default_runtime().parse_synced_at(text)


def plan_gc(release: ReleaseLike, keep: int, history_keys: Sequence[str],
            render_keys: Sequence[str], protected: Sequence[str] = ()) -> GcPlan:
    """The GC decision from listings alone (no bucket call)."""
    return default_runtime().plan_gc(release, keep, history_keys, render_keys, protected)


def diff_renders(old: BytesLike, new: BytesLike, form: str = "yaml", *,
                 show_secrets: bool = False, context: int = DEFAULT_CONTEXT) -> RenderDiff:
    """The difference between two canonical renders, Secret values masked unless
    ``show_secrets`` is true (``Runtime.diff_renders``)."""
    return default_runtime().diff_renders(old, new, form, show_secrets=show_secrets, context=context)


def show_objects(canonical: BytesLike, form: str = "yaml", *,
                 show_secrets: bool = False) -> List[ShownObject]:
    """Every object of a canonical render, Secret values masked unless ``show_secrets``
    is true (``Runtime.show_objects``)."""
    return default_runtime().show_objects(canonical, form, show_secrets=show_secrets)


def summarize_history(release: ReleaseLike, history_keys: Sequence[str]) -> HistorySummary:
    return default_runtime().summarize_history(release, history_keys)


def put_render(bucket: Any, release: ReleaseLike, objects: Iterable[BytesLike]) -> str:
    return RenderStore(bucket).put_render(release, objects)


def get_render(bucket: Any, release: ReleaseLike, ref: str) -> bytes:
    return RenderStore(bucket).get_render(release, ref)


def has_history_ref(bucket: Any, release: ReleaseLike, ref: str) -> bool:
    return RenderStore(bucket).has_history_ref(release, ref)


def record_history(bucket: Any, release: ReleaseLike, entry: Optional[NewEntry] = None, **kw: Any) -> bool:
    return RenderStore(bucket).record_history(release, entry, **kw)


def list_history(bucket: Any, release: ReleaseLike) -> List[HistoryEntry]:
    return RenderStore(bucket).list_history(release)


def gc(bucket: Any, release: ReleaseLike, keep: int, protected: Sequence[str] = (), dry_run: bool = False,
       *, now: Optional[SyncTime] = None, grace_seconds: int = GC_GRACE_SECONDS) -> GcPlan:
    return RenderStore(bucket).gc(release, keep, protected, dry_run, now=now, grace_seconds=grace_seconds)


def delete_release(bucket: Any, release: ReleaseLike) -> int:
    return RenderStore(bucket).delete_release(release)


# --------------------------------------------------------------------------------------
# Traces (TRACES.md). Only a host sees the bucket calls, so this host records them; the
# component writes the trace, reads it back, replays it and words the report.


class _Recording(threading.local):
    traces: Optional[List[str]] = None


_RECORDING = _Recording()


def _wit_operation(name: str, release: wc.Record, args: Tuple[Any, ...]) -> wc.Variant:
    """The WIT ``trace.operation`` of a store call, from the export's arguments."""
    if name == "put-render":
        return wc.Variant(name, _rec(release=release, objects=args[0]))
    if name in ("get-render", "has-history-ref"):
        return wc.Variant(name, _rec(release=release, render_ref=args[0]))
    if name == "record-history":
        return wc.Variant(name, _rec(release=release, entry=args[0]))
    if name == "gc":
        keep, protected, dry_run, now, grace_seconds = args
        return wc.Variant(name, _rec(release=release, keep=keep, protected=protected, dry_run=dry_run,
                                     now=now, grace_seconds=grace_seconds))
    return wc.Variant(name, release)


def _wit_failure(name: str, e: RenderStoreError) -> wc.Variant:
    """The WIT ``trace.outcome`` of a store call that raised ``e``."""
    if e.kind == "trap":
        return wc.Variant("trap", e.message)
    if e.kind == "invalid-object":
        error = wc.Variant(e.kind, _rec(index=e.index, message=e.message))
    elif e.kind == "invalid-yaml":  # no store operation reads YAML; mapped all the same
        error = wc.Variant(e.kind, _rec(stage=e.stage, document=e.document, line=e.line, column=e.column,
                                        message=e.message))
    else:
        error = wc.Variant(e.kind, e.message)
    return wc.Variant(name, error)


class Recorded(NamedTuple):
    """A recorded store call: its trace (the text the component wrote), what it
    returned, or the :class:`RenderStoreError` it raised (a failure is traced too)."""

    trace: str
    value: Any
    error: Optional[RenderStoreError]


def record(fn: Callable[[], Any]) -> Recorded:
    """Runs ``fn``, which makes one store call (``store.gc(...)``, ``put_render(...)``,
    ...), and records it (TRACES.md)."""
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
        raise RuntimeError(f"record: {len(traces)} store calls were made; a trace records exactly one")
    return Recorded(traces[0], value, error)


class Replay(NamedTuple):
    """What a replay found (the component's report): ``matches`` (every call and the
    result), the first differing call (``{"position": n, "recorded": call-or-None,
    "replayed": call-or-None}``, n from 1; ``None`` when the calls agree), the replayed
    ``result`` (``{"ok": ...}`` or ``{"error": ...}``), the report for people (``text``,
    what ``render-store replay`` prints) and the whole JSON report (``report``, as
    ``render-store replay --json`` prints it)."""

    matches: bool
    first_difference: Optional[Dict[str, Any]]
    result: Dict[str, Any]
    text: str
    report: Dict[str, Any]


def replay(trace_text: str, runtime: Optional[Runtime] = None) -> Replay:
    """Replays a trace in the component (TRACES.md, Replay). Raises :class:`TraceError`
    for a malformed trace, :class:`RenderStoreError` of kind ``trap`` when the replay
    itself was stopped."""
    value = (runtime or default_runtime()).call("trace", "replay", str(trace_text))
    if isinstance(value, wc.Variant):  # result<replay-report, trace-error>, as lifted
        if value.tag == "err":
            raise TraceError(int(value.payload.line), value.payload.message)
        value = value.payload
    if hasattr(value, "line"):
        raise TraceError(int(value.line), value.message)
    report = json.loads(value.json)
    return Replay(bool(value.matches), report["firstDifference"], report["result"], value.text, report)
