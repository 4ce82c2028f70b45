"""One file:// store, two hosts: a store Python opens with ``rs.open("file://...")`` is the
Rust library's own folder bucket, the one the CLI uses, so what Python writes the Rust CLI
reads back key for key and byte for byte, and the reverse; listings agree with
`render-store ls`; links are never followed; a listing that cannot see everything fails,
so GC and delete_release lose nothing, and both hosts refuse in the same words; GC's grace
period; a truncated blob is written again; diffs of stored Secrets masked as the CLI masks
them."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import render_store as rs
from conftest import (FLAG_VARIABLES, SECRET_VALUES, configmap, diff_as_cli_prints, files_under, secret_renders,
                      write_objects)

APP = rs.Release("ns", "app")
OTHER = rs.Release("ns", "other")
TIMES = ["2024-03-01T10:00:00Z", "2024-03-01T11:00:00.5Z", "2024-03-01T12:00:00.123456789Z",
         "2024-03-01T15:00:00+02:00"]


def renders():
    return [[configmap(f"cm-{n}", {"n": str(n), "é": "ü"}), configmap("shared")] for n in range(4)]


def open_folder(root: Path, runtime=None, create: bool = False) -> rs.RenderStore:
    """The file:// store at ``root``, as the CLI opens it (``create``: with
    ``?create_dir=true``)."""
    store = rs.open(f"file://{root}" + ("?create_dir=true" if create else ""), runtime)
    assert store is not None
    return store


def history_from_cli(cli, store: Path, release: rs.Release):
    return cli.json("history", str(release), store=store)


def history_as_cli_prints(runtime, entries):
    return [{"key": e.key, "renderRef": e.render_ref, "syncedAt": runtime.format_synced_at(e.synced_at),
             "summary": e.summary} for e in entries]


def test_python_writes_and_rust_reads(runtime, cli, tmp_path):
    root = tmp_path / "store"
    store = open_folder(root, runtime, create=True)
    refs = []
    for n, objects in enumerate(renders()):
        refs.append(store.put_render(APP, objects))
        assert store.record_history(APP, render_ref=refs[-1], synced_at=TIMES[n], summary=f"sync {n} ✓")
    store.put_render(OTHER, [configmap("elsewhere")])
    plan = store.gc(APP, keep=2, grace_seconds=0)
    assert len(plan.delete_history) == 2 and len(plan.delete_renders) == 2

    # The keys: the Rust CLI lists what is on disk, and so does the store's bucket.
    on_disk = files_under(root)
    assert not [k for k in on_disk if "#" in k], "a temp file was left behind"
    assert cli.json("ls", store=root) == sorted(on_disk) == keys(store.bucket.list(""))
    assert cli.json("ls", "ns/app/", store=root) == keys(store.bucket.list("ns/app/"))

    # The history, as the Rust CLI reads it.
    entries = store.list_history(APP)
    assert [e.render_ref for e in entries] == refs[2:]
    assert history_from_cli(cli, root, APP) == history_as_cli_prints(runtime, entries)

    # The renders, byte for byte.
    for n, ref in enumerate(refs):
        if n < 2:
            assert cli.run("get", str(APP), ref, store=root, check=False).returncode != 0
            continue
        from_rust = cli.run("get", str(APP), ref, store=root).stdout
        assert from_rust == store.get_render(APP, ref) == runtime.canonical(renders()[n])
        assert on_disk[f"ns/app/renders/{ref}"] == from_rust

    # The Rust GC sees a store already collected to 2 entries.
    dry = cli.json("gc", str(APP), "--keep", "2", "--dry-run", store=root)
    assert dry["deleteHistory"] == [] and dry["deleteRenders"] == []
    assert dry["keepHistory"] == [e.key for e in entries]

    # Deleting a release through Python removes its folders too, as the Rust host does.
    assert store.delete_release(APP) == 4
    assert not (root / "ns" / "app").exists()
    assert cli.json("ls", store=root) == [f"ns/other/renders/{runtime.render_ref([configmap('elsewhere')])}"]


def test_rust_writes_and_python_reads(runtime, cli, tmp_path):
    root = tmp_path / "store"
    refs = []
    for n, objects in enumerate(renders()):
        files = write_objects(tmp_path / f"r{n}", objects)
        refs.append(cli.text("put", str(APP), *files, store=root).strip())
        cli.run("record", str(APP), refs[-1], "--synced-at", TIMES[n], "--summary", f"sync {n} ✓", store=root)
    gc_report = cli.json("gc", str(APP), "--keep", "3", "--grace", "0", store=root)
    assert len(gc_report["deleteHistory"]) == 1

    store = open_folder(root, runtime)
    bucket = store.bucket
    assert refs == [runtime.render_ref(r) for r in renders()]
    assert keys(bucket.list("")) == cli.json("ls", store=root) == sorted(files_under(root))

    entries = store.list_history(APP)
    assert [e.render_ref for e in entries] == refs[1:]
    assert [e.summary for e in entries] == [f"sync {n} ✓" for n in (1, 2, 3)]
    assert [e.synced_at for e in entries] == [runtime.parse_synced_at(t) for t in TIMES[1:]]
    assert history_as_cli_prints(runtime, entries) == history_from_cli(cli, root, APP)
    for ref in refs[1:]:
        assert store.get_render(APP, ref) == cli.run("get", str(APP), ref, store=root).stdout
        assert store.has_history_ref(APP, ref)
    with pytest.raises(rs.RenderStoreError) as e:
        store.get_render(APP, refs[0])
    assert e.value.kind == "not-found"
    assert not store.has_history_ref(APP, refs[0])

    # The same plan from both hosts (with the default grace period, the unreferenced blob
    # written moments ago is spared by both).
    plan = store.gc(APP, keep=1, protected=[refs[1]], dry_run=True)
    rust_plan = cli.json("gc", str(APP), "--keep", "1", "--protect", refs[1], "--dry-run", store=root)
    assert plan.to_json() == {k: v for k, v in rust_plan.items() if k != "dryRun"}
    assert plan.recent_renders == [f"ns/app/renders/{refs[2]}"]

    # Python records into the Rust store; the Rust CLI sees it.
    assert store.record_history(APP, render_ref=refs[0], synced_at="2024-03-02T00:00:00Z", summary="again")
    assert history_from_cli(cli, root, APP)[-1]["summary"] == "again"


def keys(listed):
    return [o.key for o in listed]


def make_junk(root: Path) -> None:
    """A folder with what a store may hold besides blobs: staging files (listed), a FIFO,
    names that are not UTF-8 or hold control characters (left out)."""
    def put(rel: str, data: bytes = b"x") -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)

    for rel in ["ns/app/renders/a", "ns/app/renders/a#1", "ns/app/renders/b#12", "ns/app/renders/c#x",
                "ns/app/renders/d#", "ns/app/renders/e#1#2", "ns/app/history/h", "ns/app2/renders/z",
                "ns/apple", "top", "top#3", "ns/app/deep/er/still/k", "ns/app/sp ace", "ns/app/ünï",
                "ns/app/per%cent", "ns/app/brace{}", "ns/app/.hidden"]:
        put(rel)
    (root / "ns" / "empty" / "dir").mkdir(parents=True)
    os.mkfifo(root / "ns" / "app" / "fifo")
    put("ns/app/tab\there")
    put("ns/app/c1\u0085")
    (root / "ns" / "app").joinpath(os.fsdecode(b"n\xffo")).write_bytes(b"not UTF-8")


LEFT_OUT = {"ns/app/fifo", "ns/app/tab\there", "ns/app/c1\u0085"}


@pytest.mark.parametrize("prefix", ["", "ns", "ns/", "ns/app", "ns/app/", "ns/app/renders/", "ns/app/rend",
                                    "ns/app/renders/a", "ns/ap", "nope/", "nope/deeper/", "top", "ns/app/ü",
                                    "ns/empty/", "ns/app/fi", "/x"])
def test_listing_agrees_with_rust_ls(cli, tmp_path, prefix):
    root = tmp_path / "store"
    make_junk(root)
    listed = open_folder(root).bucket.list(prefix)
    from_rust = cli.json("ls", prefix, store=root)
    assert keys(listed) == from_rust
    assert not LEFT_OUT & set(from_rust) and not [k for k in from_rust if "\ufffd" in k or "n\udcffo" in k]
    # Staging files are plain files: listed.
    if prefix == "":
        assert {"ns/app/renders/a#1", "ns/app/renders/b#12", "top#3", "ns/app/renders/e#1#2"} <= set(from_rust)
    # Each object's size and modification time, as the file system has them.
    for o in listed:
        st = os.stat(root / o.key)
        assert (o.size, o.modified.seconds * 10**9 + o.modified.nanoseconds) == (st.st_size, st.st_mtime_ns)


@pytest.mark.parametrize("prefix", ["ns//x", "./a/", "ns/../x/", "ns/\x01/"])
def test_invalid_list_prefixes_are_refused_by_both(cli, tmp_path, prefix):
    root = tmp_path / "store"
    make_junk(root)
    rust = cli.run("--json", "ls", prefix, store=root, check=False)
    assert (rust.returncode, rust.stdout) == (1, b"")
    with pytest.raises(rs.Denied) as e:
        open_folder(root).bucket.list(prefix)
    assert e.value.kind == "denied"
    # The same refusal, in the same words (--json: not escaped for a terminal).
    assert json.loads(rust.stderr) == {"error": {"kind": "bucket", "message": e.value.message}}
    assert "is not a valid object key" in e.value.message


def denied(call) -> rs.Denied:
    """What ``call`` raised: a refusal of a direct bucket call, as the bucket contract
    raises it."""
    with pytest.raises(rs.Denied) as e:
        call()
    assert e.value.kind == "denied", e.value
    return e.value


def test_file_store_bucket_contract(tmp_path):
    b = open_folder(tmp_path / "s", create=True).bucket
    with pytest.raises(rs.NotFound):
        b.get("ns/app/x")
    assert b.exists("ns/app/x") is None
    b.delete("ns/app/x")  # absent: fine
    b.put("ns/app/x", b"one")
    b.put("ns/app/x", b"three")  # replaced whole
    assert b.get("ns/app/x") == b"three" and b.exists("ns/app/x") == 5
    assert sorted(os.listdir(tmp_path / "s" / "ns" / "app")) == ["x"]
    # Folders 0700, files 0600.
    mode = lambda p: stat.S_IMODE(os.lstat(tmp_path / "s" / p).st_mode)  # noqa: E731
    assert (mode("ns"), mode("ns/app"), mode("ns/app/x")) == (0o700, 0o700, 0o600)
    # A folder is no blob, and no key at all (as on every backend).
    assert b.exists("ns/app") is None
    for call in (b.get, b.delete):
        assert "ns/app" in denied(lambda: call("ns/app")).message
    assert sorted(os.listdir(tmp_path / "s" / "ns" / "app")) == ["x"]
    # Keys that are not clean paths are refused with the Rust host's words, the rule
    # every bucket of the library applies (object_key_error).
    for key in ["", "/a", "a/", "a//b", "a/./b", "a/../b", "a/\x01", "a/\x85"]:
        want = (f"{json.dumps(key, ensure_ascii=False)} is not a valid object key (empty, "
                "`.` or `..` components, or control characters)")
        assert denied(lambda: b.put(key, b"x")).message == want
        assert rs.object_key_error(key) == want
    # `#` marks staging files: a key holding it cannot be put, but a staging file is read.
    e = denied(lambda: b.put("ns/app/y#3", b"x"))
    assert e.message == '"ns/app/y#3" holds "#", which a file:// store reserves for staging files'
    assert not (tmp_path / "s" / "ns" / "app" / "y#3").exists()
    (tmp_path / "s" / "ns" / "app" / "x#1.0").write_bytes(b"torn")
    assert b.get("ns/app/x#1.0") == b"torn" and keys(b.list("ns/")) == ["ns/app/x", "ns/app/x#1.0"]
    b.delete("ns/app/x#1.0")
    b.delete("ns/app/x")
    assert not (tmp_path / "s" / "ns").exists()
    assert (tmp_path / "s").is_dir()


def test_open_a_file_url(cli, tmp_path):
    store = rs.open(f"file://{tmp_path}/u/v?create_dir=true")
    assert store is not None
    assert stat.S_IMODE(os.stat(tmp_path / "u").st_mode) == stat.S_IMODE(os.stat(tmp_path / "u" / "v").st_mode) == 0o700
    store.bucket.put("k", b"x")
    assert (tmp_path / "u" / "v" / "k").read_bytes() == b"x"
    # A folder that does not exist is refused, not made, in the CLI's words.
    url = f"file://{tmp_path}/missing"
    with pytest.raises(rs.RenderStoreError) as e:
        rs.open(url)
    assert e.value.kind == "url"
    rust = cli.run("--render-store-url", url, "ls", check=False)
    assert rust.returncode == 1 and rust.stderr.decode() == f"render-store: {e.value}\n"
    assert not (tmp_path / "missing").exists()


def test_a_key_through_a_link_is_refused_by_both_hosts(runtime, cli, tmp_path):
    root, outside = tmp_path / "store", tmp_path / "outside"
    (outside / "renders").mkdir(parents=True)
    (outside / "victim").write_bytes(b"keep")
    (root / "ns").mkdir(parents=True)
    os.symlink(outside, root / "ns" / "app")
    store = open_folder(root, runtime)
    bucket = store.bucket
    want = ('key "ns/app/victim" crosses "app", which is a symbolic link or not a folder; a file:// store '
            "never follows links: remove it")
    for call in (lambda: bucket.get("ns/app/victim"), lambda: bucket.put("ns/app/victim", b"x"),
                 lambda: bucket.exists("ns/app/victim"), lambda: bucket.delete("ns/app/victim")):
        assert denied(call).message == want
    # Listings that meet the link fail: what lies beyond it is not "nothing".
    for prefix in ("ns/", "ns/app/", "ns/app/renders/", "ns/a", ""):
        assert denied(lambda: bucket.list(prefix)).message == unwalkable(prefix, "ns/app", *LINK)
        rust = cli.run("--json", "ls", prefix, store=root, check=False)
        assert json.loads(rust.stderr) == {"error": {"kind": "bucket", "message": unwalkable(prefix, "ns/app", *LINK)}}
    # Through the component, and in the Rust CLI: the same refusal, in the same sentence.
    with pytest.raises(rs.RenderStoreError) as e:
        store.put_render(APP, [configmap("a")])
    assert e.value.kind == "bucket" and 'crosses "app"' in e.value.message
    files = write_objects(tmp_path / "objects", [configmap("a")])
    rust = cli.run("put", str(APP), *files, store=root, check=False)
    assert (rust.returncode, rust.stderr.decode()) == (1, f"render-store: {e.value}\n")
    with pytest.raises(rs.RenderStoreError) as e:
        store.list_history(APP)
    assert e.value.kind == "bucket" and 'meets "ns/app", a symbolic link' in e.value.message
    with pytest.raises(rs.RenderStoreError) as e:
        store.delete_release(APP)
    assert e.value.kind == "bucket" and 'meets "ns/app", a symbolic link' in e.value.message
    rust = cli.run("delete-release", str(APP), store=root, check=False)
    assert (rust.returncode, rust.stderr.decode()) == (1, f"render-store: {e.value}\n")
    assert sorted(os.listdir(outside)) == ["renders", "victim"] and os.listdir(outside / "renders") == []
    assert (outside / "victim").read_bytes() == b"keep"


@pytest.mark.parametrize("prefix,linked", [
    ("", ["ns/app/history/b", "ns/app/link", "ns/app/broken", "ns/app/loop", "ns/linked-dir"]),
    ("ns/", ["ns/app/history/b", "ns/app/link", "ns/app/broken", "ns/app/loop", "ns/linked-dir"]),
    ("ns/app/", ["ns/app/history/b", "ns/app/link", "ns/app/broken", "ns/app/loop"]),
    ("ns/app/l", ["ns/app/link", "ns/app/loop"]),
    ("ns/app/history/", ["ns/app/history/b"]),
    ("ns/app/history/b", ["ns/app/history/b"]),
    ("ns/linked", ["ns/linked-dir"]),
    # A link on the way to the prefix's folder, whatever follows it.
    ("ns/linked-dir/", ["ns/linked-dir"]),
    ("ns/linked-dir/x/y/", ["ns/linked-dir"]),
])
def test_a_listing_that_meets_a_link_inside_its_prefix_fails_naming_it(tmp_path, prefix, linked):
    root, outside = tmp_path / "store", tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "target").write_bytes(b"linked")
    bucket = open_folder(root, create=True).bucket
    for key in ("ns/app/history/a", "ns/app/renders/r", "ns/other/b"):
        bucket.put(key, b"x")
    # Links of every kind: to a file (named like an entry: it may be the entry, moved),
    # to a folder, broken, a loop. None is followed.
    os.symlink(root / "ns" / "other" / "b", root / "ns" / "app" / "history" / "b")
    os.symlink(outside / "target", root / "ns" / "app" / "link")
    os.symlink(outside / "missing", root / "ns" / "app" / "broken")
    os.symlink("loop", root / "ns" / "app" / "loop")
    os.symlink(outside / "dir", root / "ns" / "linked-dir")
    # The listing names the first link it meets.
    assert denied(lambda: bucket.list(prefix)).message in [unwalkable(prefix, at, *LINK) for at in linked]
    # Listings that do not reach a link are whole; nothing was followed or touched.
    assert keys(bucket.list("ns/app/renders/")) == ["ns/app/renders/r"]
    assert keys(bucket.list("ns/app/history/a")) == ["ns/app/history/a"]
    assert keys(bucket.list("ns/other/")) == ["ns/other/b"]
    assert sorted(os.listdir(outside)) == ["dir", "target"] and os.listdir(outside / "dir") == []


def test_a_listing_whose_prefix_needs_a_folder_where_a_file_or_fifo_is_fails_naming_it(cli, tmp_path):
    bucket = open_folder(tmp_path).bucket
    bucket.put("ns/app/history", b"a file")
    os.mkfifo(tmp_path / "ns" / "app" / "renders")
    for prefix, path in [("ns/app/history/", "ns/app/history"), ("ns/app/history/2024", "ns/app/history"),
                         ("ns/app/history/a/b/", "ns/app/history"), ("ns/app/renders/", "ns/app/renders")]:
        sentence = unwalkable(prefix, path, *NOT_FOLDER)
        assert denied(lambda: bucket.list(prefix)).message == sentence
        rust = cli.run("--json", "ls", prefix, store=tmp_path, check=False)
        assert json.loads(rust.stderr) == {"error": {"kind": "bucket", "message": sentence}}
    # The folder above lists the file as a key and leaves the FIFO out, as ever; a
    # folder that does not exist lists as empty.
    assert keys(bucket.list("ns/app/")) == ["ns/app/history"]
    assert bucket.list("ns/app/missing/") == [] and bucket.list("nowhere/at/all/") == []


def release_with_history(runtime, root: Path):
    """A release with two stored renders, each in a history entry, in the file:// store
    at ``root``: the store and the renders' file paths."""
    store = open_folder(root, runtime, create=True)
    refs = [store.put_render(APP, [configmap(n)]) for n in ("one", "two")]
    for n, ref in enumerate(refs):
        store.record_history(APP, render_ref=ref, synced_at=TIMES[n], summary=f"v{n}")
    # Both renders are referenced: GC, seeing the whole history, deletes nothing.
    assert store.gc(APP, 2, dry_run=True, grace_seconds=0).delete_renders == []
    return store, [root / "ns" / "app" / "renders" / ref for ref in refs]


def unwalkable(prefix: str, path: str, what: str, fix: str) -> str:
    """The folder bucket's words for a listing of ``prefix`` that meets ``path``."""
    return (f'list "{prefix}" meets "{path}", {what}; a listing fails rather than leave out what it cannot '
            f"see: {fix}")


def refused_listing(prefix: str, path: str, what: str, fix: str) -> str:
    """The component's words for a bucket's ``denied`` of ``list <prefix>`` meeting ``path``."""
    return f"list {prefix}: denied: {unwalkable(prefix, path, what, fix)}"


LINK = ("a symbolic link, which a file:// store never follows", "remove the link, or move back what it points to")
NOT_FOLDER = ("which is not a folder, though the prefix needs one there", "remove it, or move back the folder")
UNREADABLE = ("a folder this user cannot read", "make it readable by this user")


def tree(root: Path) -> list:
    """Every path under root (links not followed), relative."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_gc_fails_deleting_nothing_when_history_was_moved_away_and_replaced_by_a_link(runtime, cli, tmp_path):
    root, moved = tmp_path / "store", tmp_path / "elsewhere" / "history"
    store, blobs = release_with_history(runtime, root)
    moved.parent.mkdir()
    os.rename(root / "ns" / "app" / "history", moved)
    os.symlink(moved, root / "ns" / "app" / "history")
    before = tree(tmp_path)
    with pytest.raises(rs.RenderStoreError) as e:
        store.gc(APP, 2, grace_seconds=0)
    assert (e.value.kind, e.value.message) == ("bucket", refused_listing("ns/app/history/", "ns/app/history", *LINK))
    assert all(blob.is_file() for blob in blobs), [str(b) for b in blobs if not b.is_file()]
    # delete_release fails as well, and deletes nothing: not the renders, not the entries
    # in the folder the link points to.
    with pytest.raises(rs.RenderStoreError) as e:
        store.delete_release(APP)
    assert (e.value.kind, e.value.message) == ("bucket", refused_listing("ns/app/", "ns/app/history", *LINK))
    # The Rust CLI fails alike, deleting nothing: delete-release in the same sentence;
    # gc at its check that the release exists, a listing of the release's folder.
    rust = cli.run("delete-release", str(APP), store=root, check=False)
    assert (rust.returncode, rust.stderr.decode()) == (1, f"render-store: {e.value}\n")
    rust = cli.run("gc", str(APP), "--keep", "2", "--grace", "0", store=root, check=False)
    assert (rust.returncode, rust.stderr.decode()) == (
        1, f"render-store: {unwalkable('ns/app/', 'ns/app/history', *LINK)}\n")
    assert tree(tmp_path) == before
    assert all(blob.is_file() for blob in blobs) and len(os.listdir(moved)) == 2


def test_gc_fails_deleting_nothing_when_history_was_replaced_by_a_file(runtime, cli, tmp_path):
    root = tmp_path / "store"
    store, blobs = release_with_history(runtime, root)
    os.rename(root / "ns" / "app" / "history", tmp_path / "history")
    (root / "ns" / "app" / "history").write_bytes(b"not a folder")
    with pytest.raises(rs.RenderStoreError) as e:
        store.gc(APP, 2, grace_seconds=0)
    assert (e.value.kind, e.value.message) == ("bucket", refused_listing("ns/app/history/", "ns/app/history",
                                                                         *NOT_FOLDER))
    # The Rust CLI's GC fails too, in the same sentence, and deletes nothing.
    rust = cli.run("gc", str(APP), "--keep", "2", "--grace", "0", store=root, check=False)
    assert (rust.returncode, rust.stderr.decode()) == (1, f"render-store: {e.value}\n")
    assert all(blob.is_file() for blob in blobs), [str(b) for b in blobs if not b.is_file()]
    assert (root / "ns" / "app" / "history").read_bytes() == b"not a folder"


#: GC, then delete_release, over the file:// store in argv[1], in a child process; prints
#: whether the child could read the folder argv[2], and each call's outcome (its kind,
#: message and whole sentence), as JSON.
UNREADABLE_CHILD = """
import json, os, sys
import render_store as rs
root, history = sys.argv[1:]
try:
    os.listdir(history)
    readable = True
except OSError:
    readable = False
store = rs.open("file://" + root)
def outcome(fn):
    try:
        fn()
        return {"ok": True}
    except rs.RenderStoreError as e:
        return {"kind": e.kind, "message": e.message, "text": str(e)}
gc = outcome(lambda: store.gc(rs.Release("ns", "app"), 2, grace_seconds=0))
delete = outcome(lambda: store.delete_release(rs.Release("ns", "app")))
print(json.dumps({"readable": readable, "gc": gc, "delete_release": delete}))
"""


def without_dac_override():
    """How to run a process that cannot read a mode-000 folder: root reads one anyway
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so as root the child loses both; ``None``
    when that is not possible here."""
    if os.getuid() != 0:
        return []
    caps = "-dac_override,-dac_read_search"
    setpriv = ["setpriv", "--bounding-set", caps, "--inh-caps", caps]
    if shutil.which("setpriv") is None or subprocess.run([*setpriv, "true"]).returncode != 0:
        return None
    return setpriv


def test_gc_fails_deleting_nothing_when_history_cannot_be_read(runtime, cli, tmp_path):
    root = tmp_path / "store"
    _, blobs = release_with_history(runtime, root)
    prefix = without_dac_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: no process here would be refused the folder")
    history = root / "ns" / "app" / "history"
    history.chmod(0)
    url = ["--render-store-url", f"file://{root}"]
    env = {k: v for k, v in os.environ.items() if k not in FLAG_VARIABLES}
    try:
        run = subprocess.run([*prefix, sys.executable, "-c", UNREADABLE_CHILD, str(root), str(history)],
                             capture_output=True, text=True, timeout=120)
        # The Rust CLI, refused the folder alike.
        rust = {command: subprocess.run([*prefix, str(cli.path), *url, *args], capture_output=True, text=True,
                                        timeout=120, env=env, stdin=subprocess.DEVNULL)
                for command, args in [("gc", ["gc", str(APP), "--keep", "2", "--grace", "0"]),
                                      ("delete_release", ["delete-release", str(APP)])]}
    finally:
        # So that the folder can be removed (and checked) by this user.
        history.chmod(0o700)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["readable"] is False, "the child could read the mode-000 folder: the test proves nothing"
    gc, delete = got["gc"], got["delete_release"]
    assert (gc["kind"], gc["message"]) == ("bucket", refused_listing("ns/app/history/", "ns/app/history",
                                                                     *UNREADABLE))
    # delete_release meets the folder inside the prefix it lists.
    assert (delete["kind"], delete["message"]) == ("bucket", refused_listing("ns/app/", "ns/app/history",
                                                                             *UNREADABLE))
    # The CLI fails in the same sentences: its check that the release exists reads the
    # release's folder alone (one delimiter listing), so its gc fails at GC's own
    # listing of the history, as the library's does.
    assert (rust["delete_release"].returncode, rust["delete_release"].stderr) == (
        1, f"render-store: {delete['text']}\n")
    assert (rust["gc"].returncode, rust["gc"].stderr) == (1, f"render-store: {gc['text']}\n")
    assert all(blob.is_file() for blob in blobs), [str(b) for b in blobs if not b.is_file()]
    assert len(os.listdir(history)) == 2


def history_with_planted_link(runtime, tmp_path: Path):
    """A release with a history entry moved out of its history/ folder and a symbolic
    link to it left in its place: the store's root, its bucket (the Rust library's,
    called directly) and the link's would-be key."""
    root = tmp_path / "store"
    store, _ = release_with_history(runtime, root)
    history = root / "ns" / "app" / "history"
    entry = sorted(os.listdir(history))[0]
    moved = tmp_path / "elsewhere" / entry
    moved.parent.mkdir()
    os.rename(history / entry, moved)
    os.symlink(moved, history / entry)
    return root, store.bucket, f"ns/app/history/{entry}"


@pytest.mark.parametrize("prefix", ["", "ns/", "ns/app/", "ns/app/history/", "ns/app/history/2024"])
def test_a_link_planted_in_history_is_refused_in_the_same_sentence_by_both_hosts(runtime, cli, tmp_path, prefix):
    root, bucket, at = history_with_planted_link(runtime, tmp_path)
    sentence = unwalkable(prefix, at, *LINK)
    assert denied(lambda: bucket.list(prefix)).message == sentence
    for args in (("ls", prefix), ("--json", "ls", prefix)):
        rust = cli.run(*args, store=root, check=False)
        # Nothing listed: the CLI too fails rather than print a shorter listing.
        assert (rust.returncode, rust.stdout) == (1, b""), args
        if "--json" in args:
            # Under --json the error is a JSON object with the same sentence.
            assert json.loads(rust.stderr) == {"error": {"kind": "bucket", "message": sentence}}, args
        else:
            assert rust.stderr.decode() == f"render-store: {sentence}\n", args
    # The listings that do not reach the link still answer, in both hosts alike.
    assert keys(bucket.list("ns/app/renders/")) == cli.json("ls", "ns/app/renders/", store=root)


@pytest.mark.parametrize("show_secrets", [False, True])
@pytest.mark.parametrize("form", ["yaml", "json"])
def test_diffs_of_stored_secrets_equal_the_rust_clis(runtime, cli, tmp_path, form, show_secrets):
    root = tmp_path / "store"
    db = rs.Release("prod", "db")
    store = open_folder(root, runtime, create=True)
    old, new = secret_renders()
    old_ref, new_ref = store.put_render(db, old), store.put_render(db, new)
    flag = ["--show-secrets"] if show_secrets else []
    ours = store.diff_renders(db, old_ref, new_ref, form, show_secrets=show_secrets)
    diffed = cli.run("--json", *flag, "diff", str(db), old_ref, new_ref, "--form", form, store=root, check=False)
    assert diffed.returncode == 1, diffed.stderr  # different renders, as diff(1)
    rust = json.loads(diffed.stdout)
    assert diff_as_cli_prints(ours) == rust
    # The logic export against `diff --local` (exit status 1: the renders differ).
    logic = runtime.diff_renders(store.get_render(db, old_ref), runtime.canonical(new), form,
                                 show_secrets=show_secrets)
    local = write_objects(tmp_path / "local", new)
    preview = cli.run("--json", *flag, "diff", str(db), "--local", *local, "--against", old_ref, "--form", form,
                      store=root, check=False)
    assert preview.returncode == 1, preview.stderr
    assert diff_as_cli_prints(logic) == json.loads(preview.stdout)
    # So that equal diffs are not two that both show, or both hide, the values.
    text = json.dumps(rust)
    assert (SECRET_VALUES["password_after"] in text, "*** (after)" in text) == (show_secrets, not show_secrets)
    # Neither host rewrote the blobs: the CLI's get is the render as put.
    from_rust = cli.run("get", str(db), new_ref, store=root).stdout
    assert from_rust == store.get_render(db, new_ref) == runtime.canonical(new)


def test_gc_spares_a_blob_younger_than_the_grace_period_as_the_rust_cli_does(runtime, cli, tmp_path):
    root = tmp_path / "store"
    store = open_folder(root, runtime, create=True)
    bucket = store.bucket
    kept, young = (store.put_render(APP, [configmap(n)]) for n in ("kept", "young"))
    store.record_history(APP, render_ref=kept, synced_at="2024-01-01T00:00:00Z")
    young_key = f"ns/app/renders/{young}"
    modified = bucket.list(young_key)[0].modified

    # Written just now: the default grace period (10 minutes) spares it, in both hosts.
    dry = store.gc(APP, 1, dry_run=True)
    assert (dry.delete_renders, dry.keep_renders, dry.recent_renders) == ([], [f"ns/app/renders/{kept}"], [young_key])
    assert cli.json("gc", str(APP), "--keep", "1", "--dry-run", store=root) == {"dryRun": True, **dry.to_json()}
    assert store.gc(APP, 1) == dry
    assert cli.json("gc", str(APP), "--keep", "1", store=root) == {"dryRun": False, **dry.to_json()}
    assert bucket.exists(young_key) == len(runtime.canonical([configmap("young")]))
    # Judged by the file's modification time against `now`: 599 s old is spared, 600 s is not.
    since = lambda s: rs.SyncTime(modified.seconds + s, modified.nanoseconds)  # noqa: E731
    assert store.gc(APP, 1, dry_run=True, now=since(599), grace_seconds=600).recent_renders == [young_key]
    assert store.gc(APP, 1, dry_run=True, now=since(600), grace_seconds=600).delete_renders == [young_key]

    # Grace 0: deleted whatever its age; the Rust CLI then finds nothing more to do.
    plan = store.gc(APP, 1, grace_seconds=0)
    assert (plan.delete_renders, plan.recent_renders) == ([young_key], [])
    assert keys(bucket.list("ns/app/renders/")) == [f"ns/app/renders/{kept}"]
    after = cli.json("gc", str(APP), "--keep", "1", "--grace", "0", store=root)
    assert (after["deleteRenders"], after["recentRenders"]) == ([], [])


def written(path: Path) -> tuple:
    """What tells one write of a file from another: a put writes a staging file and
    renames it over the key's, so a rewritten blob is a new inode."""
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns


def put_render_calls(store: rs.RenderStore, release: rs.Release, objects) -> tuple:
    """``store.put_render(release, objects)`` recorded: its renderRef and the bucket
    calls it made, ``(call, key)`` in order, as its trace has them (TRACES.md)."""
    recorded = rs.record(lambda: store.put_render(release, objects))
    assert recorded.error is None, recorded.error
    lines = [json.loads(line) for line in recorded.trace.splitlines() if line.strip()]
    return recorded.value, [(line["call"], line["key"]) for line in lines if "call" in line]


def test_put_render_rewrites_a_truncated_blob_in_both_hosts(runtime, cli, tmp_path):
    root = tmp_path / "store"
    store = open_folder(root, runtime, create=True)
    objects = [configmap("web", {"replicas": "3"}), configmap("db")]
    canonical = runtime.canonical(objects)
    ref, calls = put_render_calls(store, APP, objects)
    key = f"ns/app/renders/{ref}"
    path = root / key
    assert calls == [("exists", key), ("put", key)]
    assert store.bucket.exists(key) == len(canonical) == path.stat().st_size
    # A blob of the canonical size is not written again.
    first = written(path)
    assert put_render_calls(store, APP, objects) == (ref, [("exists", key)])
    assert written(path) == first

    # Torn by a crash: half of it is left. Reading it fails as corrupt, in both hosts;
    # exists tells the size, so put-render writes it again, and it reads back whole.
    os.truncate(path, len(canonical) // 2)
    assert store.bucket.exists(key) == len(canonical) // 2
    with pytest.raises(rs.RenderStoreError) as e:
        store.get_render(APP, ref)
    assert e.value.kind == "corrupt"
    rust = cli.run("get", str(APP), ref, store=root, check=False)
    assert rust.returncode == 1 and rust.stdout == b""
    torn = written(path)
    assert put_render_calls(store, APP, objects) == (ref, [("exists", key), ("put", key)])
    assert written(path) != torn
    assert store.get_render(APP, ref) == canonical == path.read_bytes()
    assert cli.run("get", str(APP), ref, store=root).stdout == canonical

    # An empty blob, written again by the Rust CLI's put, read back by Python.
    os.truncate(path, 0)
    with pytest.raises(rs.RenderStoreError) as e:
        store.get_render(APP, ref)
    assert e.value.kind == "corrupt"
    files = write_objects(tmp_path / "objects", objects)
    assert cli.text("put", str(APP), *files, store=root).strip() == ref
    assert store.get_render(APP, ref) == canonical == path.read_bytes()
