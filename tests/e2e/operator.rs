//! The traps an operator used to kubectl meets in the first hour, each closed: empty and
//! nameless renders, the diff's order and exit status, names people can type, release
//! typos, kubectl's output and namespace conventions, and messages in a person's words.

use super::cli::Cli;
use super::yaml::run_with_stdin;
use std::process::Output;

const CM1: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: \"1\"\n";
const CM2: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: \"2\"\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter2-very-secret\n";

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A store with two syncs of prod/app (CM1, then CM2); their renderRefs, old first.
fn two_syncs(cli: &Cli) -> (String, String) {
    let a = cli.object("v1.yaml", CM1);
    let b = cli.object("v2.yaml", CM2);
    let ra = cli.ok(&["put", "prod/app", &a]).trim().to_string();
    let rb = cli.ok(&["put", "prod/app", &b]).trim().to_string();
    cli.ok(&[
        "record",
        "prod/app",
        &ra,
        "--summary",
        "v1",
        "--synced-at",
        "2026-01-01T00:00:00Z",
    ]);
    cli.ok(&[
        "record",
        "prod/app",
        &rb,
        "--summary",
        "v2",
        "--synced-at",
        "2026-01-02T00:00:00Z",
    ]);
    (ra, rb)
}

fn keys(cli: &Cli) -> String {
    cli.ok(&["ls"])
}

#[test]
fn inputs_with_no_objects_are_refused_and_store_nothing() {
    let cli = Cli::validating();
    let (_, _) = two_syncs(&cli);
    let before = keys(&cli);
    let empty = cli.object("empty.yaml", "");
    let nulls = cli.object("null.yaml", "null\n---\n# nothing\n---\n");
    for args in [
        vec!["put", "prod/app", &empty],
        vec!["put", "prod/app", &nulls],
        vec!["ref", &empty],
        vec!["diff", "prod/app", "--local", &nulls],
    ] {
        let out = cli.run(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            stderr(&out).contains("no objects in"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A failed `helm template` in a pipe: empty standard input.
    let piped = run_with_stdin(&cli, &["put", "prod/app", "-"], b"");
    assert_eq!(piped.status.code(), Some(1));
    assert!(stderr(&piped).contains("no objects in standard input"));
    // `diff --local` errors are status 2, its "different" is 1.
    assert_eq!(
        cli.run(&["diff", "prod/app", "--local", &empty])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(keys(&cli), before, "a refused input changed the store");
    // Asked for, the empty render is taken.
    let r = cli.ok(&["put", "prod/app", "--allow-empty", &empty]);
    assert_eq!(
        r.trim(),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn objects_without_their_names_are_refused_naming_the_file() {
    let cli = Cli::validating();
    let nameless = cli.object("a.json", r#"{"a":1}"#);
    let err = cli.fails(&["put", "prod/app", &nameless]);
    assert!(
        err.contains("a.json") && err.contains("no apiVersion, no kind, no metadata.name"),
        "{err}"
    );
    let list = cli.object("list.yaml", "- a\n- b\n");
    let err = cli.fails(&["ref", &list]);
    assert!(
        err.contains("is a list, not an object") && err.contains("list.yaml"),
        "{err}"
    );
    // Go's own words stay in the message, after the person's.
    assert!(err.contains("cannot unmarshal array"), "{err}");
    let broken = cli.object("broken.json", r#"{"apiVersion":"v1","#);
    let err = cli.fails(&["ref", &broken]);
    assert!(err.contains("broken.json"), "{err}");
    // `canonical` takes any JSON object: it is the rule of §4, not of people's input.
    cli.ok(&["canonical", &nameless]);
    assert_eq!(keys(&cli), "", "a refused input wrote something");
}

#[test]
fn diff_takes_old_then_new_with_a_header_and_diff_exit_status() {
    let cli = Cli::validating();
    let (ra, rb) = two_syncs(&cli);
    let out = cli.run(&["diff", "prod/app", &ra, &rb]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let header: Vec<&str> = text.lines().take(2).collect();
    assert!(
        header[0].starts_with(&format!(
            "--- {ra} (@1, synced 2026-01-01T00:00:00Z, \"v1\")"
        )),
        "{text}"
    );
    assert!(
        header[1].starts_with(&format!(
            "+++ {rb} (@0, synced 2026-01-02T00:00:00Z, \"v2\")"
        )),
        "{text}"
    );
    // Old to new: the Secret is added, v goes from 1 to 2.
    assert!(text.contains("added    v1 Secret db"), "{text}");
    let (minus, plus) = (
        text.find("-  v: '1'").unwrap(),
        text.find("+  v: '2'").unwrap(),
    );
    assert!(minus < plus, "{text}");
    assert!(!text.contains("hunter2"), "a Secret value shown: {text}");
    // The added Secret whole, every line marked, its value masked (kubectl diff's form).
    assert!(
        text.contains("added    v1 Secret db\n    +apiVersion: v1\n    +kind: Secret\n")
            && text.contains("    +  password: '***'\n"),
        "{text}"
    );
    // The same names by position and by prefix, and by default: without TO the newest
    // entry, without FROM the one before it (git diff's and helm diff's defaults).
    let by_name = cli.run(&["diff", "prod/app", "@1", &rb[..15]]);
    assert_eq!(stdout(&by_name), text);
    for defaults in [&["diff", "prod/app"][..], &["diff", "prod/app", "@1"][..]] {
        let out = cli.run(defaults);
        assert_eq!(out.status.code(), Some(1), "{defaults:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), text, "{defaults:?}");
    }
    // Equal renders: status 0.
    assert_eq!(
        cli.run(&["diff", "prod/app", "@0", &rb]).status.code(),
        Some(0)
    );
    // JSON: the shape of HTTP /diff, old to new.
    let json = cli.run(&["-o", "json", "diff", "prod/app", "@1", "@0"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["added"][0]["kind"], "Secret", "{v}");
    let added = v["added"][0]["text"].as_str().unwrap();
    assert!(
        added.contains("password: '***'") && !added.contains("hunter2"),
        "{v}"
    );
    // --local against @0 by default, and against another entry when asked.
    let v1 = cli.object("again.yaml", CM1);
    let local = cli.run(&["diff", "prod/app", "--local", &v1]);
    assert_eq!(local.status.code(), Some(1));
    assert!(stdout(&local).contains(&format!("--- {rb}")) && stdout(&local).contains("+++ local"));
    assert_eq!(
        cli.run(&["diff", "prod/app", "--local", &v1, "--against", "@1"])
            .status
            .code(),
        Some(0)
    );
    // Trouble is status 2.
    assert_eq!(
        cli.run(&["diff", "prod/app", "@5", "@0"]).status.code(),
        Some(2)
    );
}

#[test]
fn renders_are_named_by_prefix_or_history_position() {
    let cli = Cli::validating();
    let (ra, rb) = two_syncs(&cli);
    let canonical_a = cli.ok(&["get", "prod/app", &ra]);
    for name in [&ra[..], &ra[7..15], &ra[..15], "@1"] {
        assert_eq!(cli.ok(&["get", "prod/app", name]), canonical_a, "{name}");
    }
    assert_eq!(
        cli.ok(&["get", "prod/app", "@0"]),
        cli.ok(&["get", "prod/app", &rb])
    );
    let short = cli.fails(&["get", "prod/app", &ra[7..12]]);
    assert!(short.contains("at least 8 hex digits"), "{short}");
    let beyond = cli.fails(&["get", "prod/app", "@2"]);
    assert!(beyond.contains("has 2 history entries"), "{beyond}");
    // Two blobs whose renderRefs share a prefix (planted: no two real renders do).
    let renders = cli.store_dir().join("prod/app/renders");
    for tail in ["1", "2"] {
        let name = format!("sha256:abcdef01{}", tail.repeat(56));
        std::fs::write(renders.join(name), "x").unwrap();
    }
    let ambiguous = cli.fails(&["get", "prod/app", "abcdef01"]);
    assert!(
        ambiguous.contains("names 2 renders")
            && ambiguous.contains(&format!("sha256:abcdef01{}", "2".repeat(56))),
        "{ambiguous}"
    );
    let none = cli.fails(&["get", "prod/app", "0123456789"]);
    assert!(none.contains("no render of prod/app"), "{none}");
}

#[test]
fn release_typos_are_errors_and_delete_release_stays_idempotent() {
    let cli = Cli::validating();
    let (ra, _) = two_syncs(&cli);
    for args in [
        vec!["history", "prod/ap"],
        vec!["history", "prod/ap", "--limit", "5"],
        vec!["get", "prod/ap", &ra],
        vec!["gc", "prod/ap"],
        vec!["diff", "prod/ap", "@1", "@0"],
    ] {
        let out = cli.run(&args);
        assert!(
            matches!(out.status.code(), Some(1 | 2))
                && stderr(&out).contains("no release prod/ap in the store")
                && stderr(&out).contains("did you mean prod/app?"),
            "{args:?}: {:?} {}",
            out.status.code(),
            stderr(&out)
        );
    }
    // A typo in the namespace finds the release under the nearest one; a name far from
    // every release gets no guess.
    let ns_typo = cli.fails(&["history", "prd/app"]);
    assert!(ns_typo.contains("did you mean prod/app?"), "{ns_typo}");
    let far = cli.fails(&["history", "prod/ingress-nginx"]);
    assert!(
        far.contains("no release prod/ingress-nginx") && !far.contains("did you mean"),
        "{far}"
    );
    let before = keys(&cli);
    let gone = cli.ok(&["delete-release", "prod/nothing"]);
    assert!(gone.contains("nothing to delete"), "{gone}");
    let dry = cli.ok(&["delete-release", "prod/app", "--dry-run"]);
    // Two entries, two renders and the release index.
    assert!(dry.contains("would delete 5 keys of prod/app"), "{dry}");
    assert_eq!(keys(&cli), before, "--dry-run deleted something");
    assert!(
        cli.ok(&["delete-release", "prod/app"])
            .contains("deleted 5 keys")
    );
}

#[test]
fn kubectl_conventions_namespace_output_version_completion() {
    let cli = Cli::validating();
    let (ra, _) = two_syncs(&cli);
    // -n with NAME alone; a conflicting namespace is refused.
    assert_eq!(
        cli.ok(&["history", "-n", "prod", "app"]),
        cli.ok(&["history", "prod/app"])
    );
    assert!(
        cli.fails(&["history", "-n", "dev", "prod/app"])
            .contains("another namespace")
    );
    // -o json is --json; errors then are JSON with a stable kind.
    assert_eq!(
        cli.ok(&["-o", "json", "history", "prod/app"]),
        cli.ok(&["--json", "history", "prod/app"])
    );
    let err = cli.run(&["-o", "json", "get", "prod/app", "@7"]);
    let v: serde_json::Value = serde_json::from_slice(&err.stderr).unwrap();
    assert_eq!(v["error"]["kind"], "not-found", "{v}");
    let err = cli.run(&["-o", "json", "history", "prod/ap"]);
    let v: serde_json::Value = serde_json::from_slice(&err.stderr).unwrap();
    assert_eq!(v["error"]["kind"], "not-found", "{v}");
    let err = cli.run(&["--json", "--render-store-url", "ftp://x", "ls"]);
    let v: serde_json::Value = serde_json::from_slice(&err.stderr).unwrap();
    assert_eq!(v["error"]["kind"], "url", "{v}");
    // get -o yaml: YAML documents, Secret values masked.
    let yaml = cli.ok(&["get", "prod/app", "@0", "-o", "yaml"]);
    assert!(
        yaml.starts_with("---\napiVersion: v1\n") && yaml.contains("password: '***'"),
        "{yaml}"
    );
    assert!(!yaml.contains("hunter2"), "{yaml}");
    assert!(
        cli.ok(&["get", "prod/app", "@0"]).contains("hunter2"),
        "get writes the blob as stored"
    );
    assert!(
        cli.fails(&["history", "prod/app", "-o", "yaml"])
            .contains("-o yaml is for `get`")
    );
    // One version, with the component's interface.
    let version = cli.ok(&["--version"]);
    assert!(
        version.contains(env!("CARGO_PKG_VERSION")) && version.contains("convoy:render-store@"),
        "{version}"
    );
    // Completion scripts and the manual page come from the same definitions.
    assert!(cli.ok(&["completion", "bash"]).contains("delete-release"));
    assert!(
        cli.ok(&["completion", "zsh"])
            .contains("#compdef render-store")
    );
    let man = cli.ok(&["man"]);
    assert!(
        man.contains(".TH render-store") && man.contains("delete\\-release"),
        "{}",
        &man[..200.min(man.len())]
    );
    // Global options are listed apart, and every command has an example.
    let help = cli.ok(&["diff", "--help"]);
    assert!(
        help.contains("Global options:") && help.contains("Examples:"),
        "{help}"
    );
    // -o wide: a header, each entry's position and its blob's size; history only.
    let wide = cli.ok(&["history", "prod/app", "-o", "wide"]);
    let lines: Vec<&str> = wide.lines().collect();
    assert!(
        lines[0].starts_with("ENTRY") && lines[0].contains("SIZE"),
        "{wide}"
    );
    assert!(
        lines[1].starts_with("@1 ") && lines[1].contains(&ra),
        "{wide}"
    );
    let size = std::fs::metadata(cli.store_dir().join("prod/app/renders").join(&ra))
        .unwrap()
        .len();
    assert!(lines[1].contains(&format!(" {size} ")), "{wide}");
    assert!(lines[2].starts_with("@0 "), "{wide}");
    assert!(
        cli.fails(&["ls", "-o", "wide"])
            .contains("-o wide is for `history`")
    );
    // --trace is offered by the store operations alone.
    assert!(cli.ok(&["gc", "--help"]).contains("--trace <FILE>"));
    for command in ["ref", "ls", "diff", "verify", "serve"] {
        let help = cli.ok(&[command, "--help"]);
        assert!(
            !help.contains("--trace"),
            "{command} offers --trace: {help}"
        );
    }
}

#[test]
fn urls_that_are_paths_or_files_get_a_sentence_that_helps() {
    let cli = Cli::validating();
    let path = cli.dir.path().join("renders");
    let err = cli.fails(&["--render-store-url", path.to_str().unwrap(), "ls"]);
    assert!(err.contains(&format!("file://{}", path.display())), "{err}");
    let file = cli.object("a-file", "x");
    let err = cli.fails(&["--render-store-url", &format!("file://{file}"), "ls"]);
    assert!(err.contains("is not a directory"), "{err}");
    // The list of schemes reads as written.
    let err = cli.fails(&["--render-store-url", "ftp://x", "ls"]);
    assert!(err.contains("file://, mem://"), "{err}");
}

#[test]
fn verify_reports_damage_put_repairs_it_and_history_goes_on() {
    let cli = Cli::validating();
    let (ra, rb) = two_syncs(&cli);
    let clean = cli.ok(&["verify"]);
    assert!(
        clean.contains("read 2 renders and 2 history entries of 1 release: no problem"),
        "{clean}"
    );
    let root = cli.store_dir().join("prod/app");
    // One byte flipped, the size unchanged: put's size check alone would not see it.
    let blob = root.join(format!("renders/{ra}"));
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[5] ^= 0x20;
    std::fs::write(&blob, &bytes).unwrap();
    let out = cli.run(&["verify", "prod/app"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(&format!("corrupt prod/app/renders/{ra}")),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("what to do: put the render again"),
        "{}",
        stdout(&out)
    );
    let again = cli.run(&["put", "prod/app", &cli.object("v1-again.yaml", CM1)]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("rewrote the damaged blob"),
        "{}",
        stderr(&again)
    );
    assert!(cli.ok(&["verify", "prod/app"]).contains("no problem"));
    // A bad entry: history shows the others, marks it, and exits 1.
    let entries: Vec<_> = std::fs::read_dir(root.join("history"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let newest = entries.iter().max().unwrap();
    std::fs::write(newest, "not an entry").unwrap();
    let history = cli.run(&["history", "prod/app"]);
    assert_eq!(history.status.code(), Some(1));
    assert!(
        stdout(&history).contains(&ra)
            && stdout(&history).contains("(corrupt entry prod/app/history/"),
        "{}",
        stdout(&history)
    );
    // A dangling entry and a foreign key, each with what to do; the JSON lists all three.
    std::fs::remove_file(root.join(format!("renders/{rb}"))).unwrap();
    std::fs::write(root.join("renders/upload.tmp"), "x").unwrap();
    let out = cli.run(&["-o", "json", "verify"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), 3, "{v}");
    for kind in ["corrupt", "dangling", "foreign"] {
        assert!(kinds.contains(&kind), "{kind}: {v}");
    }
}

/// What `verify` advises for an entry whose body does not read, done word for word:
/// `delete-entry` (its dry run first), then the `record` it prints, leaves a store
/// `verify` finds nothing wrong with and the history as it was.
#[test]
fn verify_advice_for_a_corrupt_entry_repairs_it_as_written() {
    let cli = Cli::validating();
    let (ra, rb) = two_syncs(&cli);
    let root = cli.store_dir().join("prod/app/history");
    let newest = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    std::fs::write(&newest, "not an entry").unwrap();
    let out = cli.run(&["-o", "json", "verify", "prod/app"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problem = &v["problems"][0];
    assert_eq!(problem["kind"], "corrupt", "{v}");
    let key = problem["key"].as_str().unwrap().to_string();
    let fix = problem["fix"].as_str().unwrap();
    let delete = format!("render-store delete-entry prod/app {key}");
    let record = format!("render-store record prod/app {rb} --synced-at 2026-01-02T00:00:00");
    assert!(fix.contains(&delete) && fix.contains(&record), "{fix}");

    // Bad names are refused and delete nothing.
    let before = keys(&cli);
    let err = cli.fails(&[
        "delete-entry",
        "prod/app",
        &format!("prod/app/renders/{ra}"),
    ]);
    assert!(err.contains("is not a history entry of prod/app"), "{err}");
    let err = cli.fails(&["delete-entry", "prod/app", "@2"]);
    assert!(err.contains("has 2 history entries"), "{err}");
    let err = cli.fails(&["delete-entry", "prod/ap", "@0"]);
    assert!(err.contains("did you mean prod/app?"), "{err}");
    let dry = cli.ok(&["delete-entry", "prod/app", &key, "--dry-run"]);
    assert!(
        dry.starts_with(&format!("would delete @0 of prod/app: {key}")),
        "{dry}"
    );
    assert_eq!(keys(&cli), before, "--dry-run deleted something");

    let done = cli.ok(&["delete-entry", "prod/app", &key]);
    assert!(
        done.starts_with(&format!("deleted @0 of prod/app: {key}")),
        "{done}"
    );
    assert!(!newest.exists());
    let recorded = cli.ok(&[
        "record",
        "prod/app",
        &rb,
        "--synced-at",
        "2026-01-02T00:00:00Z",
        "--summary",
        "v2",
    ]);
    assert!(recorded.starts_with("recorded"), "{recorded}");
    assert!(newest.exists(), "the entry is back under its own key");
    assert!(cli.ok(&["verify", "prod/app"]).contains("no problem"));
    let history: serde_json::Value =
        serde_json::from_str(&cli.ok(&["--json", "history", "prod/app"])).unwrap();
    let refs: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["renderRef"].as_str().unwrap())
        .collect();
    assert_eq!(refs, [ra.as_str(), rb.as_str()]);
}

/// `put FILE NS/NAME`, the arguments swapped: the error says which comes first.
#[test]
fn swapped_put_arguments_are_named() {
    let cli = Cli::validating();
    let file = cli.object(
        "metallb.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: metallb-system\n",
    );
    let err = cli.fails(&["put", &file, "metallb-system/metallb"]);
    assert!(
        err.contains(&format!(
            "the release comes first, then the files: render-store put metallb-system/metallb {file}"
        )),
        "{err}"
    );
}

/// `history` reads as helm history: a header, oldest first, each entry's `@N` (the name
/// every command takes), its time to the second, an age, a short renderRef; `--limit`
/// shows the newest entries in the same order and with the same places, and takes
/// `-o wide`; `--running` marks the entry that runs and says when it is not `@0`.
#[test]
fn history_reads_as_helm_history_with_places_ages_and_the_running_entry() {
    let cli = Cli::validating();
    let (ra, rb) = two_syncs(&cli);
    let c = cli.object(
        "v3.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  v: \"3\"\n",
    );
    let rc = cli.ok(&["put", "prod/app", &c]).trim().to_string();
    cli.ok(&[
        "record",
        "prod/app",
        &rc,
        "--summary",
        "v3",
        "--synced-at",
        "2026-01-03T00:00:00.123456789Z",
    ]);
    let short = |r: &str| r["sha256:".len().."sha256:".len() + 12].to_string();
    let table = cli.ok(&["history", "prod/app"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["ENTRY", "SYNCED", "AGE", "RENDER", "SUMMARY"],
        "{table}"
    );
    let rows: Vec<[&str; 2]> = lines[1..].iter().map(|l| [l[0], l[3]]).collect();
    assert_eq!(
        rows,
        [
            ["@2", short(&ra).as_str()],
            ["@1", short(&rb).as_str()],
            ["@0", short(&rc).as_str()]
        ],
        "{table}"
    );
    // To the second, no nanoseconds; an age in kubectl's form (these are years old).
    assert_eq!(lines[3][1], "2026-01-03T00:00:00Z", "{table}");
    assert!(
        lines[1..].iter().all(|l| l[2].ends_with(['d', 'y', 'h'])),
        "{table}"
    );
    assert!(!table.contains(&ra), "refs are short: {table}");
    // A short ref names the render in every command.
    assert_eq!(
        cli.ok(&["get", "prod/app", &short(&rb)]),
        cli.ok(&["get", "prod/app", "@1"])
    );

    // --limit: the newest two, oldest first, with their places; -o wide with it.
    let page = cli.run(&["history", "prod/app", "--limit", "2"]);
    let page_out = stdout(&page);
    let places: Vec<&str> = page_out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(places, ["@1", "@0"], "{page_out}");
    let next = stderr(&page);
    let cursor = next
        .trim()
        .strip_prefix("older entries: --before ")
        .unwrap();
    let older = cli.ok(&[
        "history", "prod/app", "--limit", "2", "--before", cursor, "-o", "wide",
    ]);
    let older_rows: Vec<Vec<&str>> = older
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        older_rows[0][..6],
        ["ENTRY", "SYNCED", "AGE", "RENDER", "SIZE", "SUMMARY"]
    );
    assert_eq!(older_rows.len(), 2, "{older}");
    assert_eq!(
        older_rows[1][0], "@2",
        "the place counts the newer entries: {older}"
    );
    assert_eq!(
        older_rows[1][3], ra,
        "wide shows the whole renderRef: {older}"
    );

    // A rollback to v1: record adds nothing; --running marks @2 and says @0 is not it.
    let rolled = cli.run(&["history", "prod/app", "--running", &short(&ra)]);
    assert!(rolled.status.success());
    let marked = stdout(&rolled);
    let running: Vec<&str> = marked.lines().filter(|l| l.contains("running")).collect();
    assert_eq!(running.len(), 1, "{marked}");
    assert!(running[0].starts_with("@2 "), "{marked}");
    assert!(
        stderr(&rolled).contains("@2 runs, not @0"),
        "{}",
        stderr(&rolled)
    );
    let newest = cli.run(&["history", "prod/app", "--running", "@0"]);
    assert!(stderr(&newest).is_empty(), "{}", stderr(&newest));
    // The JSON marks the same entry, as the component decides it (`logic.running-entry`):
    // the whole history oldest first, and a page newest first.
    let marked_at = |json: &serde_json::Value| -> Vec<String> {
        json.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["running"] == serde_json::json!(true))
            .map(|e| e["renderRef"].as_str().unwrap().to_string())
            .collect()
    };
    let whole: serde_json::Value = serde_json::from_str(&cli.ok(&[
        "history",
        "prod/app",
        "--running",
        &short(&ra),
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(marked_at(&whole), std::slice::from_ref(&ra), "{whole}");
    assert_eq!(whole[0]["running"], serde_json::json!(true), "{whole}");
    let page: serde_json::Value = serde_json::from_str(&cli.ok(&[
        "history",
        "prod/app",
        "--limit",
        "3",
        "--running",
        "@1",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(
        marked_at(&page["entries"]),
        std::slice::from_ref(&rb),
        "{page}"
    );
    assert_eq!(
        page["entries"][1]["running"],
        serde_json::json!(true),
        "{page}"
    );
    let unmarked = cli.ok(&["history", "prod/app", "-o", "json"]);
    assert!(!unmarked.contains("running"), "{unmarked}");
    // A name that is not a render of the release is an error, not an unmarked table.
    let err = cli.fails(&["history", "prod/app", "--running", "deadbeefdeadbeef"]);
    assert!(err.contains("deadbeefdeadbeef"), "{err}");
}

/// Completion completes what only the store knows: release names (NAMEs with `-n`) and
/// `@N` entries, where a command takes them; and bash's script asks for them first,
/// keeping `@` whole although bash breaks words there.
#[test]
fn completion_completes_release_names_and_entries_from_the_store() {
    let cli = Cli::validating();
    two_syncs(&cli);
    let web = cli.object("web.yaml", CM1);
    cli.ok(&["put", "prod/web", &web]);
    cli.ok(&["put", "dev/app", &web]);
    let complete = |words: &[&str]| {
        let mut args = vec!["__complete", "--"];
        args.extend_from_slice(words);
        cli.ok(&args).lines().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(complete(&["get", "pro"]), ["prod/app", "prod/web"]);
    assert_eq!(complete(&["get", ""]), ["dev/app", "prod/app", "prod/web"]);
    assert_eq!(complete(&["-n", "prod", "diff", ""]), ["app", "web"]);
    assert_eq!(complete(&["diff", "prod/app", "@"]), ["@0", "@1"]);
    assert_eq!(complete(&["diff", "prod/app", "@0", "@1"]), ["@1"]);
    assert_eq!(
        complete(&["gc", "prod/app", "--keep", "1", "--protect", ""]),
        ["@0", "@1"]
    );
    assert_eq!(
        complete(&["history", "prod/app", "--running", ""]),
        ["@0", "@1"]
    );
    // Where the store knows nothing: no candidate (the shell's own completion goes on).
    assert!(complete(&["ls", ""]).is_empty());
    assert!(complete(&["put", "prod/app", ""]).is_empty());
    assert!(complete(&["gc", "prod/app", "--keep", ""]).is_empty());
    // `__complete` is for the scripts: no help lists it.
    assert!(!cli.ok(&["--help"]).contains("__complete"));

    // bash's script, sourced as a user's shell does, with `render-store` on PATH.
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_render-store-under-test"),
        bin.path().join("render-store"),
    )
    .unwrap();
    let script = bin.path().join("render-store.bash");
    std::fs::write(&script, cli.ok(&["completion", "bash"])).unwrap();
    let bash = |line: &str| {
        let program = format!(
            "source {script:?}; COMP_LINE={line:?}; COMP_POINT=${{#COMP_LINE}}; \
             read -r -a COMP_WORDS <<< \"$COMP_LINE\"; \
             [[ \"$COMP_LINE\" == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             _render_store_dynamic render-store \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &program])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
            .env("RENDER_STORE_URL", &cli.url)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).lines().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(bash("render-store history prod/w"), ["prod/web"]);
    // bash replaces only what follows its word break `@`.
    assert_eq!(bash("render-store diff prod/app @"), ["0", "1"]);
    // A command name is clap's to complete; the scripts' hidden command is not offered.
    assert_eq!(bash("render-store verif"), ["verify"]);
    let commands = bash("render-store ");
    assert!(commands.iter().any(|c| c == "history"), "{commands:?}");
    assert!(!commands.iter().any(|c| c == "__complete"), "{commands:?}");
}

/// A usage error's usage line names what the command needs, not what the environment
/// set: with RENDER_STORE_URL set (as every command here runs), `diff` alone does not
/// show `--render-store-url` as if it were required.
#[test]
fn usage_lines_do_not_name_what_the_environment_set() {
    let cli = Cli::validating();
    let out = cli.run(&["diff"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("Usage: render-store-under-test diff <RELEASE> [FROM] [TO]")
            || err.contains("Usage: render-store diff <RELEASE> [FROM] [TO]"),
        "{err}"
    );
    assert!(!err.contains("--render-store-url"), "{err}");
    // An error about a value the environment gave still names it.
    let bad = cli.run_with_env(&["ls"], &[("RENDER_STORE_TIMEOUT", "soon")]);
    assert!(stderr(&bad).contains("--timeout"), "{}", stderr(&bad));
}
