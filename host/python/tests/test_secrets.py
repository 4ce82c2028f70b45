"""Secret values stay out of the views made for people: ``diff_renders``,
``show_objects`` and ``RenderStore.diff_renders`` ask the component to mask them unless
the caller passes ``show_secrets=True``; ``get_render`` is the blob as stored. The masking
itself is the component's; what is checked here is what the package asks for."""

from __future__ import annotations

import json

import pytest

import render_store as rs
from conftest import SECRET_VALUES, secret_renders

DB = rs.Release("prod", "db")
VALUES = list(SECRET_VALUES.values())


def diff_text(diff: rs.RenderDiff) -> str:
    return "\n".join("\n".join(c.lines) for c in diff.changed)


def objects_text(shown) -> str:
    return "\n".join(o.text for o in shown)


def assert_masked(what: str, text: str) -> None:
    shown = [v for v in VALUES if v in text]
    assert not shown, f"{what} shows {shown}:\n{text}"


@pytest.fixture
def stored(runtime):
    """A memory store holding both renders: (store, old, new, old_ref, new_ref)."""
    old, new = secret_renders()
    store = rs.RenderStore(rs.MemoryBucket(), runtime)
    return store, old, new, store.put_render(DB, old), store.put_render(DB, new)


def test_diffs_mask_secret_values_by_default_and_say_which_changed(runtime, stored):
    store, old, new, old_ref, new_ref = stored
    a, b = runtime.canonical(old), runtime.canonical(new)
    diffs = {
        "Runtime.diff_renders": runtime.diff_renders(a, b),
        "Runtime.diff_renders yaml": runtime.diff_renders(a, b, "yaml"),
        "show_secrets=False": runtime.diff_renders(a, b, show_secrets=False),
        "rs.diff_renders": rs.diff_renders(a, b),
        "RenderStore.diff_renders": store.diff_renders(DB, old_ref, new_ref),
    }
    for what, diff in diffs.items():
        assert [(c.id.kind, c.id.name) for c in diff.changed] == [
            ("Secret", "db"), ("Secret", "applied"), ("ConfigMap", "settings")], what
        assert diff.unchanged == 1, what
        assert_masked(what, diff_text(diff))
        db, applied, settings = (c.lines for c in diff.changed)
        # kubectl diff's markers: a changed data and stringData value, an unchanged one.
        for line in ["-  password: '*** (before)'", "+  password: '*** (after)'", "   user: '***'",
                     "-  token: '*** (before)'", "+  token: '*** (after)'"]:
            assert line in db, f"{what}: no {line!r} in\n" + "\n".join(db)
        # A change inside the annotation alone is still a change, and shows no value.
        assert any(l.startswith("-") and '"password":"*** (before)"' in l for l in applied), applied
        assert any(l.startswith("+") and '"password":"*** (after)"' in l for l in applied), applied
        # Only Secrets are masked.
        assert "-  mode: blue" in settings and "+  mode: green" in settings, settings
        assert diff == diffs["Runtime.diff_renders"], what
    # The positional form keeps working, masked too.
    as_json = runtime.diff_renders(a, b, "json")
    assert_masked("diff_renders json", diff_text(as_json))
    assert '-    "password": "*** (before)",' in as_json.changed[0].lines
    assert store.diff_renders(DB, old_ref, new_ref, "json") == as_json
    assert store.diff_renders(DB, old_ref, new_ref, form="json", show_secrets=False) == as_json


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_show_secrets_shows_the_values_in_every_diff(runtime, stored, form):
    store, old, new, old_ref, new_ref = stored
    a, b = runtime.canonical(old), runtime.canonical(new)
    diffs = {
        "Runtime.diff_renders": runtime.diff_renders(a, b, form, show_secrets=True),
        "rs.diff_renders": rs.diff_renders(a, b, form, show_secrets=True),
        "RenderStore.diff_renders": store.diff_renders(DB, old_ref, new_ref, form, show_secrets=True),
    }
    changed = [SECRET_VALUES[k] for k in ("password_before", "password_after", "user", "token_before",
                                          "token_after", "applied_before", "applied_after")]
    for what, diff in diffs.items():
        text = diff_text(diff)
        assert [v for v in changed if v not in text] == [], f"{what} hides values:\n{text}"
        assert "***" not in text, f"{what} masks:\n{text}"
        assert diff == diffs["Runtime.diff_renders"], what
    assert diffs["Runtime.diff_renders"] != runtime.diff_renders(a, b, form)


def test_show_objects_masks_secret_values_unless_asked_and_the_stored_render_is_the_blob(runtime, stored):
    store, _, new, _, new_ref = stored
    canonical = runtime.canonical(new)
    for form in ("yaml", "json"):
        masked = runtime.show_objects(canonical, form)
        assert [o.id.name for o in masked] == ["db", "applied", "tls", "settings"]
        assert_masked(f"show_objects {form}", objects_text(masked))
        # One render has no before and after: every value is `***`.
        assert "(before)" not in objects_text(masked) and "(after)" not in objects_text(masked)
        assert runtime.show_objects(canonical, form, show_secrets=False) == masked
        assert rs.show_objects(canonical, form) == masked
        assert ("mode: green" if form == "yaml" else '"mode": "green"') in objects_text(masked)
    yaml = runtime.show_objects(canonical)
    assert "password: '***'" in yaml[0].text and "token: '***'" in yaml[0].text, yaml[0].text
    assert '"password":"***"' in yaml[1].text, yaml[1].text
    assert "tls.key: '***'" in yaml[2].text, yaml[2].text

    for shown in (runtime.show_objects(canonical, show_secrets=True),
                  rs.show_objects(canonical, "yaml", show_secrets=True)):
        text = objects_text(shown)
        wanted = [SECRET_VALUES[k] for k in ("password_after", "user", "token_after", "applied_after",
                                             "applied_data", "tls")]
        assert [v for v in wanted if v not in text] == [], text
        assert "***" not in text, text

    # get_render and the bucket keep the bytes as they were put, values and all, after
    # masked views of them.
    store.diff_renders(DB, new_ref, new_ref)
    blob = store.get_render(DB, new_ref)
    assert blob == canonical == store.bucket.get(runtime.render_key(DB, new_ref))
    for key in ("password_after", "user", "token_after", "applied_after", "tls"):
        assert SECRET_VALUES[key].encode() in blob, key


@pytest.mark.parametrize("bad", ["true", "False", 1, 0, None])
def test_only_a_bool_chooses_and_only_true_shows(runtime, stored, bad):
    store, old, new, old_ref, new_ref = stored
    a, b = runtime.canonical(old), runtime.canonical(new)
    calls = {
        "Runtime.diff_renders": lambda: runtime.diff_renders(a, b, show_secrets=bad),
        "Runtime.show_objects": lambda: runtime.show_objects(b, show_secrets=bad),
        "rs.diff_renders": lambda: rs.diff_renders(a, b, show_secrets=bad),
        "rs.show_objects": lambda: rs.show_objects(b, show_secrets=bad),
        "RenderStore.diff_renders": lambda: store.diff_renders(DB, old_ref, new_ref, show_secrets=bad),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError) as e:
            call()
        assert "show_secrets: expected True or False" in str(e.value), what


def test_show_secrets_is_keyword_only(runtime, stored):
    store, old, new, old_ref, new_ref = stored
    a, b = runtime.canonical(old), runtime.canonical(new)
    with pytest.raises(TypeError):
        runtime.diff_renders(a, b, "yaml", True)  # type: ignore[misc]
    with pytest.raises(TypeError):
        runtime.show_objects(b, "yaml", True)  # type: ignore[misc]
    with pytest.raises(TypeError):
        store.diff_renders(DB, old_ref, new_ref, "yaml", True)  # type: ignore[misc]
    with pytest.raises(TypeError):
        rs.diff_renders(a, b, "yaml", True)  # type: ignore[misc]


def test_secrets_in_lists_are_masked_in_every_view(runtime):
    """A Secret in a SecretList (its items name no kind, as the API server writes them)
    inside a List: masked in diffs and shown objects, in both forms."""
    def listed(password: str) -> bytes:
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "SecretList",
             "items": [{"metadata": {"name": "listed", "namespace": "prod"},
                        "data": {"password": password}}]}]}).encode()

    before, after = "bGlzdGVkLW9sZA==", "bGlzdGVkLW5ldw=="
    old = runtime.canonical([listed(before)])
    new = runtime.canonical([listed(after)])
    for form in ("yaml", "json"):
        diff = diff_text(runtime.diff_renders(old, new, form))
        assert before not in diff and after not in diff, diff
        assert "*** (before)" in diff and "*** (after)" in diff, diff
        shown = objects_text(runtime.show_objects(new, form))
        assert after not in shown and "***" in shown, shown
    assert after in objects_text(runtime.show_objects(new, "yaml", show_secrets=True))
