//! `render-store images`: where each image ran across the fleet and when, as the
//! histories the test writes say, through the CLI as users run it: image bumps, a
//! rollback (which adds no entry), a removed workload, Lists, CronJobs and init
//! containers; patterns, windows, JSON; and a release that cannot be read is named and
//! makes the answer partial, never "not anywhere".

use super::cli::Cli;
use serde_json::Value;
use std::collections::BTreeSet;

fn deployment(name: &str, images: &[(&str, &str)], init: &[(&str, &str)]) -> String {
    let list = |cs: &[(&str, &str)]| {
        cs.iter()
            .map(|(n, i)| format!(r#"{{"name":"{n}","image":"{i}"}}"#))
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},"spec":{{"template":{{"spec":{{"containers":[{}],"initContainers":[{}]}}}}}}}}"#,
        list(images),
        list(init)
    )
}

fn cronjob(name: &str, image: &str) -> String {
    format!(
        r#"{{"apiVersion":"batch/v1","kind":"CronJob","metadata":{{"name":"{name}"}},"spec":{{"jobTemplate":{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"job","image":"{image}"}}]}}}}}}}}}}}}"#
    )
}

fn list_of(items: &[String]) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{}]}}"#,
        items.join(",")
    )
}

/// Puts `objects` (one JSON object each) as a render of `release` and records it at
/// `at`; returns its renderRef.
fn sync(cli: &Cli, release: &str, file: &str, objects: &[String], at: &str) -> String {
    let path = cli.object(file, &objects.join("\n"));
    let r = cli.ok(&["put", release, &path]).trim().to_string();
    cli.ok(&["record", release, &r, "--synced-at", at, "--summary", file]);
    r
}

/// The JSON rows as (image, release, from, until).
fn rows(json: &str) -> Vec<(String, String, String, Option<String>)> {
    let v: Value = serde_json::from_str(json).unwrap();
    v["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["image"].as_str().unwrap().to_string(),
                format!(
                    "{}/{}",
                    r["namespace"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                ),
                r["from"].as_str().unwrap().to_string(),
                r["until"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn row(
    image: &str,
    release: &str,
    from: &str,
    until: Option<&str>,
) -> (String, String, String, Option<String>) {
    (
        image.to_string(),
        release.to_string(),
        from.to_string(),
        until.map(str::to_string),
    )
}

const NGINX_125: &str = "docker.io/library/nginx:1.25";
const NGINX_126: &str = "docker.io/library/nginx:1.26";

/// A fleet of three releases: prod/web bumps nginx and rolls back; prod/jobs is a List
/// with a CronJob whose workload is removed later; dev/web runs an init container.
/// Returns the renderRefs of prod/web's first render and of dev/web's.
fn fleet(cli: &Cli) -> (String, String) {
    let web = |tag: &str| vec![deployment("web", &[("web", &format!("nginx:{tag}"))], &[])];
    let v125 = sync(
        cli,
        "prod/web",
        "web-1.25.json",
        &web("1.25"),
        "2026-11-01T00:00:00Z",
    );
    sync(
        cli,
        "prod/web",
        "web-1.26.json",
        &web("1.26"),
        "2026-11-10T00:00:00Z",
    );
    // The rollback: the render is recorded already, so no entry is added.
    let back = cli.ok(&[
        "record",
        "prod/web",
        &v125,
        "--synced-at",
        "2026-11-20T00:00:00Z",
    ]);
    assert!(back.contains("already recorded as @1"), "{back}");

    let jobs = |with_cron: bool| {
        let mut items = vec![deployment("api", &[("api", "ghcr.io/org/api:v1")], &[])];
        if with_cron {
            items.push(cronjob("nightly", "ghcr.io/org/backup:v3"));
        }
        vec![list_of(&items)]
    };
    sync(
        cli,
        "prod/jobs",
        "jobs-1.json",
        &jobs(true),
        "2026-11-02T00:00:00Z",
    );
    sync(
        cli,
        "prod/jobs",
        "jobs-2.json",
        &jobs(false),
        "2026-11-12T00:00:00Z",
    );

    let dev = vec![deployment(
        "web",
        &[("web", "nginx:1.26")],
        &[(
            "migrate",
            "ghcr.io/org/migrate@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        )],
    )];
    let dev_ref = sync(cli, "dev/web", "dev.json", &dev, "2026-11-05T00:00:00Z");
    (v125, dev_ref)
}

#[test]
fn images_answers_where_and_when_each_image_ran() {
    let cli = Cli::validating();
    let (_, dev_ref) = fleet(&cli);

    let all = rows(&cli.ok(&["images", "-o", "json"]));
    let images: BTreeSet<&str> = all.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        images,
        [
            NGINX_125,
            NGINX_126,
            "ghcr.io/org/api:v1",
            "ghcr.io/org/backup:v3",
            "ghcr.io/org/migrate@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ]
        .into_iter()
        .collect()
    );
    // nginx: prod/web ran 1.25 until the bump, 1.26 since (the rollback recorded no
    // entry, so the history says 1.26 still); dev/web runs 1.26.
    assert_eq!(
        rows(&cli.ok(&["images", "nginx", "-o", "json"])),
        [
            row(
                NGINX_125,
                "prod/web",
                "2026-11-01T00:00:00Z",
                Some("2026-11-10T00:00:00Z")
            ),
            row(NGINX_126, "dev/web", "2026-11-05T00:00:00Z", None),
            row(NGINX_126, "prod/web", "2026-11-10T00:00:00Z", None),
        ]
    );
    // The CronJob of a List, gone with the second sync.
    assert_eq!(
        rows(&cli.ok(&["images", "ghcr.io/org/backup", "-o", "json"])),
        [row(
            "ghcr.io/org/backup:v3",
            "prod/jobs",
            "2026-11-02T00:00:00Z",
            Some("2026-11-12T00:00:00Z")
        )]
    );
    // A digest alone finds the init container's image, with the render that holds it.
    let by_digest: Value = serde_json::from_str(&cli.ok(&[
        "images",
        "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(by_digest["images"][0]["name"], "web");
    assert_eq!(
        by_digest["images"][0]["renderRefs"],
        serde_json::json!([dev_ref])
    );
    assert_eq!(by_digest["complete"], true);
    // A tag, a glob, a namespace.
    assert_eq!(
        rows(&cli.ok(&["images", "nginx:1.25", "-o", "json"])).len(),
        1
    );
    assert_eq!(
        rows(&cli.ok(&["images", "ghcr.io/org/*", "-o", "json"])).len(),
        3
    );
    assert_eq!(
        rows(&cli.ok(&["images", "nginx", "-n", "dev", "-o", "json"])),
        [row(NGINX_126, "dev/web", "2026-11-05T00:00:00Z", None)]
    );
    // A window keeps the intervals that meet it.
    assert_eq!(
        rows(&cli.ok(&[
            "images",
            "nginx",
            "--since",
            "2026-11-11",
            "--until",
            "2026-11-30",
            "-o",
            "json"
        ]))
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str()))
        .collect::<Vec<_>>(),
        [(NGINX_126, "dev/web"), (NGINX_126, "prod/web")]
    );
    assert!(rows(&cli.ok(&["images", "nginx", "--until", "2026-11-01", "-o", "json"])).is_empty());

    // The table for people: a header, one row an interval, the open ones marked.
    let table = cli.ok(&["images", "nginx"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("IMAGE") && lines[0].contains("UNTIL"),
        "{table}"
    );
    assert_eq!(lines.len(), 4, "{table}");
    assert_eq!(table.matches("(newest)").count(), 2, "{table}");

    // Bad patterns and times are clear errors.
    for (args, says) in [
        (&["images", "nginx:"][..], "image pattern"),
        (&["images", "@sha256:xyz"], "image pattern"),
        (&["images", "--since", "yesterday"], "--since"),
        (
            &["images", "--since", "2026-12-02", "--until", "2026-12-01"],
            "--until",
        ),
    ] {
        let err = cli.fails(args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn a_release_that_cannot_be_read_makes_the_answer_partial() {
    let cli = Cli::validating();
    let (v125, _) = fleet(&cli);
    // prod/web's first render damaged outside the store, with no index naming it (as a
    // controller that does not keep the index leaves a release: an index answers for
    // a render damaged after it was indexed, and `verify` reports the damage).
    let blob = cli.store_dir().join("prod/web/renders").join(&v125);
    std::fs::write(&blob, b"{\"kind\":\"forged\"}\n").unwrap();
    std::fs::remove_file(cli.store_dir().join("prod/web/index/v1")).unwrap();
    let out = cli.run(&["images", "nginx", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "partial: exit status 1");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("could not read prod/web") && stderr.contains("verify prod/web"),
        "{stderr}"
    );
    // What could be read is still answered, and the JSON says what could not.
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["complete"], false);
    assert_eq!(answer["unread"][0]["name"], "web");
    assert_eq!(answer["unread"][0]["namespace"], "prod");
    let found = rows(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        found,
        [row(NGINX_126, "dev/web", "2026-11-05T00:00:00Z", None)]
    );
}

/// `export -o ndjson`: a row for each object of each entry, with the entry's place,
/// time, summary and render, the object's hash and images; a release that cannot be read
/// writes no row, is named, and makes the exit status 1.
#[test]
fn export_writes_a_row_for_each_object_of_each_entry() {
    let cli = Cli::validating();
    let (v125, _) = fleet(&cli);
    let rows = |out: &[u8]| -> Vec<Value> {
        String::from_utf8_lossy(out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = rows(cli.ok(&["export", "-o", "ndjson"]).as_bytes());
    // prod/web: 2 entries of 1 object; prod/jobs: 2 of 1 List; dev/web: 1.
    assert_eq!(all.len(), 5, "{all:?}");
    let web: Vec<&Value> = all
        .iter()
        .filter(|r| r["namespace"] == "prod" && r["name"] == "web")
        .collect();
    assert_eq!(
        web.iter()
            .map(|r| r["entry"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 0]
    );
    assert_eq!(web[0]["renderRef"], v125.as_str());
    assert_eq!(web[0]["images"], serde_json::json!([NGINX_125]));
    assert_eq!(web[0]["summary"], "web-1.25.json");
    assert_eq!(web[0]["kind"], "Deployment");
    assert_eq!(web[0]["objectHash"].as_str().unwrap().len(), 64);
    // A window keeps the entries synced in it.
    let recent = rows(cli.ok(&["export", "--since", "2026-11-06"]).as_bytes());
    assert_eq!(recent.len(), 2, "{recent:?}");
    // -n limits to a namespace; -o json is refused, saying what to give.
    assert_eq!(rows(cli.ok(&["export", "-n", "dev"]).as_bytes()).len(), 1);
    assert!(cli.fails(&["export", "-o", "json"]).contains("-o ndjson"));

    // A damaged render no index names.
    let blob = cli.store_dir().join("prod/web/renders").join(&v125);
    std::fs::write(&blob, b"{\"kind\":\"forged\"}\n").unwrap();
    std::fs::remove_file(cli.store_dir().join("prod/web/index/v1")).unwrap();
    let out = cli.run(&["export"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("could not export prod/web"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = rows(&out.stdout);
    assert_eq!(left.len(), 3, "prod/web writes no row: {left:?}");
    assert!(
        left.iter()
            .all(|r| r["name"] != "web" || r["namespace"] != "prod")
    );
}
