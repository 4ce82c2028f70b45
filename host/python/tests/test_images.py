"""``RenderStore.images``: where each image ran and when, through the C library, on a
store the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import render_store as rs

WEB = rs.Release("prod", "web")


def deployment(image: str) -> bytes:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}},
    }).encode()


def test_images_says_where_and_when_an_image_ran(tmp_path: Path) -> None:
    with rs.open(f"file://{tmp_path / 'store'}?create_dir=true") as store:
        for day, image in [(1, "nginx:1.25"), (2, "nginx:1.26")]:
            ref = store.put_render(WEB, [deployment(image)])
            store.record_history(WEB, render_ref=ref, synced_at=f"2026-11-0{day}T00:00:00Z",
                                 summary=image)
        found = store.images("nginx")
        assert found.complete and not found.unread and not found.unlisted
        assert [(i.image, i.release, i.until is None) for i in found.intervals] == [
            ("docker.io/library/nginx:1.25", WEB, False),
            ("docker.io/library/nginx:1.26", WEB, True),
        ]
        first = found.intervals[0]
        assert first.since == store.runtime.parse_synced_at("2026-11-01T00:00:00Z")
        assert first.until == found.intervals[1].since
        later = store.images("nginx", since="2026-11-03T00:00:00Z")
        assert [i.image for i in later.intervals] == ["docker.io/library/nginx:1.26"]
        assert store.images("redis", namespace="prod").intervals == []
        with pytest.raises(rs.RenderStoreError, match="image pattern"):
            store.images("nginx:")


def test_blame_names_the_entry_that_last_changed_a_field(tmp_path: Path) -> None:
    with rs.open(f"file://{tmp_path / 'store'}?create_dir=true") as store:
        for day, image in [(1, "nginx:1.25"), (2, "nginx:1.26")]:
            ref = store.put_render(WEB, [deployment(image)])
            store.record_history(WEB, render_ref=ref, synced_at=f"2026-11-0{day}T00:00:00Z",
                                 summary=image)
        b = store.blame(WEB, "deployment/web")
        by_path = {f.path: f for f in b.fields}
        image = by_path["spec.template.spec.containers[name=web].image"]
        assert (image.entry, image.summary, image.value) == (0, "nginx:1.26", '"nginx:1.26"')
        assert by_path["metadata.name"].entry == 1
        assert b.object.kind == "Deployment" and b.newest == 0
        with pytest.raises(rs.RenderStoreError) as gone:
            store.blame(WEB, "deployment/gone")
        assert gone.value.kind == "not-found"


def test_changes_lists_what_each_entry_changed(tmp_path: Path) -> None:
    with rs.open(f"file://{tmp_path / 'store'}?create_dir=true") as store:
        for day, image in [(1, "nginx:1.25"), (2, "nginx:1.26")]:
            ref = store.put_render(WEB, [deployment(image)])
            store.record_history(WEB, render_ref=ref, synced_at=f"2026-11-0{day}T00:00:00Z",
                                 summary=image)
        found = store.changes(since="2026-11-01T00:00:00Z")
        assert found["complete"] and [e["summary"] for e in found["entries"]] == ["nginx:1.26", "nginx:1.25"]
        bump = found["entries"][0]
        assert [(i["old"], i["new"]) for i in bump["images"]] == [("nginx:1.25", "nginx:1.26")]
        assert found["entries"][1]["previousRenderRef"] is None
        assert len(store.changes(since="2026-11-02T00:00:00Z")["entries"]) == 1


def test_index_release_builds_the_index_images_reads(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with rs.open(f"file://{root}?create_dir=true") as store:
        for day, image in [(1, "nginx:1.25"), (2, "nginx:1.26")]:
            ref = store.put_render(WEB, [deployment(image)])
            store.record_history(WEB, render_ref=ref, synced_at=f"2026-11-0{day}T00:00:00Z",
                                 summary=image)
        before = store.images()
        report = store.index_release(WEB)
        assert (report.release, report.renders, report.read, report.indexed) == (WEB, 2, 2, 2)
        assert report.written and report.replaced is None and not report.unreadable
        assert (root / "prod/web/index/v1").is_file()
        again = store.reindex()
        assert again.complete and [r.release for r in again.releases] == [WEB]
        assert again.releases[0].read == 0 and not again.releases[0].written
        # With every render moved away, the index alone answers as the renders did.
        (root / "prod/web/renders").rename(tmp_path / "aside")
        assert store.images() == before
        with pytest.raises(rs.RenderStoreError) as bad:
            store.index_release(rs.Release("prod", "Web"))
        assert bad.value.kind == "invalid-input"
