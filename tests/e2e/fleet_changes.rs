//! `render-store changes`: the fleet's history entries in a window of time, newest
//! first, each with what changed against the entry before it in its release. The test
//! writes a store of three releases (image bumps, a removed workload, a rollback, a
//! CronJob, a List, Secret value changes) and checks the command's text and JSON
//! against what it computes from what it wrote.

use super::cli::Cli;
use serde_json::{Value, json};

const P1: &str = "aHVudGVyMi1maXJzdA==";
const P2: &str = "aHVudGVyMi1zZWNvbmQ=";
const S1: &str = "czNjcmV0LW9uZQ==";
const S2: &str = "czNjcmV0LXR3bw==";
/// Every Secret value the store holds, and the text they encode: none may be printed.
const VALUES: [&str; 7] = [P1, P2, S1, S2, "YWRtaW4=", "hunter2", "s3cret"];

fn web(image: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web","namespace":"prod"}},"spec":{{"template":{{"spec":{{"initContainers":[{{"name":"migrate","image":"migrate:1"}}],"containers":[{{"name":"app","image":"{image}"}}]}}}}}}}}"#
    )
}
const SERVICE: &str = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"prod"},"spec":{"ports":[{"port":80}]}}"#;
fn secret(password: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"web-db","namespace":"prod"}},"data":{{"password":"{password}","user":"YWRtaW4="}}}}"#
    )
}
const WORKER: &str = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"worker","namespace":"prod"},"spec":{"template":{"spec":{"containers":[{"name":"worker","image":"worker:7"}]}}}}"#;
fn cronjob(image: &str) -> String {
    format!(
        r#"{{"apiVersion":"batch/v1","kind":"CronJob","metadata":{{"name":"nightly","namespace":"prod"}},"spec":{{"schedule":"@daily","jobTemplate":{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"job","image":"{image}"}}]}}}}}}}}}}}}"#
    )
}
fn list(image: &str, value: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{{"name":"db","namespace":"staging"}},"spec":{{"template":{{"spec":{{"containers":[{{"name":"pg","image":"{image}"}}]}}}}}}}},{{"apiVersion":"v1","kind":"SecretList","items":[{{"metadata":{{"name":"creds","namespace":"staging"}},"data":{{"k":"{value}"}}}}]}}]}}"#
    )
}

/// An object as the test names it: apiVersion, kind, namespace, name.
type Id = (&'static str, &'static str, &'static str, &'static str);

const WEB: Id = ("apps/v1", "Deployment", "prod", "web");
const SVC: Id = ("v1", "Service", "prod", "web");
const DB: Id = ("v1", "Secret", "prod", "web-db");
const WRK: Id = ("apps/v1", "Deployment", "prod", "worker");
const CRON: Id = ("batch/v1", "CronJob", "prod", "nightly");
const LIST: Id = ("v1", "List", "", "");
const STS: Id = ("apps/v1", "StatefulSet", "staging", "db");
const CREDS: Id = ("v1", "Secret", "staging", "creds");

/// An entry the command should print, as the test worked it out.
struct Expected {
    release: &'static str,
    entry: u32,
    at: &'static str,
    summary: &'static str,
    render: String,
    previous: Option<String>,
    added: Vec<Id>,
    removed: Vec<Id>,
    changed: Vec<Id>,
    images: Vec<(Id, &'static str, Option<&'static str>, Option<&'static str>)>,
    secret_keys: Vec<(Id, &'static str)>,
}

fn place(id: &Id) -> String {
    let name = if id.3.is_empty() { "(no name)" } else { id.3 };
    if id.2.is_empty() {
        format!("{} {name}", id.1)
    } else {
        format!("{} {}/{name}", id.1, id.2)
    }
}

fn id_json(id: &Id) -> Value {
    json!({"apiVersion": id.0, "kind": id.1, "namespace": id.2, "name": id.3})
}

impl Expected {
    fn text(&self) -> String {
        let mut out = format!(
            "{} @{} {} {}\n",
            self.release, self.entry, self.at, self.summary
        );
        for (mark, ids) in [
            ("+", &self.added),
            ("-", &self.removed),
            ("~", &self.changed),
        ] {
            for id in ids {
                out.push_str(&format!("  {mark} {}\n", place(id)));
            }
        }
        for (id, container, old, new) in &self.images {
            out.push_str(&format!(
                "  image {container} ({}): {} → {}\n",
                place(id),
                old.unwrap_or("(none)"),
                new.unwrap_or("(none)")
            ));
        }
        for (id, key) in &self.secret_keys {
            out.push_str(&format!("  secret key changed: {} {key}\n", place(id)));
        }
        out
    }

    fn json(&self) -> Value {
        let (namespace, name) = self.release.split_once('/').unwrap();
        let ids = |ids: &[Id]| ids.iter().map(id_json).collect::<Vec<_>>();
        json!({
            "namespace": namespace,
            "name": name,
            "entry": self.entry,
            "syncedAt": self.at,
            "summary": self.summary,
            "renderRef": self.render,
            "previousRenderRef": self.previous,
            "added": ids(&self.added),
            "removed": ids(&self.removed),
            "changed": ids(&self.changed),
            "images": self.images.iter().map(|(id, container, old, new)| json!({
                "object": id_json(id), "container": container, "old": old, "new": new,
            })).collect::<Vec<_>>(),
            "secretKeys": self.secret_keys.iter().map(|(id, key)| json!({
                "secret": id_json(id), "key": key,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Stores a render (JSON objects, one a line) for `release`; its renderRef.
fn put(cli: &Cli, release: &str, file: &str, objects: &[&str]) -> String {
    let path = cli.object(file, &(objects.join("\n") + "\n"));
    cli.ok(&["put", release, &path]).trim().to_string()
}

fn record(cli: &Cli, release: &str, render: &str, summary: &str, at: &str) {
    let out = cli.ok(&[
        "record",
        release,
        render,
        "--summary",
        summary,
        "--synced-at",
        at,
    ]);
    assert!(out.contains("recorded"), "{out}");
}

/// Writes the fleet and returns every entry `changes` should list for it, newest first.
fn fleet(cli: &Cli) -> Vec<Expected> {
    let (w1, w2, w3) = (web("web:1.0"), web("web:1.1"), web("web:1.2"));
    let (s1, s2) = (secret(P1), secret(P2));
    let v1 = put(cli, "prod/web", "v1.json", &[&w1, SERVICE, &s1, WORKER]);
    let v2 = put(cli, "prod/web", "v2.json", &[&w2, SERVICE, &s2, WORKER]);
    let v3 = put(cli, "prod/web", "v3.json", &[&w3, SERVICE, &s2]);
    record(cli, "prod/web", &v1, "v1", "2026-11-01T00:00:00Z");
    record(cli, "prod/web", &v2, "v2", "2026-11-02T00:00:00Z");
    record(
        cli,
        "prod/web",
        &v3,
        "v3 without the worker",
        "2026-11-03T00:00:00Z",
    );
    // A rollback to v1 once its old entry is gone (as GC leaves a history): recorded
    // anew, and compared with v3, the entry before it.
    cli.ok(&["delete-entry", "prod/web", "@2"]);
    record(
        cli,
        "prod/web",
        &v1,
        "rollback to v1",
        "2026-11-04T00:00:00Z",
    );

    let j1 = put(cli, "prod/jobs", "j1.json", &[&cronjob("batch:1")]);
    let j2 = put(cli, "prod/jobs", "j2.json", &[&cronjob("batch:2")]);
    record(cli, "prod/jobs", &j1, "jobs 1", "2026-11-02T12:00:00Z");
    record(cli, "prod/jobs", &j2, "jobs 2", "2026-11-03T12:00:00Z");

    let l1 = put(cli, "staging/lists", "l1.json", &[&list("pg:15", S1)]);
    let l2 = put(cli, "staging/lists", "l2.json", &[&list("pg:16", S2)]);
    record(cli, "staging/lists", &l1, "lists 1", "2026-11-01T06:00:00Z");
    record(cli, "staging/lists", &l2, "lists 2", "2026-11-03T06:00:00Z");

    let none = Vec::new;
    vec![
        Expected {
            release: "prod/web",
            entry: 0,
            at: "2026-11-04T00:00:00Z",
            summary: "rollback to v1",
            render: v1.clone(),
            previous: Some(v3.clone()),
            added: vec![WRK],
            removed: none(),
            changed: vec![WEB, DB],
            images: vec![
                (WEB, "app", Some("web:1.2"), Some("web:1.0")),
                (WRK, "worker", None, Some("worker:7")),
            ],
            secret_keys: vec![(DB, "password")],
        },
        Expected {
            release: "prod/jobs",
            entry: 0,
            at: "2026-11-03T12:00:00Z",
            summary: "jobs 2",
            render: j2.clone(),
            previous: Some(j1.clone()),
            added: none(),
            removed: none(),
            changed: vec![CRON],
            images: vec![(CRON, "job", Some("batch:1"), Some("batch:2"))],
            secret_keys: vec![],
        },
        Expected {
            release: "staging/lists",
            entry: 0,
            at: "2026-11-03T06:00:00Z",
            summary: "lists 2",
            render: l2.clone(),
            previous: Some(l1.clone()),
            added: none(),
            removed: none(),
            changed: vec![LIST],
            images: vec![(STS, "pg", Some("pg:15"), Some("pg:16"))],
            secret_keys: vec![(CREDS, "k")],
        },
        Expected {
            release: "prod/web",
            entry: 1,
            at: "2026-11-03T00:00:00Z",
            summary: "v3 without the worker",
            render: v3.clone(),
            previous: Some(v2.clone()),
            added: none(),
            removed: vec![WRK],
            changed: vec![WEB],
            images: vec![
                (WEB, "app", Some("web:1.1"), Some("web:1.2")),
                (WRK, "worker", Some("worker:7"), None),
            ],
            secret_keys: vec![],
        },
        Expected {
            release: "prod/jobs",
            entry: 1,
            at: "2026-11-02T12:00:00Z",
            summary: "jobs 1",
            render: j1,
            previous: None,
            added: vec![CRON],
            removed: none(),
            changed: none(),
            images: vec![(CRON, "job", None, Some("batch:1"))],
            secret_keys: vec![],
        },
        // The oldest entry left of prod/web compares against nothing: all of it added.
        Expected {
            release: "prod/web",
            entry: 2,
            at: "2026-11-02T00:00:00Z",
            summary: "v2",
            render: v2,
            previous: None,
            added: vec![WEB, SVC, DB, WRK],
            removed: none(),
            changed: none(),
            images: vec![
                (WEB, "migrate", None, Some("migrate:1")),
                (WEB, "app", None, Some("web:1.1")),
                (WRK, "worker", None, Some("worker:7")),
            ],
            secret_keys: vec![(DB, "password"), (DB, "user")],
        },
        Expected {
            release: "staging/lists",
            entry: 1,
            at: "2026-11-01T06:00:00Z",
            summary: "lists 1",
            render: l1,
            previous: None,
            added: vec![LIST],
            removed: none(),
            changed: none(),
            images: vec![(STS, "pg", None, Some("pg:15"))],
            secret_keys: vec![(CREDS, "k")],
        },
    ]
}

fn text_of(entries: &[&Expected]) -> String {
    entries.iter().map(|e| e.text()).collect()
}

fn json_of(entries: &[&Expected]) -> Value {
    Value::Array(entries.iter().map(|e| e.json()).collect())
}

fn no_secret_values(output: &str) {
    for value in VALUES {
        assert!(
            !output.contains(value),
            "a Secret value ({value}) shown:\n{output}"
        );
    }
}

#[test]
fn changes_lists_the_fleet_newest_first_with_what_each_sync_changed() {
    let cli = Cli::file_store();
    let all = fleet(&cli);
    let every: Vec<&Expected> = all.iter().collect();

    let text = cli.ok(&["changes", "--since", "2026-11-01"]);
    assert_eq!(text, text_of(&every));
    no_secret_values(&text);
    let json = cli.ok(&["changes", "--since", "2026-11-01", "-o", "json"]);
    no_secret_values(&json);
    let answer: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(answer["complete"], true);
    let got = &answer["entries"];
    assert_eq!(*got, json_of(&every));
    // Newest first, whatever the release.
    let times: Vec<&str> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["syncedAt"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
}

#[test]
fn the_window_and_the_namespace_choose_the_entries_and_not_what_they_compare_with() {
    let cli = Cli::file_store();
    let all = fleet(&cli);
    let pick =
        |keep: &dyn Fn(&Expected) -> bool| all.iter().filter(|e| keep(e)).collect::<Vec<_>>();

    // From 2026-11-03 on: prod/web @1 still compares with v2, an entry outside the window.
    let recent = pick(&|e| e.at >= "2026-11-03");
    assert_eq!(recent.len(), 4);
    assert_eq!(
        cli.ok(&["changes", "--since", "2026-11-03T00:00:00Z"]),
        text_of(&recent)
    );
    let answer: Value =
        serde_json::from_str(&cli.ok(&["--json", "changes", "--since", "2026-11-03"])).unwrap();
    let got = &answer["entries"];
    assert_eq!(*got, json_of(&recent));
    assert!(got[3]["previousRenderRef"].is_string(), "{got}");

    // --until is excluded; a time with an offset is taken in UTC.
    let early = pick(&|e| e.at < "2026-11-03");
    assert_eq!(
        cli.ok(&[
            "changes",
            "--since",
            "2026-11-01T00:00:00Z",
            "--until",
            "2026-11-03T01:00:00+01:00",
        ]),
        text_of(&early)
    );

    // -n: one namespace's releases alone.
    let staging = pick(&|e| e.release.starts_with("staging/"));
    assert_eq!(
        cli.ok(&["changes", "-n", "staging", "--since", "2026-10-01"]),
        text_of(&staging)
    );

    // A window that holds no sync says so.
    assert_eq!(
        cli.ok(&["changes", "--since", "2026-11-05"]),
        "(no history entry was synced in the window)\n"
    );
    let empty = cli.ok(&["-o", "json", "changes", "--since", "2026-11-05"]);
    assert_eq!(
        serde_json::from_str::<Value>(&empty).unwrap()["entries"],
        json!([])
    );
}

#[test]
fn bad_times_are_refused_naming_the_flag_and_the_forms() {
    let cli = Cli::file_store();
    fleet(&cli);
    let err = cli.fails(&["changes", "--since", "last tuesday"]);
    assert!(
        err.contains("--since \"last tuesday\" is not a time")
            && err.contains("RFC 3339")
            && err.contains("7d"),
        "{err}"
    );
    let err = cli.fails(&["changes", "--since", "2026-11-03", "--until", "2026-11-02"]);
    assert!(err.contains("--until is not after --since"), "{err}");
    let err = cli.fails(&["changes"]);
    assert!(err.contains("--since"), "{err}");
    let err = cli.fails(&["changes", "-n", "Not_A_Namespace", "--since", "1d"]);
    assert!(err.contains("Not_A_Namespace"), "{err}");
}

#[test]
fn a_folder_that_cannot_be_listed_makes_the_list_partial_and_the_status_1() {
    let cli = Cli::file_store();
    let all = fleet(&cli);
    // A link in prod/web's history: a file:// listing refuses to walk it, so that
    // history cannot be read, and the other releases' entries still are.
    std::os::unix::fs::symlink(
        cli.store_dir().join("staging"),
        cli.store_dir().join("prod/web/history/elsewhere"),
    )
    .unwrap();
    let out = cli.run(&["changes", "--since", "2026-11-01"]);
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    let rest: Vec<&Expected> = all.iter().filter(|e| e.release != "prod/web").collect();
    assert_eq!(stdout, text_of(&rest));
    assert!(
        stderr.contains("the list is partial: prod/web/history/ could not be listed"),
        "{stderr}"
    );
    // A namespace folder that cannot be listed is named the same way.
    std::os::unix::fs::symlink(
        cli.store_dir().join("prod"),
        cli.store_dir().join("staging/elsewhere"),
    )
    .unwrap();
    let out = cli.run(&[
        "-o",
        "json",
        "changes",
        "-n",
        "staging",
        "--since",
        "2026-11-01",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let partial = serde_json::from_slice::<Value>(&out.stdout).unwrap();
    assert_eq!(partial["entries"], json!([]));
    assert_eq!(partial["complete"], false);
    assert_eq!(partial["unlisted"][0]["folder"], "staging/");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("the list is partial: staging/ could not be listed"),
        "{stderr}"
    );
}

/// Plants `zz/x` beside the fleet: one history entry, at 2026-11-03 noon, whose render
/// blob was then replaced by `junk!` (as a writer of the bucket, or a damaged disk,
/// could leave it).
fn plant_junk_release(cli: &Cli) {
    let render = put(cli, "zz/x", "x.json", &[SERVICE]);
    record(cli, "zz/x", &render, "x", "2026-11-03T12:00:00Z");
    let blob = cli.store_dir().join("zz/x/renders").join(&render);
    std::fs::write(&blob, b"junk!").unwrap();
}

#[test]
fn a_release_that_cannot_be_read_makes_the_list_partial_naming_it() {
    let cli = Cli::file_store();
    let all = fleet(&cli);
    plant_junk_release(&cli);
    let out = cli.run(&["changes", "--since", "2026-11-01"]);
    assert_eq!(out.status.code(), Some(1), "partial: exit status 1");
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    // Every other release's entries are still printed, and the damaged one is named.
    let every: Vec<&Expected> = all.iter().collect();
    assert_eq!(stdout, text_of(&every));
    assert!(!stdout.contains("zz/x"), "{stdout}");
    assert!(
        stderr.contains("the list is partial: could not read zz/x")
            && stderr.contains("verify zz/x"),
        "{stderr}"
    );
    let out = cli.run(&["changes", "--since", "2026-11-01", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["complete"], false);
    assert_eq!(answer["entries"], json_of(&every));
    assert_eq!(answer["unlisted"], json!([]));
    let unread = answer["unread"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{answer}");
    assert_eq!(
        (&unread[0]["namespace"], &unread[0]["name"]),
        (&json!("zz"), &json!("x"))
    );
    assert!(
        unread[0]["error"]
            .as_str()
            .unwrap()
            .contains("does not read"),
        "{answer}"
    );
}

/// The same damage on the server's changes page: the page is answered (200), the other
/// releases' rows shown, and its note names the release that could not be read.
#[tokio::test]
async fn the_changes_page_names_a_release_that_cannot_be_read() {
    let (cli, all) = tokio::task::spawn_blocking(|| {
        let cli = Cli::file_store();
        let all = fleet(&cli);
        plant_junk_release(&cli);
        (cli, all)
    })
    .await
    .unwrap();
    let url = format!("file://{}", cli.store_dir().display());
    let store = render_store::RenderStore::open(&url).unwrap().unwrap();
    let s = super::http::Server::start(Some(store)).await;
    let (status, page) = s.get("/changes?since=2026-11-01").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page.matches("class=\"change\"").count(),
        all.len(),
        "{page}"
    );
    let note = page
        .split("id=\"partial\"")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("the page says it is partial");
    assert!(
        note.contains("href=\"/ui/zz/x\"") && note.contains("could not be read"),
        "{note}"
    );
    assert!(!page.contains("/ui/zz/x/diff"), "{page}");
}
