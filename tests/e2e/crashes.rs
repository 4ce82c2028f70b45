//! Crashes: the CLI killed with SIGKILL at seeded random moments during `put` and `gc` on
//! a file:// store. After every kill the invariants hold, and re-running the killed
//! command succeeds and leaves the state an uninterrupted run leaves.
//!
//! `RENDER_STORE_CRASH_SEED` and `RENDER_STORE_CRASH_RUNS` reproduce or extend a run.

use crate::support::copy_dir;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// splitmix64: a few lines, and the same sequence everywhere for a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every file of the store as key → bytes, without the staging files a killed put
/// leaves (`<key>#<pid>.<n>`): they are no render or entry, GC leaves them alone and
/// only delete-release removes them.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
                continue;
            }
            let key = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let staging = key
                .rsplit_once('#')
                .is_some_and(|(_, n)| n.chars().all(|c| c.is_ascii_digit() || c == '.'));
            if !staging {
                out.insert(key, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

const PREFIX: &str = "ns/app/";

/// Invariants 1–4 of the reliability issue, on what the store holds now.
fn check_invariants(
    state: &BTreeMap<String, Vec<u8>>,
    protected: &[String],
    neighbours: &BTreeMap<String, Vec<u8>>,
    context: &str,
) {
    for (key, bytes) in state {
        if let Some(entry) = key.strip_prefix("ns/app/history/") {
            // 1. every history entry's blob exists
            let render_ref = &entry[entry.len() - 71..];
            assert!(
                state.contains_key(&format!("{PREFIX}renders/{render_ref}")),
                "{context}: entry {key} lost its render"
            );
        } else if let Some(render_ref) = key.strip_prefix("ns/app/renders/") {
            // 4. no stored blob ever changed: its sha256 is its key
            let hex = format!("{:x}", Sha256::digest(bytes));
            assert_eq!(
                render_ref,
                format!("sha256:{hex}"),
                "{context}: {key} changed"
            );
        }
    }
    // 2. every protected render's blob exists
    for r in protected {
        assert!(
            state.contains_key(&format!("{PREFIX}renders/{r}")),
            "{context}: protected {r} was deleted"
        );
    }
    // 3. nothing outside the release's prefix was touched
    let outside: BTreeMap<_, _> = state
        .iter()
        .filter(|(k, _)| !k.starts_with(PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(
        &outside, neighbours,
        "{context}: keys outside {PREFIX} changed"
    );
}

struct Store {
    dir: tempfile::TempDir,
}

impl Store {
    fn root(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn command(&self, args: &[String]) -> Command {
        self.command_on(&self.root(), args)
    }

    fn command_on(&self, root: &Path, args: &[String]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"));
        // Ad-hoc objects without Kubernetes names: this topic is not that rule.
        c.env("RENDER_STORE_VALIDATE", "false");
        c.args(args)
            .env("RENDER_STORE_URL", format!("file://{}", root.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    fn run_on(&self, root: &Path, args: &[String]) {
        let out = self.command_on(root, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn object(&self, n: u64, size: usize) -> String {
        let path = self.dir.path().join(format!("obj{n}.json"));
        let filler = "f".repeat(size);
        std::fs::write(
            &path,
            format!(r#"{{"kind":"ConfigMap","metadata":{{"name":"c{n}"}},"data":{{"n":"{n}","filler":"{filler}"}}}}"#),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    }
}

/// The renderRef `render-store ref` gives for the objects.
fn render_ref(objects: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        // Ad-hoc objects without Kubernetes names: this topic is not that rule.
        .env("RENDER_STORE_VALIDATE", "false")
        .arg("ref")
        .args(objects)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn sigkill_during_put_and_gc_keeps_the_invariants() {
    let seed = std::env::var("RENDER_STORE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026_u64);
    let runs = std::env::var("RENDER_STORE_CRASH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200u64);
    let mut rng = Rng(seed);
    let store = Store {
        dir: tempfile::tempdir().unwrap(),
    };
    let root = store.root();
    // Neighbours whose keys the release's prefix could be confused with.
    for (key, body) in [
        ("ns/app2/renders/x", "neighbour"),
        ("ns/app.v2/history/y", "neighbour"),
        ("other/app/renders/z", "neighbour"),
    ] {
        std::fs::create_dir_all(root.join(key).parent().unwrap()).unwrap();
        std::fs::write(root.join(key), body).unwrap();
    }
    let neighbours = snapshot(&root);
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let mut next_object = 0u64;
    let mut old = 0u64;
    let mut day = 0u64;
    let mut protected: Vec<String> = Vec::new();
    let (mut killed_put, mut killed_gc, mut finished_first) = (0, 0, 0);
    // Kills that left a GC half done, and runs whose effect was whole before the kill.
    let (mut partial, mut complete) = (0, 0);
    let mut typical = Duration::from_millis(40);
    for run in 0..runs {
        let context = format!("seed {seed:#x}, run {run}");
        let is_gc = run % 2 == 1;
        let command = if is_gc {
            // Old entries and blobs, so the GC has a few dozen deletions to be killed in.
            for _ in 0..12 {
                old += 1;
                let blob = format!("old render {old}");
                let r = format!("sha256:{:x}", Sha256::digest(blob.as_bytes()));
                let time = format!(
                    "2001{:02}{:02}T000000.{old:09}Z",
                    1 + old % 12,
                    1 + old % 28
                );
                for (key, body) in [
                    (format!("{PREFIX}renders/{r}"), blob.clone()),
                    (
                        format!("{PREFIX}history/{time}-{r}"),
                        format!(r#"{{"renderRef":"{r}"}}"#),
                    ),
                ] {
                    std::fs::create_dir_all(root.join(&key).parent().unwrap()).unwrap();
                    std::fs::write(root.join(&key), body).unwrap();
                }
            }
            let mut a = args(&[
                "gc",
                "ns/app",
                "--keep",
                &(1 + rng.below(3)).to_string(),
                "--grace",
                "0",
            ]);
            for r in &protected {
                a.extend(args(&["--protect", r]));
            }
            a
        } else {
            // A few renders big enough that the write itself takes a moment.
            let size = [64, 4 << 10, 512 << 10][rng.below(3) as usize];
            let objects = vec![
                store.object(next_object, size),
                store.object(next_object + 1, 16),
            ];
            next_object += 2;
            let mut a = args(&["put", "ns/app"]);
            a.extend(objects);
            a
        };
        let before = snapshot(&root);
        // The state an uninterrupted run leaves, on a copy.
        let expected_dir = store.dir.path().join(format!("expected{run}"));
        copy_dir(&root, &expected_dir);
        let started = Instant::now();
        store.run_on(&expected_dir, &command);
        typical = (typical * 3 + started.elapsed()) / 4;
        let expected = snapshot(&expected_dir);
        std::fs::remove_dir_all(&expected_dir).unwrap();

        // Half the kills anywhere in a typical run, half in its second half, where the
        // bucket calls are (the first is mostly process start).
        let span = typical.as_micros() as u64 + 1;
        let delay = Duration::from_micros(match run % 4 < 2 {
            true => rng.below(span),
            false => span / 2 + rng.below(span / 2 + 1),
        });
        let mut child = store.command(&command).spawn().unwrap();
        std::thread::sleep(delay);
        match child.try_wait().unwrap() {
            Some(_) => finished_first += 1,
            None => {
                child.kill().unwrap();
                if is_gc {
                    killed_gc += 1
                } else {
                    killed_put += 1
                }
            }
        }
        child.wait().unwrap();
        let after_kill = snapshot(&root);
        if after_kill != before && after_kill != expected {
            partial += 1;
        } else if after_kill == expected {
            complete += 1;
        }
        check_invariants(
            &after_kill,
            &protected,
            &neighbours,
            &format!("{context}, after the kill"),
        );
        // A killed GC deletes a subset of what it would have; a killed put adds its blob
        // or nothing.
        for key in before.keys().filter(|k| !after_kill.contains_key(*k)) {
            assert!(
                !expected.contains_key(key),
                "{context}: {key} deleted but kept by a full run"
            );
        }

        store.run_on(&root, &command);
        let after_rerun = snapshot(&root);
        check_invariants(
            &after_rerun,
            &protected,
            &neighbours,
            &format!("{context}, after the re-run"),
        );
        assert_eq!(
            after_rerun.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{context}: the re-run left another state than an uninterrupted run"
        );
        assert_eq!(after_rerun, expected, "{context}: same keys, other bytes");

        if !is_gc {
            // Record the render (a day later each time), and now and then protect one.
            let r = render_ref(&command[2..]);
            day += 1;
            let synced_at = format!("{}-01-01T00:00:00Z", 2030 + day);
            store.run_on(
                &root,
                &args(&["record", "ns/app", &r, "--synced-at", &synced_at]),
            );
            if rng.below(4) == 0 {
                protected.push(r);
                if protected.len() > 2 {
                    protected.remove(0);
                }
            }
        }
    }
    println!(
        "crash runs: seed {seed:#x}, {runs} runs: {killed_put} puts and {killed_gc} GCs killed, \
         {finished_first} finished before the kill; {partial} kills left the operation half \
         done, {complete} left it whole; invariants held after every kill and re-run"
    );
    // The kills must land: a run that finishes before its kill proves nothing. On a
    // loaded machine the time of an uninterrupted run (which sets the kill's delay) varies
    // a lot between runs, so a third is asked for, not the ~two thirds a quiet machine
    // reaches.
    assert!(
        killed_put + killed_gc >= runs / 3,
        "too few runs were killed mid-way: {killed_put} puts and {killed_gc} GCs of {runs} runs"
    );
}
