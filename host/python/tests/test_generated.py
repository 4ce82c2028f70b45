"""The functions generated from the WIT (``render_store._api``, over the C ABI's
``rs_call_*`` entry points) and the WIT's types (``render_store.wit``): called for real on
``mem://`` and ``file://`` stores, their answers decoded into the generated dataclasses,
their arguments and JSON checked as docs/json.md asks."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import render_store as rs
from render_store import _calls, wit
from conftest import configmap

JAN_1 = rs.SyncTime(1_767_225_600)  # 2026-01-01T00:00:00Z
JAN_2 = rs.SyncTime(1_767_312_000)
JAN_3 = rs.SyncTime(1_767_398_400)


def deployment(image: str, replicas: int = 1) -> bytes:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {"replicas": replicas,
                 "template": {"spec": {"containers": [{"name": "app", "image": image}]}}},
    }).encode()


def secret(password: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                       "data": {"password": password}}).encode()


@pytest.fixture(params=["mem", "file"])
def store(request, tmp_path: Path, runtime: rs.Runtime) -> rs.RenderStore:
    url = "mem://" if request.param == "mem" else f"file://{tmp_path / 'store'}?create_dir=true"
    opened = rs.open(url, runtime)
    assert opened is not None
    yield opened
    opened.close()


def history(store: rs.RenderStore) -> list:
    """Three entries of prod/web: nginx 1.25, then 1.26 with 2 replicas, then 1.26 with
    3; their renderRefs."""
    renders = [[deployment("nginx:1.25"), secret("b25l")],
               [deployment("nginx:1.26", 2), secret("b25l")],
               [deployment("nginx:1.26", 3), secret("dHdv")]]
    refs = []
    for render, when, summary in zip(renders, (JAN_1, JAN_2, JAN_3), ("one", "two", "three")):
        ref = store.put_render("prod/web", render)
        assert store.record_history("prod/web", render_ref=ref, synced_at=when, summary=summary)
        refs.append(ref)
    return refs


def test_blame_object_names_the_entry_that_last_changed_each_field(store):
    refs = history(store)
    blame = store.blame_object("prod/web", "Deployment/web")
    assert isinstance(blame, wit.ObjectBlame)
    assert blame.object == wit.ObjectId("apps/v1", "Deployment", "prod", "web")
    assert blame.entries == [wit.HistoryKey(wit.SyncTime(t.seconds, 0), ref)
                             for t, ref in zip((JAN_1, JAN_2, JAN_3), refs)]
    assert blame.newest == 2
    by_path = {f.path: f for f in blame.fields}
    assert by_path["spec.replicas"] == wit.FieldBlame("spec.replicas", "3", 2)
    image = by_path["spec.template.spec.containers[name=app].image"]
    assert (image.value, image.entry) == ('"nginx:1.26"', 1)
    assert by_path["metadata.name"].entry == 0
    # Under a field only, and the release as a tuple or a Release.
    under = store.blame_object(("prod", "web"), "deployment/web", "spec.template")
    assert [f.path for f in under.fields] == ["spec.template.spec.containers[name=app].image",
                                             "spec.template.spec.containers[name=app].name"]
    assert store.blame_object(rs.Release("prod", "web"), "Deployment/web", "spec.replicas",
                              timeout=30).fields == [wit.FieldBlame("spec.replicas", "3", 2)]


def test_blame_object_masks_secret_values_unless_asked(store):
    history(store)
    (masked,) = store.blame_object("prod/web", "Secret/db", "data").fields
    assert (masked.path, masked.value, masked.entry) == ("data.password", '"***"', 2)
    (shown,) = store.blame_object("prod/web", "Secret/db", "data",
                                  secrets=wit.SecretValues.SHOWN).fields
    assert shown.value == '"dHdv"'
    assert store.blame_object("prod/web", "Secret/db", "data", secrets="shown").fields == [shown]


def test_blame_object_of_an_absent_object_is_not_found(store):
    history(store)
    with pytest.raises(rs.RenderStoreError) as e:
        store.blame_object("prod/web", "ConfigMap/none")
    assert e.value.kind == "not-found"


def test_release_images_and_render_objects(store):
    refs = history(store)
    intervals = store.release_images("prod/web", "nginx")
    assert intervals == [
        wit.ImageInterval("docker.io/library/nginx:1.25", wit.SyncTime(JAN_1.seconds, 0),
                          wit.SyncTime(JAN_2.seconds, 0), [refs[0]]),
        wit.ImageInterval("docker.io/library/nginx:1.26", wit.SyncTime(JAN_2.seconds, 0), None,
                          [refs[1], refs[2]]),
    ]
    # The window: from the 3rd only the open interval meets it.
    assert [i.image for i in store.release_images("prod/web", None, since=JAN_3)] == [
        "docker.io/library/nginx:1.26"]
    assert store.release_images("prod/web", "redis") == []

    (first, second) = store.render_objects("prod/web", [refs[0], refs[2]])
    assert (first.render_ref, second.render_ref) == (refs[0], refs[2])
    assert [o.id.kind for o in first.objects] == ["Deployment", "Secret"]
    assert first.objects[0].images == ["docker.io/library/nginx:1.25"]
    assert first.objects[1].images == []
    # The same rows as the logic function gives for the render's bytes.
    assert first.objects == rs.index_objects(store.get_render("prod/web", refs[0]))
    # A Secret's digest is of its masked form: a changed value does not show in it.
    assert first.objects[1].hash == second.objects[1].hash


def test_list_history_page_and_read_history_entries(store):
    history(store)
    page = store.list_history_page("prod/web", 2)
    assert [e.summary for e in page.entries] == ["three", "two"]
    older = store.list_history_page("prod/web", 2, page.next_before)
    assert [e.summary for e in older.entries] == ["one"] and older.next_before is None
    keys = [e.key for e in page.entries + older.entries]
    read = store.read_history_entries("prod/web", keys)
    assert all(isinstance(r, wit.EntryReadEntry) for r in read)
    assert [r.value.summary for r in read] == ["three", "two", "one"]
    assert read[0].value.trust == wit.EntryTrustUnchecked()
    assert read[2].value.synced_at == wit.SyncTime(JAN_1.seconds, 0)
    # A key gone since it was listed is told apart from one that does not read.
    store.bucket.delete(keys[0])
    assert isinstance(store.read_history_entries("prod/web", keys[:1])[0], wit.EntryReadGone)


def test_check_index_and_rebuild_index(store):
    history(store)
    assert store.check_index("prod/web") == wit.IndexCheck(False, None, [], 0)
    store.index_release("prod/web")
    assert store.check_index("prod/web") == wit.IndexCheck(True, None, [], 3)
    rebuilt = store.rebuild_index("prod/web")
    assert (rebuilt.renders, rebuilt.indexed, rebuilt.read) == (3, 3, 3)
    assert rebuilt.unreadable == [] and rebuilt.replaced is not None


def test_stored_changes_and_show_render_page(store):
    refs = history(store)
    first, second = store.stored_changes("prod/web", [(None, refs[0]), (refs[0], refs[1])])
    assert [o.kind for o in first.added] == ["Deployment", "Secret"]
    assert second.added == [] and [o.kind for o in second.changed] == ["Deployment"]
    assert second.images == [wit.ImageChange(wit.ObjectId("apps/v1", "Deployment", "prod", "web"),
                                             "app", "nginx:1.25", "nginx:1.26")]
    page = store.show_render_page("prod/web", refs[2], 1 << 20, 1)
    assert (page.objects, page.pages, page.start) == (2, 1, 0)
    by_kind = {o.id.kind: o for o in page.shown}
    assert "replicas: 3" in by_kind["Deployment"].text
    assert "***" in by_kind["Secret"].text and "dHdv" not in by_kind["Secret"].text
    as_json = store.show_render_page("prod/web", refs[2], 1 << 20, 1, form="json",
                                     secrets=wit.SecretValues.SHOWN)
    assert '"dHdv"' in {o.id.kind: o for o in as_json.shown}["Secret"].text


def test_authenticate_history_needs_a_keyring(store):
    history(store)
    with pytest.raises(rs.RenderStoreError) as e:
        store.authenticate_history("prod/web", False)
    assert e.value.kind == "invalid-input" and "keyring" in str(e.value)


def test_authenticate_history_on_an_encrypted_store(tmp_path: Path, runtime):
    keys = tmp_path / "keys"
    keys.write_text("k1 " + base64.b64encode(b"k" * 32).decode() + "\n")
    keys.chmod(0o600)
    plain = rs.open(f"file://{tmp_path / 's'}?create_dir=true", runtime)
    ref = plain.put_render("prod/web", [configmap("a")])
    plain.record_history("prod/web", render_ref=ref, synced_at=JAN_1, summary="plain")
    sealed = rs.open(f"file://{tmp_path / 's'}", runtime, encryption_keys=keys)
    (entry,) = sealed.read_history_entries(
        "prod/web", [e.key for e in sealed.list_history("prod/web")])
    assert isinstance(entry.value.trust, wit.EntryTrustUnauthenticated)
    assert sealed.authenticate_history("prod/web", True) == wit.AuthenticateReport(1, 0, [])
    (entry,) = sealed.list_history("prod/web")
    assert entry.authenticated == "k1"


def test_logic_functions(runtime):
    release = rs.Release("ns", "app")
    ref = rs.render_ref([configmap("a")])
    parsed = rs.parse_keys("ns/app", [f"ns/app/renders/{ref}",
                                      f"ns/app/history/20260101T000000.000000005Z-{ref}",
                                      "ns/app/other", f"other/app/renders/{ref}"])
    assert parsed == [wit.ParsedKeyRender(ref),
                      wit.ParsedKeyHistory(wit.HistoryKey(wit.SyncTime(JAN_1.seconds, 5), ref)),
                      None, None]
    assert isinstance(parsed[0], wit.ParsedKey) and parsed[0].tag == "render"
    assert rs.index_key(release) == "ns/app/index/v1"
    assert rs.defaults() == wit.PolicyDefaults(keep_history=10, gc_grace_seconds=600,
                                               gc_future_tolerance_seconds=300)
    assert rs.format_key_time(rs.SyncTime(JAN_1.seconds, 5)) == "20260101T000000.000000005Z"
    assert rs.parse_key_time("20260101T000000.000000005Z") == wit.SyncTime(JAN_1.seconds, 5)
    assert rs.format_synced_at_all([JAN_1, wit.SyncTime(0, 5)]) == [
        "2026-01-01T00:00:00Z", "1970-01-01T00:00:00.000000005Z"]
    canonical = rs.canonical([deployment("nginx"), configmap("a")])
    (deploy, cm) = rs.index_objects(canonical)
    assert deploy == wit.IndexedObject(wit.ObjectId("apps/v1", "Deployment", "prod", "web"),
                                       rs.sha256_hex(canonical.split(b"\n")[0]),
                                       ["docker.io/library/nginx:latest"])
    assert (cm.id.kind, cm.images) == ("ConfigMap", [])
    assert rs.render_images(canonical) == [wit.ImageUse(
        "docker.io/library/nginx:latest", deploy.id, "app")]
    stream = b'{"a":1}\n\n {"b":2}\n'
    assert rs.json_objects(stream) == [b'{"a":1}', b'{"b":2}']
    assert rs.json_object_ends(stream) == [10, len(stream)]
    rs.check_image_pattern("ghcr.io/org/*")
    assert rs.pin_decision(None, ref, True) == wit.Ok(None)
    assert rs.pin_decision("sha256:" + "1" * 64, ref, True) == wit.Ok("sha256:" + "1" * 64)
    decided = rs.pin_decision("sha256:" + "1" * 64, ref, False)
    assert isinstance(decided, wit.Err) and "no render store" in decided.value
    changes = rs.summarize_changes(b"", canonical)
    assert [o.kind for o in changes.added] == ["Deployment", "ConfigMap"]
    assert rs.word_bucket_message(wit.BucketMessageReadOnly(wit.CallAndKey("put", "a/b"))) == (
        'put "a/b": this bucket is read-only')
    assert rs.word_bucket_message(wit.BucketMessageNoBucket()) == "this call has no bucket"
    (key,) = rs.parse_keyring(b"# keys\nk1 " + base64.b64encode(b"s" * 32) + b"\n")
    assert (key.id, key.secret) == ("k1", b"s" * 32)
    assert "s" * 32 not in repr(key)  # key material is not printed
    # The same functions are methods of a Runtime, with its limits.
    assert runtime.index_key("ns/app") == "ns/app/index/v1"
    assert rs.Runtime(fuel=10_000_000_000).parse_keys(release, ["x"]) == [None]


def test_trace_functions():
    outcome = wit.OutcomeDeleteRelease(wit.Ok(1))
    assert rs.outcome_json(outcome) == '{"ok":{"deleted":1}}'
    assert json.loads(rs.outcome_json(wit.OutcomeGetRender(wit.Err(wit.ErrorNotFound("gone"))))) == {
        "error": {"kind": "not-found", "message": "gone"}}
    listed = wit.RecordedCallList(wit.ListCall(
        "prod/web/", wit.Ok([wit.ObjectMeta("prod/web/x", 3, wit.Instant(0, 0))])))
    trace = rs.write_trace(wit.OperationDeleteRelease(wit.Release("prod", "web")), [], False,
                           [listed], outcome)
    header, call, result = trace.splitlines()
    assert json.loads(header)["operation"] == "delete-release"
    assert json.loads(call) == {"call": "list", "key": "prod/web/", "answer": {"ok": [
        {"key": "prod/web/x", "size": 3, "modified": {"seconds": 0, "nanoseconds": 0}}]}}
    assert json.loads(result) == {"result": {"ok": {"deleted": 1}}}


def test_bad_arguments_are_refused_naming_them(store):
    history(store)
    # Before any call: the Python value is not what the WIT type asks.
    with pytest.raises(ValueError, match=r"blame_object argument secrets: expected one of masked, "
                                         r"shown, not \"all\""):
        store.blame_object("prod/web", "Deployment/web", secrets="all")
    with pytest.raises(ValueError, match=r"show_render_page argument page: expected a whole number "
                                        r"from 0 to 4294967295 \(a u32\), not -1"):
        store.show_render_page("prod/web", "sha256:" + "0" * 64, 100, -1)
    with pytest.raises(TypeError, match=r"show_render_page argument page_bytes: expected a whole "
                                        r"number from 0 to 18446744073709551615 \(a u64\), not "
                                        r"\"100\""):
        store.show_render_page("prod/web", "sha256:" + "0" * 64, "100", 1)
    with pytest.raises(TypeError, match=r"parse_keys argument keys: expected a list"):
        rs.parse_keys("ns/app", "ns/app/renders/x")
    with pytest.raises(ValueError, match=r"index_key argument release: expected NAMESPACE/NAME"):
        rs.index_key("no-slash")
    with pytest.raises(TypeError, match=r"render_objects argument refs\[1\]: expected a str"):
        store.render_objects("prod/web", ["sha256:" + "0" * 64, 7])
    # By the component: a value of the right type that its rules refuse.
    with pytest.raises(rs.RenderStoreError) as e:
        rs.index_key("Bad_NS/app")
    assert e.value.kind == "invalid-input" and "Bad_NS" in e.value.message
    with pytest.raises(rs.RenderStoreError) as e:
        store.render_objects("prod/web", ["sha256:nope"])
    assert e.value.kind == "invalid-input"
    with pytest.raises(rs.RenderStoreError) as e:
        rs.check_image_pattern("NGINX::")
    assert e.value.kind == "invalid-input" and "NGINX::" in e.value.message


def test_the_json_of_the_wit_types():
    entry = wit.HistoryEntry("ns/app/history/k", "sha256:r", wit.SyncTime(5, 6), "s",
                             wit.EntryTrustAuthenticated("k1"))
    encoded = entry.to_json()
    assert encoded == {"key": "ns/app/history/k", "renderRef": "sha256:r",
                       "syncedAt": {"seconds": 5, "nanoseconds": 6}, "summary": "s",
                       "trust": {"tag": "authenticated", "val": "k1"}}
    assert wit.HistoryEntry.from_json(json.loads(json.dumps(encoded))) == entry
    assert wit.EntryTrustUnchecked().to_json() == {"tag": "unchecked"}
    assert wit.EntryTrust.from_json({"tag": "unchecked"}) == wit.EntryTrustUnchecked()
    assert wit.ObjectForm.JSON.to_json() == "json"
    assert wit.ObjectForm.from_json("yaml") is wit.ObjectForm.YAML
    assert wit.SecretValues.MASKED == "masked"
    joined = wit.JoinedObjects(b"{}{}", [2, 4])
    assert joined.to_json() == {"bytes": "e317fQ==", "ends": [2, 4]}
    assert wit.JoinedObjects.from_json(joined.to_json()) == joined
    # An option field may be left out; a trailing run of them defaults to None.
    assert wit.HistoryPage.from_json({"entries": []}) == wit.HistoryPage([])
    assert wit.ReleaseRefs() == wit.ReleaseRefs(None, None, None, None)
    # Results, tuples and a u64 past 2^53, exactly.
    answer = wit.GetCall("k", wit.Ok(b"\x00\xff"))
    assert answer.to_json() == {"key": "k", "answer": {"tag": "ok", "val": "AP8="}}
    assert wit.GetCall.from_json(answer.to_json()) == answer
    meta = wit.ObjectMeta("k", (1 << 64) - 1, wit.Instant(-1, 999_999_999))
    assert wit.ObjectMeta.from_json(json.loads(json.dumps(meta.to_json()))) == meta


def test_the_json_of_the_wit_types_is_checked_naming_where():
    with pytest.raises(ValueError, match=r"value\.trust\.extra: no such field; the fields are "
                                         r"tag, val"):
        wit.HistoryEntry.from_json({"key": "k", "renderRef": "r",
                                    "syncedAt": {"seconds": 1, "nanoseconds": 0}, "summary": "",
                                    "trust": {"tag": "unchecked", "extra": 1}})
    with pytest.raises(ValueError, match=r"value\.render_ref: no such field; the fields are key, "
                                         r"renderRef, syncedAt, summary, trust"):
        wit.HistoryEntry.from_json({"render_ref": "r"})
    with pytest.raises(ValueError, match=r"page\.entries: expected an array"):
        wit.HistoryPage.from_json({"entries": None}, "page")
    with pytest.raises(ValueError, match=r"value\.tag: expected one of render, history, not \"x\""):
        wit.ParsedKey.from_json({"tag": "x"})
    with pytest.raises(ValueError, match=r"value\.bytes: expected a base64 string of bytes"):
        wit.JoinedObjects.from_json({"bytes": "!!", "ends": []})
    with pytest.raises(ValueError, match=r"value\.nanoseconds: expected a whole number from 0 to "
                                         r"4294967295 \(a u32\), not -1"):
        wit.SyncTime.from_json({"seconds": 0, "nanoseconds": -1})
    with pytest.raises(ValueError, match=r"value: expected one of yaml, json, not \"xml\""):
        wit.ObjectForm.from_json("xml")
    with pytest.raises(TypeError, match=r"ReleaseRefs\.pin: expected a str, not 3"):
        wit.ReleaseRefs(pin=3).to_json()  # type: ignore[arg-type]


def test_every_export_has_a_python_function():
    """Each ``rs_call_*`` entry point (one per export) has its function: a store export a
    method of RenderStore, the others functions of the package and, but for the
    controller's rules and ``replay``, methods of Runtime."""
    for c_name in _calls.STORE_CALLS:
        name = c_name[len("rs_call_store_"):]
        assert callable(getattr(rs.RenderStore, name, None)), c_name
    module_only = {"effective_keep_history", "history_count", "protected_refs", "replay"}
    for c_name in _calls.RUNTIME_CALLS:
        name = c_name.split("_", 3)[3]
        assert callable(getattr(rs, name, None)), c_name
        assert name in module_only or callable(getattr(rs.Runtime, name, None)), c_name
    for name in rs._api.__all__:
        assert name in rs.__all__ and getattr(rs, name) is getattr(rs._api, name)
