"""Encryption at rest through the package: a keyring file seals render blobs on file://
and s3:// stores, every host reads what another wrote, and the errors name the key."""

import base64
import os
import secrets
import string
from pathlib import Path
from typing import List

import pytest

import render_store as rs
from conftest import Cli, s3_store

#: Long random strings, so that any 8 bytes of one found in a stored object means it
#: was stored in clear.
VALUES = ["".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(48)) for _ in range(2)]


def secret_render() -> List[bytes]:
    return [
        ('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"ns"},'
         f'"stringData":{{"password":"{VALUES[0]}","token":"{VALUES[1]}"}}}}').encode(),
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"a":"b"}}',
    ]


def leaks(blob: bytes) -> bool:
    """Whether any 8-byte piece of a Secret value appears in ``blob``."""
    return any(v[i:i + 8].encode() in blob for v in VALUES for i in range(len(v) - 7))


def keyring_file(folder: Path, *ids: str, mode: int = 0o600) -> Path:
    """A keyring file of ``ids``, each key 32 copies of its id's last byte."""
    path = folder / f"keys-{'-'.join(ids)}"
    path.write_text("".join(f"{i} {base64.b64encode(i[-1].encode() * 32).decode()}\n" for i in ids))
    os.chmod(path, mode)
    return path


def test_a_file_store_with_a_keyring_holds_no_secret_byte_and_the_cli_reads_it(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    keys = keyring_file(tmp_path, "k1")
    store = rs.open(f"file://{folder}", encryption_keys=keys)
    assert store is not None
    ref = store.put_render("ns/app", secret_render())
    assert ref == rs.render_ref(secret_render())
    assert store.record_history("ns/app", render_ref=ref, synced_at="2026-12-01T00:00:00Z")
    for path in folder.rglob("*"):
        if path.is_file():
            assert not leaks(path.read_bytes()), path
    assert store.get_render("ns/app", ref) == rs.canonical(secret_render())
    # The CLI reads what Python sealed with the same file; without it, the error names
    # the key.
    out = cli.run("--encryption-keys", str(keys), "get", "ns/app", ref, store=folder).stdout
    assert out == rs.canonical(secret_render())
    failed = cli.run("get", "ns/app", ref, store=folder, check=False)
    assert failed.returncode != 0 and b'"k1"' in failed.stderr
    # And Python reads what the CLI sealed.
    other = tmp_path / "cm.json"
    other.write_bytes(secret_render()[1])
    cli_ref = cli.run("--encryption-keys", str(keys), "put", "ns/app", str(other), store=folder).stdout.decode().strip()
    assert store.get_render("ns/app", cli_ref) == rs.canonical([secret_render()[1]])
    plain = rs.open(f"file://{folder}")
    assert plain is not None
    with pytest.raises(rs.RenderStoreError) as e:
        plain.get_render("ns/app", ref)
    assert e.value.kind == "encryption-key" and '"k1"' in str(e.value)


def test_an_s3_store_with_a_keyring_holds_no_secret_byte(tmp_path: Path) -> None:
    s3 = s3_store()
    keys = keyring_file(tmp_path, "k1")
    url = os.environ["RENDER_STORE_TEST_S3_URL"]
    store = rs.open(url, encryption_keys=keys)
    assert store is not None
    release = f"ns/enc-{secrets.token_hex(4)}"
    ref = store.put_render(release, secret_render())
    for meta in s3.bucket.list(release + "/"):
        assert not leaks(s3.bucket.get(meta.key)), meta.key
    assert store.get_render(release, ref) == rs.canonical(secret_render())
    with pytest.raises(rs.RenderStoreError) as e:
        s3.get_render(release, ref)
    assert e.value.kind == "encryption-key"
    store.delete_release(release)


def test_a_python_bucket_rekey_and_replay(tmp_path: Path) -> None:
    bucket = rs.MemoryBucket()
    old = rs.RenderStore(bucket, encryption_keys=keyring_file(tmp_path, "k1"))
    ref = old.put_render("ns/app", secret_render())
    rotated = keyring_file(tmp_path, "k2", "k1")
    store = rs.RenderStore(bucket, encryption_keys=rotated)
    assert store.rekey_release("ns/app") == (1, 0)
    assert store.rekey_release("ns/app") == (0, 1)
    with pytest.raises(rs.RenderStoreError) as e:
        old.get_render("ns/app", ref)
    assert e.value.kind == "encryption-key" and '"k2"' in str(e.value)
    trace = rs.record(lambda: store.get_render("ns/app", ref)).trace
    assert '"keyIds":["k2","k1"]' in trace and not leaks(trace.encode())
    assert rs.replay(trace, encryption_keys=rotated).matches
    with pytest.raises(rs.TraceError) as t:
        rs.replay(trace)
    assert t.value.line == 1 and '"k2"' in str(t.value)
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(bucket).rekey_release("ns/app")
    assert e.value.kind == "invalid-input"


def test_a_keyring_file_others_can_read_is_refused(tmp_path: Path) -> None:
    keys = keyring_file(tmp_path, "k1", mode=0o644)
    with pytest.raises(rs.RenderStoreError) as e:
        rs.open("mem://", encryption_keys=keys)
    assert e.value.kind == "invalid-input" and "0644" in str(e.value)


def test_encryption_required_refuses_a_planted_plaintext_blob_and_needs_a_keyring(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    keys = keyring_file(tmp_path, "k1")
    url = f"file://{folder}"
    # The rule needs a keyring: refused before the store is used, and so is a value
    # that is not a bool.
    for make in (lambda: rs.open(url, encryption_required=True),
                 lambda: rs.RenderStore(rs.MemoryBucket(), encryption_required=True)):
        with pytest.raises(rs.RenderStoreError) as e:
            make()
        assert e.value.kind == "invalid-input" and "the keyring is empty" in str(e.value)
    with pytest.raises(TypeError):
        rs.open(url, encryption_keys=keys, encryption_required="false")  # type: ignore[arg-type]
    lenient = rs.open(url, encryption_keys=keys)
    strict = rs.open(url, encryption_keys=keys, encryption_required=True)
    assert lenient is not None and strict is not None
    ref = strict.put_render("ns/app", secret_render())
    blob = folder / "ns" / "app" / "renders" / ref
    sealed = blob.read_bytes()
    # A writer without the key plants the plaintext: read without the rule, refused with it.
    blob.write_bytes(rs.canonical(secret_render()))
    assert lenient.get_render("ns/app", ref) == rs.canonical(secret_render())
    with pytest.raises(rs.RenderStoreError) as e:
        strict.get_render("ns/app", ref)
    assert e.value.kind == "corrupt"
    assert "encryption is required" in str(e.value) and "is plaintext" in str(e.value)
    # A put under the rule seals it again.
    strict.put_render("ns/app", secret_render())
    assert blob.read_bytes() == sealed
    assert strict.get_render("ns/app", ref) == rs.canonical(secret_render())


def test_with_a_keyring_entries_authenticate_and_a_planted_one_keeps_no_sync_out(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    keys = keyring_file(tmp_path, "k1")
    url = f"file://{folder}"
    strict = rs.open(url, encryption_keys=keys, encryption_required=True)
    assert strict is not None
    ref = strict.put_render("ns/app", secret_render())
    # A writer of the bucket records the render first, with no MAC.
    history = folder / "ns" / "app" / "history"
    history.mkdir(exist_ok=True)
    planted = f"20250101T000000.000000000Z-{ref}"
    (history / planted).write_text(
        f'{{"renderRef":"{ref}","syncedAt":"2025-01-01T00:00:00Z","summary":"planted"}}')
    assert strict.record_history("ns/app", render_ref=ref, synced_at="2025-01-01T01:00:00Z", summary="real")
    entries = strict.list_history("ns/app")
    assert [e.summary for e in entries] == ["planted", "real"]
    assert entries[0].authenticated is None and "no MAC" in (entries[0].unauthenticated or "")
    assert entries[1].authenticated == "k1" and entries[1].unauthenticated is None
    # keep 1 counts the authenticated entry alone; the planted one is past retention.
    plan = strict.gc("ns/app", 1, dry_run=True, grace_seconds=0)
    assert plan.delete_history == [f"ns/app/history/{planted}"]
    assert plan.unauthenticated_history == []
    # Without a keyring nothing is judged.
    plain = rs.open(url)
    assert plain is not None
    assert all(e.authenticated is None and e.unauthenticated is None for e in plain.list_history("ns/app"))
