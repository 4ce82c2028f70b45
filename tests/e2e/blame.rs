//! `render-store blame`: which entry last changed each field of an object, through a
//! history the test writes (a replica bump, an image bump, a Secret's value change, an
//! object removed and back), as users run the CLI; equal to what the test computes from
//! what it wrote, Secret values masked unless asked.

use super::cli::Cli;
use serde_json::Value;
use std::collections::BTreeMap;

fn render(replicas: u32, image: &str, password: &str, with_cm: bool) -> String {
    let mut objects = vec![
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"web"}},"spec":{{"replicas":{replicas},"template":{{"spec":{{"containers":[{{"name":"web","image":"{image}"}}]}}}}}}}}"#
        ),
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db"}},"stringData":{{"password":"{password}"}}}}"#
        ),
    ];
    if with_cm {
        objects.push(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"mode":"blue"}}"#
                .to_string(),
        );
    }
    objects.join("\n")
}

/// Four syncs: @3 the first; @2 more replicas and no ConfigMap; @1 a new image and the
/// ConfigMap back; @0 a new password.
fn history(cli: &Cli) {
    for (i, (replicas, image, password, cm)) in [
        (1, "nginx:1.25", "first-secret", true),
        (3, "nginx:1.25", "first-secret", false),
        (3, "nginx:1.26", "first-secret", true),
        (3, "nginx:1.26", "second-secret", true),
    ]
    .into_iter()
    .enumerate()
    {
        let file = cli.object(
            &format!("r{i}.json"),
            &render(replicas, image, password, cm),
        );
        let r = cli.ok(&["put", "prod/app", &file]).trim().to_string();
        let at = format!("2026-11-0{}T00:00:00Z", i + 1);
        let summary = format!("sync {i}");
        cli.ok(&[
            "record",
            "prod/app",
            &r,
            "--synced-at",
            &at,
            "--summary",
            &summary,
        ]);
    }
}

fn blamed(cli: &Cli, args: &[&str]) -> BTreeMap<String, (u64, String, String)> {
    let mut all = vec!["blame", "prod/app"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let v: Value = serde_json::from_str(&cli.ok(&all)).unwrap();
    v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                (
                    f["entry"].as_u64().unwrap(),
                    f["summary"].as_str().unwrap().to_string(),
                    f["value"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn blame_names_the_entry_that_last_changed_each_field() {
    let cli = Cli::validating();
    history(&cli);
    let web = blamed(&cli, &["deployment/web"]);
    assert_eq!(web["spec.replicas"], (2, "sync 1".into(), "3".into()));
    assert_eq!(
        web["spec.template.spec.containers[name=web].image"],
        (1, "sync 2".into(), "\"nginx:1.26\"".into())
    );
    assert_eq!(web["metadata.name"].0, 3);
    // One field, or a subtree, by the diff's path.
    let one = blamed(&cli, &["Deployment/web", "spec.replicas"]);
    assert_eq!(one.keys().collect::<Vec<_>>(), ["spec.replicas"]);
    assert_eq!(blamed(&cli, &["deployment/web", "spec.template"]).len(), 2);
    // The ConfigMap left at @2 and came back at @1: new again there.
    let cm = blamed(&cli, &["configmap/settings"]);
    assert!(cm.values().all(|(entry, _, _)| *entry == 1), "{cm:?}");
    // A Secret's value changed at @0: the line says so, and never shows the value.
    let text = cli.ok(&["blame", "prod/app", "secret/db"]);
    let line = text
        .lines()
        .find(|l| l.contains("stringData.password"))
        .unwrap();
    assert!(line.starts_with("@0 ") && line.contains("sync 3"), "{text}");
    assert!(
        !text.contains("second-secret") && !text.contains("first-secret"),
        "{text}"
    );
    let shown = cli.ok(&["blame", "prod/app", "secret/db", "--show-secrets"]);
    assert!(shown.contains("second-secret"), "{shown}");

    // Errors say what to give.
    for (args, says) in [
        (&["blame", "prod/app", "web"][..], "KIND/NAME"),
        (
            &["blame", "prod/app", "deployment/nope"],
            "no render of the history holds",
        ),
        (
            &["blame", "prod/app", "deployment/web", "spec.nope"],
            "has no field",
        ),
        (&["blame", "prod/nope", "deployment/web"], "no release"),
    ] {
        let err = cli.fails(args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
