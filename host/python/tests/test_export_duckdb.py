"""``render-store export -o ndjson`` loaded into DuckDB, as users would load it: the
query gives the same answer as ``render-store images``."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

import render_store as rs


def deployment(name: str, images: list) -> bytes:
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"template": {"spec": {"containers": containers}}},
    }).encode()


def test_an_export_in_duckdb_answers_as_images_does(cli, tmp_path: Path) -> None:
    root = tmp_path / "store"
    syncs = {
        rs.Release("prod", "web"): [["nginx:1.25"], ["nginx:1.26", "envoyproxy/envoy:v1.31"]],
        rs.Release("prod", "api"): [["ghcr.io/org/api:v1"], ["ghcr.io/org/api:v2"]],
        rs.Release("dev", "web"): [["nginx:1.26"]],
    }
    with rs.open(f"file://{root}?create_dir=true") as store:
        for release, renders in syncs.items():
            for day, images in enumerate(renders, start=1):
                ref = store.put_render(release, [deployment(release.name, images)])
                store.record_history(release, render_ref=ref, synced_at=f"2026-11-0{day}T00:00:00Z",
                                     summary=f"sync {day}")
    export = tmp_path / "fleet.ndjson"
    export.write_text(cli.text("export", "-o", "ndjson", store=root))
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    assert len(rows) == 5 and {r["kind"] for r in rows} == {"Deployment"}

    query = f"""
        select distinct image, namespace, name
        from (select namespace, name, unnest(images) as image from read_json_auto('{export}'))
        where image like '%nginx%'
        order by image, namespace, name
    """
    from_duckdb = [tuple(r) for r in duckdb.sql(query).fetchall()]
    images = cli.json("images", "nginx", store=root)
    from_images = sorted({(i["image"], i["namespace"], i["name"]) for i in images["images"]})
    assert from_duckdb == from_images == [
        ("docker.io/library/nginx:1.25", "prod", "web"),
        ("docker.io/library/nginx:1.26", "dev", "web"),
        ("docker.io/library/nginx:1.26", "prod", "web"),
    ]
    # The newest entry of each release, by the export's place (0 the newest).
    newest = duckdb.sql(f"""
        select namespace, name, list_sort(list(distinct i)) from (
            select namespace, name, unnest(images) as i from read_json_auto('{export}')
            where entry = 0)
        group by namespace, name order by namespace, name
    """).fetchall()
    assert [tuple(r) for r in newest] == [
        ("dev", "web", ["docker.io/library/nginx:1.26"]),
        ("prod", "api", ["ghcr.io/org/api:v2"]),
        ("prod", "web", ["docker.io/envoyproxy/envoy:v1.31", "docker.io/library/nginx:1.26"]),
    ]
