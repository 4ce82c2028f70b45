"""timeout=: a store call on a bucket that never answers ends within 100 ms of its
deadline with DeadlineExceeded (a TimeoutError), and the cloud client's own timeouts
are options of open()."""

from __future__ import annotations

import socket
import threading
import time
from typing import Iterator, List

import pytest

import render_store as rs

REF = "sha256:" + "a" * 64


@pytest.fixture
def black_hole() -> Iterator[str]:
    """An s3:// URL on a listener of 127.0.0.1 that accepts and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: List[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    host, port = listener.getsockname()
    yield (f"s3://renders?region=us-east-1&endpoint=http://{host}:{port}"
           "&use_path_style=true&anonymous=true")
    stop.set()
    listener.close()
    for conn in held:
        conn.close()


CALLS = {
    "put_render": lambda s, t: s.put_render("ns/app", [b'{"kind":"ConfigMap"}'], timeout=t),
    "get_render": lambda s, t: s.get_render("ns/app", REF, timeout=t),
    "has_history_ref": lambda s, t: s.has_history_ref("ns/app", REF, timeout=t),
    "record_history": lambda s, t: s.record_history("ns/app", render_ref=REF,
                                                    synced_at=rs.SyncTime(1767225600), timeout=t),
    "list_history": lambda s, t: s.list_history("ns/app", timeout=t),
    "list_history_page": lambda s, t: s.list_history_page("ns/app", 10, timeout=t),
    "gc": lambda s, t: s.gc("ns/app", 2, [REF], timeout=t),
    "delete_release": lambda s, t: s.delete_release("ns/app", timeout=t),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_timeout_ends_each_call_on_a_black_hole(black_hole: str, name: str) -> None:
    store = rs.open(black_hole)
    assert store is not None
    deadline = 0.3
    start = time.monotonic()
    with pytest.raises(rs.DeadlineExceeded) as raised:
        CALLS[name](store, deadline)
    took = time.monotonic() - start
    assert isinstance(raised.value, TimeoutError)
    assert raised.value.kind == "deadline-exceeded"
    assert deadline - 0.005 <= took <= deadline + 0.1, f"{name} took {took:.3f} s"
    store.close()


def test_the_store_s_timeout_applies_to_every_call(black_hole: str) -> None:
    store = rs.open(black_hole, timeout=0.2)
    assert store is not None
    start = time.monotonic()
    with pytest.raises(rs.DeadlineExceeded):
        store.get_render("ns/app", REF)
    with pytest.raises(rs.DeadlineExceeded):
        store.bucket.list("ns/app/")
    assert time.monotonic() - start < 0.7
    with pytest.raises(ValueError):
        store.get_render("ns/app", REF, timeout=0)
    with pytest.raises(ValueError):
        rs.open(black_hole, timeout=-1)


def test_the_cloud_client_s_settings_are_options(black_hole: str) -> None:
    store = rs.open(black_hole, request_timeout=0.2, retries=0)
    assert store is not None
    start = time.monotonic()
    with pytest.raises(rs.RenderStoreError) as raised:
        store.get_render("ns/app", REF)
    assert raised.value.kind == "bucket", raised.value
    assert time.monotonic() - start < 2
    with pytest.raises(rs.RenderStoreError) as bad:
        rs.open(black_hole + "&retries=many")
    assert bad.value.kind == "url" and "retries must be" in str(bad.value)


class SlowBucket(rs.MemoryBucket):
    """A bucket whose exists takes half a second: it runs on the calling thread, so the
    call is cut when it returns, at the call's next bucket call."""

    def exists(self, key: str):  # type: ignore[no-untyped-def]
        time.sleep(0.5)
        return super().exists(key)


def test_a_python_bucket_s_call_is_cut_when_its_method_returns() -> None:
    bucket = SlowBucket()
    with rs.RenderStore(bucket) as store:
        start = time.monotonic()
        with pytest.raises(rs.DeadlineExceeded):
            store.put_render("ns/app", [b'{"kind":"ConfigMap"}'], timeout=0.1)
        took = time.monotonic() - start
        assert 0.5 <= took < 0.7, took
        # Cut before its put: nothing was written.
        assert bucket.blobs == {}
        assert store.put_render("ns/app", [b'{"kind":"ConfigMap"}']).startswith("sha256:")
