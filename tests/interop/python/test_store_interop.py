"""One file:// store, two hosts: what the Python folder bucket writes the Rust CLI reads
back key for key and byte for byte, and the reverse; listings agree with `render-store ls`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import render_store as rs
from conftest import configmap, files_under, write_objects

APP = rs.Release("ns", "app")
OTHER = rs.Release("ns", "other")
TIMES = ["2024-03-01T10:00:00Z", "2024-03-01T11:00:00.5Z", "2024-03-01T12:00:00.123456789Z",
         "2024-03-01T15:00:00+02:00"]


def renders():
    return [[configmap(f"cm-{n}", {"n": str(n), "é": "ü"}), configmap("shared")] for n in range(4)]


def history_from_cli(cli, store: Path, release: rs.Release):
    return cli.json("history", str(release), store=store)


def history_as_cli_prints(runtime, entries):
    return [{"key": e.key, "renderRef": e.render_ref, "syncedAt": runtime.format_synced_at(e.synced_at),
             "summary": e.summary} for e in entries]


def test_python_writes_and_rust_reads(runtime, cli, tmp_path):
    root = tmp_path / "store"
    store = rs.RenderStore(rs.FolderBucket(root, create_dir=True), runtime)
    refs = []
    for n, objects in enumerate(renders()):
        refs.append(store.put_render(APP, objects))
        assert store.record_history(APP, render_ref=refs[-1], synced_at=TIMES[n], summary=f"sync {n} ✓")
    store.put_render(OTHER, [configmap("elsewhere")])
    plan = store.gc(APP, keep=2)
    assert len(plan.delete_history) == 2 and len(plan.delete_renders) == 2

    # The keys: the Rust CLI lists what is on disk, and so does the Python bucket.
    on_disk = files_under(root)
    assert not [k for k in on_disk if "#" in k], "a temp file was left behind"
    assert cli.json("ls", store=root) == sorted(on_disk) == store.bucket.list("")
    assert cli.json("ls", "ns/app/", store=root) == store.bucket.list("ns/app/")

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

    # Deleting a release through Python removes its folders too, as object_store does.
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
    gc_report = cli.json("gc", str(APP), "--keep", "3", store=root)
    assert len(gc_report["deleteHistory"]) == 1

    bucket = rs.FolderBucket(root)
    store = rs.RenderStore(bucket, runtime)
    assert refs == [runtime.render_ref(r) for r in renders()]
    assert bucket.list("") == cli.json("ls", store=root) == sorted(files_under(root))

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

    # The same plan from both hosts.
    plan = store.gc(APP, keep=1, protected=[refs[1]], dry_run=True)
    rust_plan = cli.json("gc", str(APP), "--keep", "1", "--protect", refs[1], "--dry-run", store=root)
    assert plan.to_json() == {k: v for k, v in rust_plan.items() if k != "dryRun"}

    # Python records into the Rust store; the Rust CLI sees it.
    assert store.record_history(APP, render_ref=refs[0], synced_at="2024-03-02T00:00:00Z", summary="again")
    assert history_from_cli(cli, root, APP)[-1]["summary"] == "again"


def make_junk(root: Path) -> None:
    """A folder with what a store may hold besides blobs."""
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
    os.symlink(root / "ns" / "app" / "renders" / "a", root / "ns" / "app" / "link-to-file")
    os.symlink(root / "nowhere", root / "ns" / "app" / "broken-link")
    os.symlink(root / "ns" / "app" / "history", root / "ns" / "linked-dir")


@pytest.mark.parametrize("prefix", ["", "ns", "ns/", "ns/app", "ns/app/", "ns/app/renders/", "ns/app/rend",
                                    "ns/app/renders/a", "ns/ap", "nope/", "nope/deeper/", "top", "ns/app/ü"])
def test_listing_agrees_with_rust_ls(cli, tmp_path, prefix):
    root = tmp_path / "store"
    make_junk(root)
    from_rust = cli.json("ls", prefix, store=root)
    assert rs.FolderBucket(root).list(prefix) == from_rust
    assert not {"ns/app/renders/a#1", "ns/app/renders/b#12", "top#3"} & set(from_rust)


@pytest.mark.parametrize("prefix", ["ns//x", "/x", "./a/", "ns/../x/"])
def test_invalid_list_prefixes_are_refused_by_both(cli, tmp_path, prefix):
    root = tmp_path / "store"
    make_junk(root)
    rust = cli.run("ls", prefix, store=root, check=False)
    assert rust.returncode != 0
    with pytest.raises(rs.Denied) as e:
        rs.FolderBucket(root).list(prefix)
    assert e.value.message in rust.stderr.decode()


def test_folder_bucket_contract(tmp_path):
    b = rs.FolderBucket(tmp_path / "s", create_dir=True)
    with pytest.raises(rs.NotFound):
        b.get("ns/app/x")
    assert not b.exists("ns/app/x")
    b.delete("ns/app/x")  # absent: fine
    b.put("ns/app/x", b"one")
    b.put("ns/app/x", b"two")  # replaced whole
    assert b.get("ns/app/x") == b"two" and b.exists("ns/app/x")
    assert sorted(os.listdir(tmp_path / "s" / "ns" / "app")) == ["x"]
    # A folder is no blob.
    assert not b.exists("ns/app")
    with pytest.raises(rs.NotFound):
        b.get("ns/app")
    # Keys that are not clean paths are refused with the Rust host's words.
    for key in ["", "/a", "a/", "a//b", "a/./b", "a/../b", "a/\x01"]:
        with pytest.raises(rs.Denied) as e:
            b.put(key, b"x")
        assert e.value.message == f"{rs.rust_debug_str(key)} is not a valid object key"
    # object_store's temp-file names cannot be addressed.
    with pytest.raises(rs.Failed):
        b.put("ns/app/y#3", b"x")
    b.delete("ns/app/x")
    assert not (tmp_path / "s" / "ns").exists()
    assert (tmp_path / "s").is_dir()


def test_from_url(tmp_path):
    b = rs.FolderBucket.from_url(f"file://{tmp_path}/u?create_dir=true")
    assert b.root == str((tmp_path / "u").resolve())
    with pytest.raises(FileNotFoundError):
        rs.FolderBucket.from_url(f"file://{tmp_path}/missing")
