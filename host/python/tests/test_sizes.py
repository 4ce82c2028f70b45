"""Render sizes: the largest render is 64 MiB of canonical bytes, one byte more is refused
with the component's words, as in every host. 64 MiB renders (one object of one
long string, and 20,000 small objects) are put, read back byte for byte and diffed, and
bytes that are not UTF-8 still reach the component exactly, with Go's handling. The
objects cross the C ABI in one buffer with the end of each; ends that do not split it
are refused."""

from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable, Sequence

import pytest

import render_store as rs
from render_store import _lib

MIB = 1 << 20
SIZE = 64 * MIB


def long_string_render() -> list:
    """One canonical object whose canonical render (with its newline) is SIZE bytes."""
    head, tail = b'{"data":"', b'"}'
    return [head + b"x" * (SIZE - 1 - len(head) - len(tail)) + tail]


def small_objects_render() -> list:
    """20,000 canonical ConfigMaps whose canonical render is SIZE bytes."""
    per, extra = divmod(SIZE, 20_000)
    objects = []
    for i in range(20_000):
        head = b'{"apiVersion":"v1","data":{"k":"'
        tail = b'"},"kind":"ConfigMap","metadata":{"name":"cm-%05d"}}' % i
        n = per - 1 + (extra if i == 0 else 0)
        objects.append(head + b"v" * (n - len(head) - len(tail)) + tail)
    return objects


@pytest.mark.parametrize("make", [long_string_render, small_objects_render], ids=["one-long-string", "20000-objects"])
def test_a_64_mib_render_round_trips_and_diffs(runtime, make):
    objects = make()
    canonical = b"".join(o + b"\n" for o in objects)
    assert len(canonical) == SIZE
    bucket = rs.MemoryBucket()
    store = rs.RenderStore(bucket, runtime)
    ref = store.put_render("ns/app", objects)
    assert ref == "sha256:" + runtime.sha256_hex(canonical)
    assert runtime.render_ref(objects) == ref
    assert bucket.blobs[f"ns/app/renders/{ref}"] == canonical
    back = store.get_render("ns/app", ref)
    assert back == canonical
    assert runtime.canonical(objects) == canonical
    # Against a stored render of the same objects but the last one changed: for 20,000
    # objects, another 64 MiB render, so one call moves 128 MiB into the component (no
    # cap but the memory's); one long string is compared with a small render.
    if make is small_objects_render:
        changed = objects[:-1] + [objects[-1].replace(b'"k":"v', b'"k":"w', 1)]
    else:
        changed = [b'{"data":"x!"}']
    other = store.put_render("ns/app", changed)
    d = store.diff_renders("ns/app", other, ref, "json")
    if make is long_string_render:
        assert (len(d.changed), len(d.added), len(d.removed), d.unchanged) == (1, 0, 0, 0)
        assert sum(len(line) for line in d.changed[0].lines) > SIZE - 100
    else:
        assert (len(d.changed), len(d.added), len(d.removed), d.unchanged) == (1, 0, 0, len(objects) - 1)
        assert d.changed[0].id.name == "cm-19999"
    assert runtime.diff_renders(back, b"".join(o + b"\n" for o in changed)) == store.diff_renders("ns/app", ref, other)


def test_one_byte_over_the_largest_render_is_refused_and_nothing_stored(runtime):
    head, tail = b'{"data":"', b'"}'
    over = [head + b"x" * (SIZE - len(head) - len(tail)) + tail]
    for call in (runtime.canonical, runtime.render_ref):
        with pytest.raises(rs.RenderStoreError) as e:
            call(over)
        assert e.value.kind == "invalid-input"
        assert "67108864 bytes (64 MiB)" in e.value.message and "largest" in e.value.message
    store = rs.RenderStore(rs.MemoryBucket(), runtime)
    with pytest.raises(rs.RenderStoreError) as e:
        store.put_render(("ns", "app"), over)
    assert e.value.kind == "invalid-input"
    assert store.bucket.list("ns/app/") == []


def test_bytes_that_are_not_utf8_keep_gos_handling(runtime):
    # One U+FFFD per invalid byte inside a string (Go's decoder), not one per sequence
    # as a lossy UTF-8 decode would give: the bytes cross the boundary as they are.
    objects = [b'{"k":"\xe2\x82A\xff"}']
    assert runtime.canonical(objects) == '{"k":"\ufffd\ufffdA\ufffd"}\n'.encode()
    assert runtime.render_ref(objects) == runtime.render_ref(['{"k":"\ufffd\ufffdA\ufffd"}'])
    # Outside a string it is a syntax error at the byte's offset.
    with pytest.raises(rs.RenderStoreError) as e:
        runtime.canonical([b'{"k":1\xff}'])
    assert e.value.kind == "invalid-object" and e.value.index == 0 and "6" in e.value.message
    # Text and the same bytes give the same answers.
    assert runtime.sha256_hex("é") == runtime.sha256_hex(b"\xc3\xa9") != runtime.sha256_hex(b"\xe9")


def test_objects_cross_the_same_whether_all_are_text_or_not(runtime):
    # The objects cross in one buffer, UTF-8 or not, bytes-like or str, and each gets
    # the handling it would get alone.
    text = [b'{"b":1,"a":"\xc3\xa9"}', bytearray(b'{"c":[]}'), memoryview(b'{"d":null}'), '{"e":"x"}']
    canonical = '{"a":"\u00e9","b":1}\n{"c":[]}\n{"d":null}\n{"e":"x"}\n'.encode()
    assert runtime.canonical(text) == canonical
    assert runtime.canonical(iter(text)) == canonical
    mixed = text[:2] + [b'{"k":"\xff"}'] + text[2:]
    assert runtime.canonical(mixed) == (
        '{"a":"\u00e9","b":1}\n{"c":[]}\n{"k":"\ufffd"}\n{"d":null}\n{"e":"x"}\n'.encode())
    store = rs.RenderStore(rs.MemoryBucket(), runtime)
    assert store.put_render("ns/app", mixed) == runtime.render_ref(mixed)
    with pytest.raises(rs.RenderStoreError) as e:
        runtime.canonical([*text, b'{"k":1\xff}'])
    assert e.value.kind == "invalid-object" and e.value.index == 4
    with pytest.raises(TypeError):
        runtime.canonical([b"{}", 7])


def with_ends(fn: Callable[..., Any], before: Sequence[Any], data: bytes, ends: Sequence[int],
              after: Sequence[Any]) -> None:
    """Calls a C ABI function on objects given as `data` and `ends` exactly (the package
    always computes the ends itself), raising its error."""
    packed = struct.pack(f"{len(ends)}N", *ends)
    rs._check(fn(*before, data, len(data), packed, len(ends), *after))


def test_joined_ends_that_do_not_split_the_buffer_are_refused(runtime):
    objects = [b'{"b":1,"a":"\xc3\xa9"}', b'{"k":"\xff"}', b"{}"]
    data = b"".join(objects)
    want = runtime.render_ref(objects)
    assert [len(o) for o in objects] == [16, 9, 2]
    buf = _lib.Buf()
    with_ends(_lib.lib.rs_render_ref, [runtime._opt()], data, [16, 25, 27], [ctypes.byref(buf)])
    assert _lib.take_text(buf) == want
    # Empty objects are where ends repeat; each is refused as an object, not as an end.
    with pytest.raises(rs.RenderStoreError) as e:
        with_ends(_lib.lib.rs_render_ref, [runtime._opt()], data, [16, 16, 25, 27], [ctypes.byref(_lib.Buf())])
    assert e.value.kind == "invalid-object" and e.value.index == 1
    for ends in ([16, 25], [16, 28, 27], [25, 16, 27], [16, 25, 28]):
        for fn in (_lib.lib.rs_render_ref, _lib.lib.rs_canonical):
            with pytest.raises(rs.RenderStoreError) as e:
                with_ends(fn, [runtime._opt()], data, ends, [ctypes.byref(_lib.Buf())])
            assert e.value.kind == "invalid-input" and e.value.message.startswith("joined objects: "), ends
        bucket = rs.MemoryBucket()
        store = rs.RenderStore(bucket, runtime)
        with pytest.raises(rs.RenderStoreError) as e:
            with_ends(_lib.lib.rs_store_put_render, [store._handle(), *rs._rel("ns/app")], data, ends,
                      [ctypes.byref(_lib.Buf()), None])
        assert e.value.kind == "invalid-input" and not bucket.blobs, ends


def test_a_stored_blob_that_is_not_utf8_is_corrupt(runtime):
    bucket = rs.MemoryBucket()
    store = rs.RenderStore(bucket, runtime)
    ref = store.put_render("ns/app", [b"{}"])
    bucket.blobs[f"ns/app/renders/{ref}"] = b"{\xff}\n"
    with pytest.raises(rs.RenderStoreError) as e:
        store.get_render("ns/app", ref)
    assert e.value.kind == "corrupt"
