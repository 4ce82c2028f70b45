"""The messages this host gives the component (wit/render-store.wit, ``bucket-error``) are
the Rust and Node hosts' byte for byte: every case of tests/vectors/messages.json (which
the other two hosts check too), through the functions and through the paths that say
them, and against the Rust CLI for the same refused call and the same left-out name."""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path

import pytest

import render_store as rs

M = rs.Messages
VECTORS = json.loads((Path(__file__).resolve().parents[3] / "tests" / "vectors" /
                      "messages.json").read_text(encoding="utf-8"))
WHY = {"link": M.LINK, "link-or-file": M.LINK_OR_FILE, "not-plain-file": M.NOT_PLAIN_FILE,
       "odd-name": M.ODD_NAME}
UNWALKABLE = {"link": M.UNWALKABLE_LINK, "not-folder": M.UNWALKABLE_NOT_FOLDER,
              "unreadable": M.UNWALKABLE_UNREADABLE}


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def cases(name):
    return [c for c in VECTORS["cases"] if c["message"] == name]


def left_out(c):
    if "bytes_b64" in c:
        entry = M.entry(base64.b64decode(c["bytes_b64"]))
    elif "component" in c:
        entry = M.entry_at(c["path"], c["component"])
    else:
        entry = M.entry(c["path"])
    return M.left_out(entry, WHY[c["why"]])


SAY = {
    "quote": lambda c: M.quote(c["text"]),
    "no-bucket": lambda c: M.NO_BUCKET,
    "outside-prefix": lambda c: M.outside_prefix(c["key"], c["prefix"]),
    "invalid-key": lambda c: M.invalid_key(c["key"]),
    "read-only": lambda c: M.read_only(c["call"], c["key"]),
    "too-large": lambda c: M.too_large(c["key"], c["size"], c["limit"]),
    "backend": lambda c: M.backend(c["call"], c["key"], c["description"]),
    "crosses-link": lambda c: M.crosses_link(c["key"], c["component"]),
    "not-plain-file": lambda c: M.not_plain_file(c["key"]),
    "staging-mark": lambda c: M.staging_mark(c["key"]),
    "folder-not-blob": lambda c: M.folder_not_blob(c["key"]),
    "unwalkable": lambda c: M.unwalkable(c["prefix"], c["path"], UNWALKABLE[c["why"]]),
    "left-out": left_out,
}


def test_every_message_the_wit_specifies_has_vectors():
    assert len(VECTORS["cases"]) >= 20
    assert set(SAY) == {c["message"] for c in VECTORS["cases"]}
    # Each way a listing refuses is worded by a case.
    assert {c["why"] for c in cases("unwalkable")} == set(UNWALKABLE)


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: c["message"])
def test_the_shared_vectors_word_for_word(case):
    assert SAY[case["message"]](case) == case["want"]


def test_the_scope_and_the_buckets_refuse_in_the_shared_words(tmp_path):
    bucket = rs.MemoryBucket()
    scope = rs._Scope(bucket, "ns/app/")
    outside = [c for c in cases("outside-prefix") if c["prefix"] == "ns/app/"]
    assert len(outside) >= 4
    for c in outside:
        for call in ("get", "exists", "list", "delete"):
            assert scope.answer(call, c["key"]) == ("error", "denied", c["want"])
    folder = rs.FolderBucket(tmp_path)
    for c in cases("invalid-key"):
        for refused in (lambda: bucket.put(c["key"], b"x"), lambda: folder.put(c["key"], b"x"),
                        lambda: folder.delete(c["key"])):
            with pytest.raises(rs.Denied) as e:
                refused()
            assert e.value.message == c["want"]
    for c in cases("staging-mark"):
        with pytest.raises(rs.Denied) as e:
            folder.put(c["key"], b"x")
        assert e.value.message == c["want"]


def test_a_lone_surrogate_is_escaped_as_javascript_escapes_it():
    # json.dumps would leave it raw, and the message could not be encoded as UTF-8; keys
    # from the component are UTF-8 and never hold one.
    assert M.quote("a\ud800b\udfff") == '"a\\ud800b\\udfff"'
    assert M.quote("\U0001F600") == '"\U0001F600"'
    assert M.invalid_key("\ud800/") == ('"\\ud800/" is not a valid object key (empty, `.` or `..` '
                                        "components, or control characters)")


# Hostile, but what the Rust CLI prints unchanged: argv holds no NUL, and the CLI writes
# DEL, C1 and bidirectional controls out for the terminal (the vectors cover those).
HOSTILE = 'x"q\\b\tn\r\x01\x1f\u200b\u0301é\u00a0 \U0001F600\u2028\u2029\ue000'


@pytest.mark.parametrize("parent", [f"ns/{HOSTILE}", f"ns//{HOSTILE}", f"{HOSTILE}/./x"])
def test_a_hostile_list_prefix_is_refused_in_the_rust_clis_words(cli, tmp_path, parent):
    prefix = f"{parent}/y"
    want = M.invalid_key(parent)
    for bucket in (rs.MemoryBucket(), rs.FolderBucket(tmp_path)):
        with pytest.raises(rs.Denied) as e:
            bucket.list(prefix)
        assert e.value.message == want
    for url_args in (["--render-store-url", "mem://"], []):
        rust = cli.run(*url_args, "ls", prefix, store=None if url_args else tmp_path, check=False)
        assert rust.returncode == 1 and rust.stderr.decode() == f"render-store: {want}\n"


def test_a_bad_release_name_is_quoted_the_same_way(cli):
    rust = cli.run("--render-store-url", "mem://", "history", HOSTILE, check=False)
    assert rust.stderr.decode() == f"render-store: {M.quote(HOSTILE)} is not NAMESPACE/NAME\n"


def test_a_listing_reports_what_it_leaves_out_in_the_rust_clis_words(cli, tmp_path):
    root = tmp_path / "store"
    (root / "ns" / "app").mkdir(parents=True)
    (root / "ns" / "app" / "ok").write_bytes(b"x")
    app = os.fsencode(root / "ns" / "app")
    with open(app + b"/" + HOSTILE.encode() + b"\xff\xc0\xaf", "wb") as f:
        f.write(b"not UTF-8")
    # No control character: left out as a FIFO, not for its name.
    fifo = 'fifo"q\\\u2028\u2029é\U0001F600'
    os.mkfifo(root / "ns" / "app" / fifo)
    warnings = []
    assert [o.key for o in rs.FolderBucket(root, warn=warnings.append).list("")] == ["ns/app/ok"]
    lines = sorted(w[w.index(": left out of listings: ") + 2:] for w in warnings)
    assert lines == sorted([M.left_out(M.entry(f"ns/app/{HOSTILE}\ufffd\ufffd\ufffd"), M.ODD_NAME),
                            M.left_out(M.entry(f"ns/app/{fifo}"), M.NOT_PLAIN_FILE)])
    rust = cli.run("ls", store=root)
    assert rust.stdout == b"ns/app/ok\n"
    for line in lines:
        assert f"{line} " in rust.stderr.decode(), rust.stderr.decode()


# The cases a folder can hold: a name with a control character is an odd name, left out,
# and an unreadable folder needs a user who cannot read it (test_store_interop.py).
PLANTABLE = [c for c in cases("unwalkable") if c["why"] != "unreadable" and not _CONTROL.search(c["path"])]


@pytest.mark.parametrize("case", PLANTABLE, ids=lambda c: f"{c['why']}-{c['path']}")
def test_a_listing_refuses_what_it_will_not_walk_in_the_shared_words(tmp_path, case):
    root = tmp_path / "store"
    at = root.joinpath(*case["path"].split("/"))
    at.parent.mkdir(parents=True)
    if case["why"] == "link":
        os.symlink(tmp_path, at)
    else:
        at.write_bytes(b"x")
    with pytest.raises(rs.Denied) as e:
        rs.FolderBucket(root).list(case["prefix"])
    assert e.value.message == case["want"]


def test_the_vectors_hold_refusals_a_folder_can_show():
    assert len(PLANTABLE) >= 3
