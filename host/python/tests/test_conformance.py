"""The bucket contract (CONTRACT.md §2) as data: every case of
tests/conformance/bucket.json (format in tests/conformance/README.md), the cases the Rust
buckets run in tests/e2e/conformance.rs, on three buckets:

- ``MemoryBucket``: the Python bucket, called directly;
- ``MemoryBucket-via-library``: the same bucket under ``RenderStore(bucket)``, called
  through the library's direct bucket calls (``StoreBucket``), so every answer crosses
  the C callbacks and comes back as the library understood it;
- ``file-store``: the bucket of ``rs.open("file://...")``, the Rust library's own folder
  bucket (the CLI's), as the Go package runs it (``conformance.RunFolder``).

Folder cases (``"needs": "folder"``) run on the file:// store alone: they plant links,
FIFOs and odd files beside the bucket's own, which only a bucket over a folder can meet."""

from __future__ import annotations

import base64
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

import render_store as rs
from conftest import s3_store

FILE = json.loads((Path(__file__).resolve().parents[3] / "tests" / "conformance" / "bucket.json")
                  .read_text(encoding="utf-8"))

#: A listing or value longer than this is described by its length and first difference.
SHOWN = 64
#: What a case may need beyond a bucket.
NEEDS = {"folder"}
#: The bucket contract's error an error of a direct bucket call of the library
#: (``StoreBucket``) stands for, by the library's kind (host/capi/src/store_bucket.rs:
#: ``not-found``, ``denied``, ``too-large`` or ``backend``). Any other kind is no bucket
#: answer at all, and propagates.
CONTRACT_KINDS = {"not-found": "not-found", "denied": "denied", "too-large": "too-large", "backend": "failed"}

_next = itertools.count()


class StepFailed(Exception):
    """A step's answer was not the expected one."""


def unique_prefix(name: str) -> str:
    """``conformance/<case>-<pid>-<ns>-<n>/``: unique, as the Rust runner's."""
    return f"conformance/{name}-{os.getpid()}-{time.time_ns()}-{next(_next)}/"


def value_bytes(value: Dict[str, Any]) -> bytes:
    """A value of the file: text or base64, repeated to ``length`` when given."""
    unit = value["text"].encode() if "text" in value else base64.b64decode(value["base64"], validate=True)
    if "length" not in value:
        return unit
    n = value["length"]
    return (unit * (n // len(unit) + 1))[:n]


def generated(spec: Dict[str, Any]) -> List[str]:
    """The keys a generator names, first to last."""
    suffix = spec.get("suffix", "")
    return [f"{spec['prefix']}{i:0{spec['digits']}d}{suffix}" for i in range(spec["count"])]


def quote(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def answer(call: Callable[[], Any]) -> Dict[str, Any]:
    """``{"ok": answer}`` or ``{"error": kind, "message": ...}``; an exception that is
    neither a BucketError nor a bucket's error from the library propagates."""
    try:
        return {"ok": call()}
    except rs.BucketError as e:
        return {"error": e.kind, "message": e.message}
    except rs.RenderStoreError as e:
        if e.kind not in CONTRACT_KINDS:
            raise
        return {"error": CONTRACT_KINDS[e.kind], "message": e.message}


def check_error(expect: Any, got: Dict[str, Any], shown: Callable[[Any], str],
                mentions: Optional[str] = None) -> None:
    """Raises StepFailed when ``got`` is not the expected error; ``mentions``, when given,
    is text the error's message must contain."""
    if isinstance(expect, dict) and "error" in expect:
        if got.get("error") == expect["error"]:
            if mentions is not None and mentions not in got["message"]:
                raise StepFailed(f"expected {expect['error']} naming {quote(mentions)}, got {got['error']}: "
                                 f"{got['message']}")
            return
        if "error" in got:
            raise StepFailed(f"expected {expect['error']}, got {got['error']}: {got['message']}")
        raise StepFailed(f"expected {expect['error']}, got {shown(got['ok'])}")
    if "error" in got:
        raise StepFailed(f"expected success, got {got['error']}: {got['message']}")
    raise StepFailed(f"unexpected answer {shown(got['ok'])}")


def describe(b: bytes) -> str:
    return f"{len(b)} bytes {quote(b.decode(errors='replace'))}" if len(b) <= SHOWN else f"{len(b)} bytes"


def check_value(want: bytes, got: bytes) -> None:
    got = bytes(got)
    if got == want:
        return
    if len(want) <= SHOWN and len(got) <= SHOWN:
        raise StepFailed(f"expected {describe(want)}, got {describe(got)}")
    at = next((i for i, (w, g) in enumerate(zip(want, got)) if w != g), min(len(want), len(got)))
    raise StepFailed(f"expected {len(want)} bytes, got {len(got)}; the first difference is at byte {at}")


def check_listed(entries: List[Dict[str, Any]], prefix: str, started: int, listed: List[rs.ObjectMeta]) -> None:
    want: List[str] = []
    recent: List[int] = []
    for entry in entries:
        if "keys" in entry:
            want += [f"{quote(k)} ({entry['size']} bytes)" for k in generated(entry["keys"])]
        else:
            if entry.get("modified") == "recent":
                recent.append(len(want))
            want.append(f"{quote(entry['key'])} ({entry['size']} bytes)")
    def relative(key: str) -> str:
        return quote(key[len(prefix):]) if key.startswith(prefix) else f"{quote(key)} (outside the case's prefix)"

    seen = [f"{relative(o.key)} ({o.size} bytes)" for o in listed]
    if seen != want:
        if len(want) <= 10 and len(seen) <= 10:
            raise StepFailed(f"expected [{', '.join(want)}], got [{', '.join(seen)}]")
        at = next((i for i, (w, s) in enumerate(zip(want, seen)) if w != s), min(len(want), len(seen)))
        raise StepFailed(f"expected {len(want)} objects, got {len(seen)}; the first difference is at #{at}: "
                         f"expected {want[at] if at < len(want) else 'nothing'}, "
                         f"got {seen[at] if at < len(seen) else 'nothing'}")
    tolerance = FILE["recent_seconds"]
    now = int(time.time())
    for i in recent:
        modified = listed[i].modified.seconds
        if not started - tolerance <= modified <= now + tolerance:
            raise StepFailed(f"{quote(listed[i].key)}: modified at {modified} s, not within {tolerance} s of this "
                             f"case's time ({started} to {now} s)")


def check_delimited(want: Dict[str, Any], prefix: str, started: int, got: Any) -> None:
    folders: List[str] = []
    for folder in want["folders"]:
        folders += generated(folder["keys"]) if isinstance(folder, dict) else [folder]
    seen = [f[len(prefix):] if f.startswith(prefix) else f"{f} (outside the case's prefix)"
            for f in got.folders]
    if seen != folders:
        if len(folders) <= 10 and len(seen) <= 10:
            raise StepFailed(f"folders: expected {folders}, got {seen}")
        at = next((i for i, (w, s) in enumerate(zip(folders, seen)) if w != s), min(len(folders), len(seen)))
        raise StepFailed(f"folders: expected {len(folders)}, got {len(seen)}; the first difference is at #{at}")
    try:
        check_listed(want["objects"], prefix, started, got.objects)
    except StepFailed as e:
        raise StepFailed(f"objects: {e}") from None


def path_in(root: str, prefix: str, rel: str) -> str:
    """The path in the folder ``root`` of ``rel`` (relative to the case's ``prefix``,
    ``/``-separated)."""
    return os.path.join(root, *f"{prefix}{rel}".split("/"))


def plant(root: str, step: Dict[str, Any], prefix: str) -> str:
    """Makes what a ``plant`` step names, in the folder ``root`` under the case's
    ``prefix``, with the folders above it (0700, as a put makes them); returns the path
    made, for removal."""
    path = path_in(root, prefix, step["path"])
    parts = f"{prefix}{step['path']}".split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        # os.makedirs gives its mode to the last folder only.
        try:
            os.mkdir(os.path.join(root, *parts[:depth]), 0o700)
        except FileExistsError:
            pass
    what = step["what"]
    if what == "link":
        os.symlink(path_in(root, prefix, step["target"]), path)
    elif what == "fifo":
        os.mkfifo(path, 0o600)
    elif what == "file":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
    else:
        raise StepFailed(f"unknown plant {quote(what)}")
    return path


def run_step(bucket: Any, step: Dict[str, Any], prefix: str, started: int,
             root: Optional[str] = None, planted: Optional[List[str]] = None) -> None:
    """Runs one step. ``root``: for a bucket over a folder, the folder; ``planted``, the
    paths planted so far (a ``plant`` step adds to it). Both ``None`` for another bucket."""
    if "key" in step:
        key = prefix + step["key"]
    else:
        key = step.get("raw_key", "").replace("{prefix}", prefix)
    op = step["op"]
    if op == "plant":
        if root is None or planted is None:
            raise StepFailed("a plant step needs a folder bucket")
        planted.append(plant(root, step, prefix))
        return
    expect = step["expect"]
    mentions = prefix + step["mentions"] if "mentions" in step else None
    if op == "put":
        value = value_bytes(step["value"])
        # Generated keys are put last to first: a listing in write order is then out of order.
        keys = [prefix + k for k in reversed(generated(step["keys"]))] if "keys" in step else [key]
        for k in keys:
            got = answer(lambda: bucket.put(k, value))
            if expect == "ok" and "error" not in got:
                continue
            try:
                check_error(expect, got, lambda _: "success", mentions)
            except StepFailed as e:
                raise StepFailed(f"put {quote(k)} ({len(value)} bytes): {e}") from None
    elif op == "delete-many":
        # The keys as the host hands them to a bucket: its delete_many, or a delete each.
        if "keys" in step:
            keys = [prefix + k for k in generated(step["keys"])]
        else:
            keys = [prefix + k["key"] if "key" in k else k["raw_key"].replace("{prefix}", prefix)
                    for k in step["many"]]
        batch = getattr(bucket, "delete_many", None)
        if callable(batch):
            got = answer(lambda: [{"ok": None} if g is None else {"error": g.kind, "message": g.message}
                                  for g in batch(keys)])
        else:
            got = {"ok": [answer(lambda k=k: bucket.delete(k)) for k in keys]}
        if "error" in got or (isinstance(expect, dict) and "error" in expect):
            check_error(expect, got, lambda v: f"{len(v)} answers", mentions)
            return
        if len(got["ok"]) != len(keys):
            raise StepFailed(f"{len(got['ok'])} answers for {len(keys)} keys")
        for i, one in enumerate(got["ok"]):
            want = "ok" if expect == "ok" else expect["each"][i]
            if want == "ok" and "error" not in one:
                continue
            try:
                check_error(want, one, lambda _: "success")
            except StepFailed as e:
                raise StepFailed(f"key {i + 1} ({quote(keys[i])}): {e}") from None
    elif op == "delete":
        got = answer(lambda: bucket.delete(key))
        if not (expect == "ok" and "error" not in got):
            check_error(expect, got, lambda _: "success", mentions)
    elif op == "get":
        got = answer(lambda: bucket.get(key))
        if isinstance(expect, dict) and "value" in expect and "error" not in got:
            check_value(value_bytes(expect["value"]), got["ok"])
        else:
            check_error(expect, got, lambda v: f"the value {describe(bytes(v))}", mentions)
    elif op == "exists":
        got = answer(lambda: bucket.exists(key))

        def shown(size: Any) -> str:
            return "absent" if size is None else f"size {size}"

        if isinstance(expect, dict) and "size" in expect and "error" not in got:
            if got["ok"] != expect["size"]:
                raise StepFailed(f"expected {shown(expect['size'])}, got {shown(got['ok'])}")
        else:
            check_error(expect, got, shown, mentions)
    elif op == "list":
        got = answer(lambda: bucket.list(prefix + step["prefix"]))
        if isinstance(expect, dict) and "listed" in expect and "error" not in got:
            check_listed(expect["listed"], prefix, started, got["ok"])
        else:
            check_error(expect, got, lambda v: f"a listing of {len(v)} objects", mentions)
    elif op == "list-delimited":
        lister = getattr(bucket, "list_delimited", None)
        if not callable(lister):
            # The delimiter listing is optional in a bucket: the library folds the plain
            # listing of one without it (MemoryBucket-via-library runs that fallback).
            return
        got = answer(lambda: lister(prefix + step["prefix"]))
        if isinstance(expect, dict) and "delimited" in expect and "error" not in got:
            check_delimited(expect["delimited"], prefix, started, got["ok"])
        else:
            check_error(expect, got, lambda v: f"a listing of {len(v.folders)} folders and {len(v.objects)} objects",
                        mentions)
    else:
        raise StepFailed(f"unknown op {quote(op)}")


def call_of(step: Dict[str, Any], prefix: str) -> str:
    """What a step asks of the bucket, for a failure's message."""
    if step["op"] in ("list", "list-delimited"):
        return f"{step['op']} {quote(prefix + step['prefix'])}"
    if step["op"] == "delete-many":
        return f"delete-many of {step['keys']['count'] if 'keys' in step else len(step['many'])} keys"
    if step["op"] == "plant":
        return f"plant {step['what']} {quote(prefix + step['path'])}"
    if "keys" in step:
        return f"put {step['keys']['count']} generated keys"
    key = prefix + step["key"] if "key" in step else step["raw_key"].replace("{prefix}", prefix)
    return f"{step['op']} {quote(key)}"


def run_case(bucket: Any, case: Dict[str, Any], root: Optional[str] = None) -> str:
    """Runs ``case`` under a fresh prefix, then removes what it planted (last first) and
    deletes what is left under it; returns the prefix. ``root``: the folder the bucket
    keeps its objects in (the object of key K is the file root/K), ``None`` for a bucket
    over no folder."""
    prefix = unique_prefix(case["name"])
    started = int(time.time())
    planted: Optional[List[str]] = [] if root is not None else None
    try:
        for i, step in enumerate(case["steps"], start=1):
            try:
                run_step(bucket, step, prefix, started, root, planted)
            except StepFailed as e:
                raise StepFailed(f"case {case['name']}, step {i} ({call_of(step, prefix)}): {e}") from None
    finally:
        # What was planted goes first: a link or a FIFO left in place would fail the
        # listing the clean-up below makes.
        for path in reversed(planted or []):
            os.unlink(path)
        # Cleaning up is best effort: the case's outcome does not depend on it.
        try:
            for o in bucket.list(prefix):
                bucket.delete(o.key)
        except (rs.BucketError, rs.RenderStoreError):
            pass
    return prefix


def test_the_cases_have_unique_names_each_needing_what_a_runner_knows():
    names = [c["name"] for c in FILE["cases"]]
    assert names and len(names) == len(set(names))
    assert all(c.get("needs", "folder") in NEEDS for c in FILE["cases"]), [c.get("needs") for c in FILE["cases"]]
    assert any(c.get("needs") == "folder" for c in FILE["cases"]), "no folder case"
    # As the Go runner requires: enough cases that a bucket cannot pass by accident.
    assert len([c for c in FILE["cases"] if "needs" not in c]) >= 10


class Subject:
    """A bucket under test: the bucket, the folder it keeps its objects in (``None``
    when it keeps none) and what to close after."""

    def __init__(self, bucket: Any, root: Optional[str] = None, store: Optional[rs.RenderStore] = None):
        self.bucket, self.root, self.store = bucket, root, store

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def subject(kind: str, folder: Path) -> Subject:
    if kind == "MemoryBucket":
        return Subject(rs.MemoryBucket())
    if kind == "MemoryBucket-via-library":
        store = rs.RenderStore(rs.MemoryBucket())
        return Subject(rs.StoreBucket(store), store=store)
    if kind == "s3-store":
        store = s3_store()
        return Subject(store.bucket, store=store)
    store = rs.open(f"file://{folder}")
    assert store is not None
    return Subject(store.bucket, str(folder), store)


#: The URL-opened stores' buckets run through the C ABI: the Rust library's own
#: `file://` and `s3://` buckets (on the emulator), as the controller opens them.
BUCKETS = ["MemoryBucket", "MemoryBucket-via-library", "file-store", "s3-store"]


@pytest.mark.parametrize("case", FILE["cases"], ids=[c["name"] for c in FILE["cases"]])
@pytest.mark.parametrize("bucket_kind", BUCKETS)
def test_case(bucket_kind: str, case: Dict[str, Any], tmp_path: Path):
    s = subject(bucket_kind, tmp_path)
    if case.get("needs") == "folder" and s.root is None:
        s.close()
        pytest.skip(f"a folder case, and {bucket_kind} keeps no folder")
    try:
        prefix = run_case(s.bucket, case, s.root)
        # The case cleaned up after itself: nothing is left under its prefix.
        assert s.bucket.list(prefix) == [], f"{bucket_kind}: the case left keys behind"
    except StepFailed as e:
        pytest.fail(f"{bucket_kind}: {e}", pytrace=False)
    finally:
        s.close()
    if s.root is not None:
        # And nothing at all is left in its folder: the last delete removed the folders.
        assert os.listdir(s.root) == [], os.listdir(s.root)


def test_the_bucket_of_a_url_store_is_the_librarys_and_batches_deletes(tmp_path: Path):
    store = rs.open(f"file://{tmp_path}")
    assert store is not None
    with store:
        assert isinstance(store.bucket, rs.StoreBucket)
        assert callable(getattr(store.bucket, "delete_many", None)), "the bucket of a URL store has no delete_many"
        store.bucket.put("ns/app/a", b"1")
        assert (tmp_path / "ns" / "app" / "a").read_bytes() == b"1"
    # The bucket of RenderStore(bucket) is the bucket it was given.
    bucket = rs.MemoryBucket()
    with rs.RenderStore(bucket) as store:
        assert store.bucket is bucket
