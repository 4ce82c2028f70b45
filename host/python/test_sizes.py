"""Render sizes the Python host handles (README.md, "Sizes"): a 2.5 MiB render is stored
and read back; canonical bytes up to MAX_LIFTED_BYTES come out of the component and one
byte more is refused with a message that says why; the bulk byte-list conversion gives
what wasmtime-py's own conversion gives."""

from __future__ import annotations

import time

import pytest

import render_store as rs

SUPPORTED = int(2.5 * (1 << 20))


def one_object(n: int) -> bytes:
    """A JSON object of exactly n bytes, already canonical (canonical adds a newline)."""
    return b'{"data":"' + b"x" * (n - len(b'{"data":""}')) + b'"}'


def test_a_render_of_the_supported_size_round_trips(runtime):
    objects = [one_object(SUPPORTED)]
    store = rs.RenderStore(rs.MemoryBucket(), runtime)
    start = time.perf_counter()
    ref = store.put_render("ns/app", objects)
    back = store.get_render("ns/app", ref)
    elapsed = time.perf_counter() - start
    assert back == objects[0] + b"\n"
    assert ref == runtime.render_ref(objects)
    assert store.bucket.blobs[f"ns/app/renders/{ref}"] == back
    assert elapsed < 20, f"put and get of 2.5 MiB took {elapsed:.1f}s"


def test_canonical_bytes_up_to_the_lift_cap_and_not_one_more(runtime):
    assert runtime.canonical([one_object(rs.MAX_LIFTED_BYTES - 1)])[-1:] == b"\n"
    with pytest.raises(rs.RenderStoreError) as e:
        runtime.canonical([one_object(rs.MAX_LIFTED_BYTES)])
    assert e.value.kind == "trap"
    assert "hostcall" in e.value.message and str(rs.MAX_LIFTED_BYTES) in e.value.message


def test_inputs_are_not_capped(runtime):
    # 3 MiB in, a renderRef out: only what leaves the component is capped.
    objects = [one_object(3 << 20)]
    assert len(objects[0]) > rs.MAX_LIFTED_BYTES
    assert runtime.render_ref(objects) == "sha256:" + runtime.sha256_hex(objects[0] + b"\n")


@pytest.mark.parametrize("data", [b"", b"\x00", bytes(range(256)) * 40])
def test_bulk_and_per_element_conversions_agree(runtime, data):
    objects = [b'{"k":"' + data.hex().encode() + b'"}', b"{\"raw\":\"\xff\xfe\"}"]
    outcomes = []
    for fast in (True, False):
        old = rs.set_fast_byte_lists(fast)
        try:
            bucket = rs.MemoryBucket()
            store = rs.RenderStore(bucket, runtime)
            ref = store.put_render("ns/app", objects)
            outcomes.append((runtime.sha256_hex(data), runtime.canonical(objects), ref,
                             store.get_render("ns/app", ref), dict(bucket.blobs)))
        finally:
            rs.set_fast_byte_lists(old)
    assert outcomes[0] == outcomes[1]
