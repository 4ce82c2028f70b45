//! Encryption at rest (CONTRACT.md, Encryption at rest) on every backend: no stored
//! object holds any piece of a Secret value, renderRefs are the plaintext ones, a
//! flipped ciphertext byte is an integrity error, a missing key is named, GC and
//! delete-release decide as on a plaintext store, and `rekey` killed at moments across a
//! whole run leaves every blob readable.

use crate::support::{backends, copy_dir, release, runtime};
use render_store::{Bucket, Error, Keyring, RenderStore};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// Long random-looking values: finding any 8 bytes of one in a stored object means the
/// object holds it in clear.
fn secret_values(seed: u64) -> [String; 2] {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut value = || {
        (0..48)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                alphabet[(x % alphabet.len() as u64) as usize] as char
            })
            .collect::<String>()
    };
    [value(), value()]
}

fn secret_render(values: &[String; 2]) -> Vec<Vec<u8>> {
    vec![
        format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","namespace":"ns"}},"stringData":{{"password":"{}","token":"{}"}}}}"#,
            values[0], values[1]
        )
        .into_bytes(),
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"a":"b"}}"#.to_vec(),
    ]
}

fn leaks(blob: &[u8], values: &[String; 2]) -> bool {
    values.iter().any(|v| {
        v.as_bytes()
            .windows(8)
            .any(|w| blob.windows(8).any(|b| b == w))
    })
}

/// A keyring file of `ids` (each key 32 copies of its id's last byte), mode 0600.
pub fn keyring_file(dir: &Path, ids: &[&str]) -> PathBuf {
    use base64::Engine as _;
    use std::os::unix::fs::PermissionsExt;
    let text: String = ids
        .iter()
        .map(|id| {
            let key = [*id.as_bytes().last().unwrap(); 32];
            format!(
                "{id} {}\n",
                base64::engine::general_purpose::STANDARD.encode(key)
            )
        })
        .collect();
    let path = dir.join(format!("keys-{}", ids.join("-")));
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

async fn keyring(dir: &Path, ids: &[&str]) -> Keyring {
    Keyring::from_file(&runtime(), &keyring_file(dir, ids))
        .await
        .unwrap()
}

async fn every_object(bucket: &Arc<dyn Bucket>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for meta in bucket.list("").await.unwrap() {
        let bytes = bucket.get(&meta.key, u64::MAX).await.unwrap();
        out.push((meta.key, bytes));
    }
    out
}

#[tokio::test]
async fn an_encrypted_store_holds_no_secret_byte_and_decides_as_a_plaintext_one() {
    let keys_dir = tempfile::tempdir().unwrap();
    let ring = keyring(keys_dir.path(), &["k1"]).await;
    for (n, backend) in backends().into_iter().enumerate() {
        let name = backend.name;
        let values = secret_values(n as u64 + 1);
        let app = release("app");
        let plain =
            RenderStore::new(runtime(), backend.bucket.clone()).with_gc_grace(Duration::ZERO);
        let sealed = plain.with_keyring(ring.clone());
        let r = sealed
            .put_render(&app, &secret_render(&values))
            .await
            .unwrap();
        assert_eq!(
            r,
            runtime().render_ref(&secret_render(&values)).await.unwrap(),
            "{name}"
        );
        // An older render stored before encryption was turned on, and a newer one.
        let old = plain
            .put_render(&app, &crate::support::render(1))
            .await
            .unwrap();
        let newer = sealed
            .put_render(&app, &crate::support::render(2))
            .await
            .unwrap();
        for (r, t) in [(&old, 10), (&r, 20), (&newer, 30)] {
            let entry = render_store::NewEntry {
                render_ref: r.clone(),
                synced_at: crate::support::time(t),
                summary: String::new(),
            };
            sealed.record_history(&app, &entry).await.unwrap();
        }
        for (key, bytes) in every_object(&backend.bucket).await {
            assert!(
                !leaks(&bytes, &values),
                "{name}: {key} holds a Secret value"
            );
        }
        let canonical = runtime().canonical(&secret_render(&values)).await.unwrap();
        assert_eq!(
            sealed.get_render(&app, &r).await.unwrap(),
            canonical,
            "{name}"
        );
        assert!(
            sealed.get_render(&app, &old).await.is_ok(),
            "{name}: plaintext blob"
        );
        match plain.get_render(&app, &r).await {
            Err(Error::EncryptionKey(m)) => assert!(m.contains("\"k1\""), "{name}: {m}"),
            other => panic!("{name}: without the keyring: {other:?}"),
        }
        let other_key = keyring(keys_dir.path(), &["k2"]).await;
        match plain.with_keyring(other_key).get_render(&app, &r).await {
            Err(Error::EncryptionKey(m)) => assert!(m.contains("\"k1\"") && m.contains("\"k2\"")),
            other => panic!("{name}: another keyring: {other:?}"),
        }

        // A flipped ciphertext byte is an integrity error, never the render.
        let key = format!("ns/app/renders/{r}");
        let blob = backend.bucket.get(&key, u64::MAX).await.unwrap();
        let mut bad = blob.clone();
        let at = bad.len() - 30;
        bad[at] ^= 0x01;
        backend.bucket.put(&key, bad).await.unwrap();
        assert!(
            matches!(sealed.get_render(&app, &r).await, Err(Error::Corrupt(_))),
            "{name}"
        );
        backend.bucket.put(&key, blob).await.unwrap();

        // A store whose keyring lacks k1 cannot read r, and its GC keeps r all the same
        // while r is protected: GC never reads a blob to decide.
        let blob = |r: &str| format!("ns/app/renders/{r}");
        let k2_only = plain.with_keyring(keyring(keys_dir.path(), &["k2"]).await);
        let protected = [old.clone(), r.clone()];
        let plan = k2_only.gc(&app, 1, &protected, false).await.unwrap();
        assert!(plan.keep_renders.contains(&blob(&r)), "{name}: {plan:?}");
        assert_eq!(plan.delete_history.len(), 2, "{name}: {plan:?}");
        assert!(plan.delete_renders.is_empty(), "{name}: {plan:?}");

        // GC decides from keys alone: the encrypted store's plan is the plaintext one's,
        // and a blob that store cannot read but the history names is kept.
        let dry_sealed = sealed
            .gc(&app, 1, std::slice::from_ref(&old), true)
            .await
            .unwrap();
        let dry_plain = plain
            .gc(&app, 1, std::slice::from_ref(&old), true)
            .await
            .unwrap();
        assert_eq!(dry_sealed, dry_plain, "{name}");
        let plan = plain
            .gc(&app, 1, std::slice::from_ref(&old), false)
            .await
            .unwrap();
        assert!(
            plan.keep_renders.contains(&blob(&newer)),
            "{name}: {plan:?}"
        );
        assert!(plan.keep_renders.contains(&blob(&old)), "{name}: {plan:?}");
        assert_eq!(plan.delete_renders, [blob(&r)], "{name}");
        assert!(sealed.get_render(&app, &newer).await.is_ok(), "{name}");
        assert!(sealed.delete_release(&app).await.unwrap() > 0);
        assert!(
            backend.bucket.list("ns/app/").await.unwrap().is_empty(),
            "{name}"
        );
    }
}

fn cli(url: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"));
    c.env("RENDER_STORE_URL", url)
        .env_remove("RENDER_STORE_ENCRYPTION_KEYS")
        .env_remove("RENDER_STORE_ENCRYPTION_REQUIRED")
        .env("RENDER_STORE_VALIDATE", "false")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// How many of `refs` the blobs under `root` hold sealed under key `id`.
fn sealed_under(root: &Path, refs: &[(render_store::Release, String)], id: &str) -> usize {
    let header = format!("render-store-encrypted v2 {id} ");
    refs.iter()
        .filter(|(app, r)| {
            let path = root
                .join(&app.namespace)
                .join(&app.name)
                .join("renders")
                .join(r);
            std::fs::read(path).unwrap().starts_with(header.as_bytes())
        })
        .count()
}

#[tokio::test]
async fn rekey_killed_at_moments_across_a_whole_run_leaves_every_blob_readable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    std::fs::create_dir(&root).unwrap();
    let url = format!("file://{}", root.display());
    let store = RenderStore::open(&url).unwrap().unwrap();
    let old = keyring(dir.path(), &["k1"]).await;
    let mut refs = Vec::new();
    for i in 0..160u32 {
        let app = release(&format!("app{}", i % 4));
        let s = if i % 2 == 0 {
            store.clone()
        } else {
            store.with_keyring(old.clone())
        };
        let objects = vec![
            format!(
                r#"{{"kind":"ConfigMap","data":{{"n":"{i}","pad":"{}"}}}}"#,
                "x".repeat(20_000)
            )
            .into_bytes(),
        ];
        refs.push((app.clone(), s.put_render(&app, &objects).await.unwrap()));
    }
    let rotated_file = keyring_file(dir.path(), &["k2", "k1"]);
    let rotated_keys = keyring(dir.path(), &["k2", "k1"]).await;
    // How long a whole rekey takes here, on a copy: the kills land across that span.
    let copy = dir.path().join("copy");
    copy_dir(&root, &copy);
    let started = std::time::Instant::now();
    let whole = cli(&format!("file://{}", copy.display()))
        .args(["rekey", "--all", "--encryption-keys"])
        .arg(&rotated_file)
        .output()
        .unwrap();
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let span = started.elapsed();
    assert_eq!(sealed_under(&copy, &refs, "k2"), refs.len());
    // Each round starts from the store as it was and kills a rekey at the next of
    // ROUNDS evenly spaced moments of that span (the start of the process, its
    // listings, each blob's get and put, the staging of a put), then every blob must
    // still be readable, and a rekey run again must finish the work.
    const ROUNDS: u32 = 24;
    let mut partial = 0;
    for round in 0..ROUNDS {
        let at = span * (2 * round + 1) / (2 * ROUNDS);
        let here = dir.path().join(format!("round{round}"));
        copy_dir(&root, &here);
        let here_url = format!("file://{}", here.display());
        let mut child = cli(&here_url)
            .args(["rekey", "--all", "--encryption-keys"])
            .arg(&rotated_file)
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        let _ = child.kill();
        child.wait().unwrap();
        let done = sealed_under(&here, &refs, "k2");
        if 0 < done && done < refs.len() {
            partial += 1;
        }
        let rotated = RenderStore::open(&here_url)
            .unwrap()
            .unwrap()
            .with_keyring(rotated_keys.clone());
        for (app, r) in &refs {
            rotated
                .get_render(app, r)
                .await
                .unwrap_or_else(|e| panic!("round {round} ({at:?}): {app} {r}: {e}"));
        }
        let again = cli(&here_url)
            .args(["rekey", "--all", "--encryption-keys"])
            .arg(&rotated_file)
            .output()
            .unwrap();
        assert!(again.status.success(), "round {round}");
        assert_eq!(
            sealed_under(&here, &refs, "k2"),
            refs.len(),
            "round {round}"
        );
        std::fs::remove_dir_all(&here).unwrap();
    }
    eprintln!(
        "rekey killed at {ROUNDS} moments across {span:?}: {partial} kills landed with some \
         blobs rewritten and others not"
    );
    assert!(
        partial >= 2,
        "only {partial} of {ROUNDS} kills landed in the middle of the rewriting"
    );

    // One release, then the rest; every count adds up.
    let rekey = |which: &str| {
        let out = cli(&url)
            .args(["rekey", which, "-o", "json", "--encryption-keys"])
            .arg(&rotated_file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let report = rekey("ns/app0");
    assert_eq!(report["releases"], 1);
    assert_eq!(report["rewritten"].as_u64().unwrap(), 40);
    assert_eq!(sealed_under(&root, &refs, "k2"), 40);
    let report = rekey("--all");
    assert_eq!(report["releases"], 4);
    assert_eq!(report["rewritten"].as_u64().unwrap(), 120);
    assert_eq!(report["kept"].as_u64().unwrap(), 40);
    let only_new = store.with_keyring(keyring(dir.path(), &["k2"]).await);
    for (app, r) in &refs {
        only_new.get_render(app, r).await.unwrap();
    }
    // Without a keyring, rekey says what it needs.
    let out = cli(&url).args(["rekey", "--all"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--encryption-keys"));
}

#[test]
fn the_cli_reads_encrypted_stores_with_the_keyring_and_refuses_an_open_keyring_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    std::fs::create_dir(&root).unwrap();
    let url = format!("file://{}", root.display());
    let keys = keyring_file(dir.path(), &["k1"]);
    let values = secret_values(7);
    let file = dir.path().join("render.json");
    std::fs::write(&file, &secret_render(&values)[0]).unwrap();
    let put = cli(&url)
        .args(["put", "ns/app", file.to_str().unwrap()])
        .env("RENDER_STORE_ENCRYPTION_KEYS", &keys)
        .output()
        .unwrap();
    assert!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    let r = String::from_utf8(put.stdout).unwrap().trim().to_string();
    // Recorded with the keyring too: its entry carries a MAC and its index is sealed,
    // so verify below has nothing to report.
    let record = cli(&url)
        .args(["record", "ns/app", &r])
        .env("RENDER_STORE_ENCRYPTION_KEYS", &keys)
        .output()
        .unwrap();
    assert!(record.status.success());
    let trace = dir.path().join("get.jsonl");
    let get = cli(&url)
        .args(["get", "ns/app", "@0", "--encryption-keys"])
        .arg(&keys)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        get.status.success(),
        "{}",
        String::from_utf8_lossy(&get.stderr)
    );
    assert!(String::from_utf8_lossy(&get.stdout).contains(&values[0]));
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains(r#""keyIds":["k1"]"#) && !leaks(text.as_bytes(), &values));
    let replay = |with_keys: bool| {
        let mut c = cli(&url);
        c.arg("replay").arg(&trace);
        if with_keys {
            c.arg("--encryption-keys").arg(&keys);
        }
        c.output().unwrap()
    };
    assert!(replay(true).status.success());
    let refused = replay(false);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("\"k1\""));
    // The trace holds no key: neither the keyring file's text of it nor its bytes.
    let key_text = std::fs::read_to_string(&keys).unwrap();
    let key_b64 = key_text.split_whitespace().nth(1).unwrap();
    assert!(!text.contains(key_b64));
    assert!(!text.as_bytes().windows(32).any(|w| w == [b'1'; 32]));
    // A keyring whose "k1" is another key: replay fails, naming the key.
    let impostor = dir.path().join("impostor");
    std::fs::write(&impostor, format!("k1 {}\n", "Ag".repeat(21) + "A=")).unwrap();
    std::fs::set_permissions(&impostor, std::fs::Permissions::from_mode(0o600)).unwrap();
    let wrong = cli(&url)
        .arg("replay")
        .arg(&trace)
        .arg("--encryption-keys")
        .arg(&impostor)
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&wrong.stdout),
        String::from_utf8_lossy(&wrong.stderr)
    );
    assert!(
        said.contains("k1") && said.contains("the key check differs"),
        "{said}"
    );
    // A key never comes from the URL.
    let in_url = cli(&format!("{url}?encryption_keys={key_b64}"))
        .args(["get", "ns/app", &r])
        .output()
        .unwrap();
    assert!(!in_url.status.success());
    let said = String::from_utf8_lossy(&in_url.stderr);
    assert!(
        said.contains("encryption_keys") && !said.contains(key_b64),
        "{said}"
    );
    let verify = cli(&url)
        .args(["verify", "ns/app", "--encryption-keys"])
        .arg(&keys)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let diff = cli(&url)
        .args(["diff", "ns/app", "@0", &r, "--encryption-keys"])
        .arg(&keys)
        .output()
        .unwrap();
    assert!(
        diff.status.success(),
        "{}",
        String::from_utf8_lossy(&diff.stderr)
    );

    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o640)).unwrap();
    let open = cli(&url)
        .args(["get", "ns/app", &r, "--encryption-keys"])
        .arg(&keys)
        .output()
        .unwrap();
    assert!(!open.status.success());
    assert!(String::from_utf8_lossy(&open.stderr).contains("mode 0640"));

    // A keyring file another user owns chooses the keys for this one: refused. Only
    // root can give a file away, so only a test run as root can make one.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&keys, Some(65534), None).unwrap();
        let foreign = cli(&url)
            .args(["get", "ns/app", &r, "--encryption-keys"])
            .arg(&keys)
            .output()
            .unwrap();
        assert!(!foreign.status.success());
        let said = String::from_utf8_lossy(&foreign.stderr);
        assert!(said.contains("owned by user 65534"), "{said}");
    }
}

fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Bytes a writer of the bucket makes up: a sealed-blob header, then noise up to `size`.
fn forged(header: &str, size: usize) -> Vec<u8> {
    let mut blob = header.as_bytes().to_vec();
    let mut x = 0x2545_f491_u32;
    while blob.len() < size {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        blob.push(x as u8);
    }
    blob.truncate(size);
    blob
}

/// The header of the finding: a key id no keyring of the store ever held.
const FORGED: &str = "render-store-encrypted v1 zz 0123456789abcdef\n";

/// A file:// store in `dir` with two renders of `ns/app` put and recorded by the CLI
/// (with `keys` when given): the store's root, its URL, each render's file and ref.
fn two_renders(dir: &Path, keys: Option<&Path>) -> (PathBuf, String, Vec<(PathBuf, String)>) {
    let root = dir.join("store");
    std::fs::create_dir(&root).unwrap();
    let url = format!("file://{}", root.display());
    let mut renders = Vec::new();
    for n in 0..2u64 {
        let file = dir.join(format!("render{n}.json"));
        std::fs::write(&file, &secret_render(&secret_values(n + 40))[0]).unwrap();
        let mut put = cli(&url);
        put.args(["put", "ns/app"]).arg(&file);
        if let Some(keys) = keys {
            put.arg("--encryption-keys").arg(keys);
        }
        let out = put.output().unwrap();
        assert!(out.status.success(), "{}", said(&out));
        let r = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let mut record = cli(&url);
        record.args(["record", "ns/app", &r]);
        if let Some(keys) = keys {
            record.arg("--encryption-keys").arg(keys);
        }
        let record = record.output().unwrap();
        assert!(record.status.success(), "{}", said(&record));
        renders.push((file, r));
    }
    (root, url, renders)
}

/// `verify ns/app -o json` and its problems, by key.
fn verify_json(url: &str, flags: &[&std::ffi::OsStr]) -> (Option<i32>, serde_json::Value) {
    let out = cli(url)
        .args(["verify", "ns/app", "-o", "json"])
        .args(flags)
        .output()
        .unwrap();
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(&out)));
    (out.status.code(), report)
}

#[tokio::test]
async fn a_forged_sealed_header_on_a_store_without_encryption_is_reported_and_put_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let (root, url, renders) = two_renders(dir.path(), None);
    let (file, r) = &renders[0];
    let blob = root.join("ns/app/renders").join(r);
    let right = std::fs::read(&blob).unwrap();
    let genuine_size = FORGED.len() + right.len() + 16;
    let get = || cli(&url).args(["get", "ns/app", r]).output().unwrap();
    // The finding's forgery at sizes a sealed blob of this render would have under
    // another header, and at its plaintext size, which put's size check passes.
    for size in [genuine_size + 5, genuine_size - 1, right.len()] {
        std::fs::write(&blob, forged(FORGED, size)).unwrap();
        let refused = get();
        assert!(!refused.status.success());
        assert!(said(&refused).contains("\"zz\""), "{}", said(&refused));
        // verify reports it and goes on: the other render is read, its entry too.
        let (code, report) = verify_json(&url, &[]);
        assert_eq!(code, Some(1), "{report}");
        assert_eq!(report["renders"], 2, "{report}");
        assert_eq!(report["entries"], 2, "{report}");
        let problems = report["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{report}");
        assert_eq!(problems[0]["kind"], "encryption-key", "{report}");
        assert_eq!(
            problems[0]["key"],
            format!("ns/app/renders/{r}"),
            "{report}"
        );
        assert!(problems[0]["message"].as_str().unwrap().contains("\"zz\""));
        // put writes the right content over it, and get reads it again.
        let put = cli(&url)
            .args(["put", "ns/app"])
            .arg(file)
            .output()
            .unwrap();
        assert!(put.status.success(), "{size}: {}", said(&put));
        assert_eq!(std::fs::read(&blob).unwrap(), right, "{size}");
        let got = get();
        assert!(got.status.success(), "{}", said(&got));
        assert_eq!(got.stdout, right);
        assert_eq!(verify_json(&url, &[]).0, Some(0));
    }
    // Exactly the size of this render sealed under that header: without the key it
    // cannot be told from a genuine sealed blob, which a host without the keyring must
    // never replace by plaintext. put refuses with what to do and changes nothing.
    let exact = forged(FORGED, genuine_size);
    std::fs::write(&blob, &exact).unwrap();
    let put = cli(&url)
        .args(["put", "ns/app"])
        .arg(file)
        .output()
        .unwrap();
    assert!(!put.status.success());
    let message = said(&put);
    assert!(
        message.contains("\"zz\"")
            && message.contains("never had a key of that id")
            && message.contains("delete it"),
        "{message}"
    );
    assert_eq!(std::fs::read(&blob).unwrap(), exact);
    let out = cli(&url).args(["verify", "ns/app"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("encryption-key ns/app/renders/{r}"))
            && text.contains("delete the blob with the storage's own tools")
            && text.contains("read 2 renders and 2 history entries of 1 release: 1 problem"),
        "{text}"
    );
    // What verify says to do: the blob deleted, put stores the render again.
    std::fs::remove_file(&blob).unwrap();
    let put = cli(&url)
        .args(["put", "ns/app"])
        .arg(file)
        .output()
        .unwrap();
    assert!(put.status.success(), "{}", said(&put));
    assert_eq!(std::fs::read(&blob).unwrap(), right);
    // A header that does not read at all is corrupt, and put replaces it as well.
    std::fs::write(&blob, forged(&FORGED.replace("v1", "v7"), genuine_size)).unwrap();
    let (code, report) = verify_json(&url, &[]);
    assert_eq!(
        (code, &report["problems"][0]["kind"]),
        (Some(1), &"corrupt".into())
    );
    let put = cli(&url)
        .args(["put", "ns/app"])
        .arg(file)
        .output()
        .unwrap();
    assert!(put.status.success(), "{}", said(&put));
    assert_eq!(std::fs::read(&blob).unwrap(), right);
}

#[tokio::test]
async fn with_a_keyring_put_leaves_a_blob_that_opens_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keyring_file(dir.path(), &["k1"]);
    let (root, url, renders) = two_renders(dir.path(), Some(&keys));
    let (file, r) = &renders[0];
    let blob = root.join("ns/app/renders").join(r);
    let sealed = std::fs::read(&blob).unwrap();
    // Forgeries of the sealed blob's very size, which put's size check passes: another
    // key's header, this key's id with another check, a flipped tag.
    let mut flipped = sealed.clone();
    *flipped.last_mut().unwrap() ^= 1;
    for planted in [
        forged(FORGED, sealed.len()),
        forged(
            "render-store-encrypted v1 k1 0123456789abcdef\n",
            sealed.len(),
        ),
        flipped,
    ] {
        std::fs::write(&blob, &planted).unwrap();
        let (code, report) = verify_json(&url, &["--encryption-keys".as_ref(), keys.as_os_str()]);
        assert_eq!(code, Some(1), "{report}");
        assert_eq!(report["renders"], 2, "{report}");
        let put = cli(&url)
            .args(["put", "ns/app"])
            .arg(file)
            .arg("--encryption-keys")
            .arg(&keys)
            .output()
            .unwrap();
        assert!(put.status.success(), "{}", said(&put));
        assert!(
            said(&put).contains("rewrote the damaged blob"),
            "{}",
            said(&put)
        );
        assert_eq!(std::fs::read(&blob).unwrap(), sealed);
    }
}

#[tokio::test]
async fn encryption_required_refuses_a_planted_plaintext_blob_and_put_seals_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keyring_file(dir.path(), &["k1"]);
    let (root, url, renders) = two_renders(dir.path(), Some(&keys));
    let (file, r) = &renders[0];
    let blob = root.join("ns/app/renders").join(r);
    let sealed = std::fs::read(&blob).unwrap();
    let objects = vec![std::fs::read(file).unwrap()];
    let plain = runtime().canonical(&objects).await.unwrap();
    // A writer without the key plants plaintext (a renderRef is the hash of plaintext,
    // so any render they can write under its own ref reads the same way).
    std::fs::write(&blob, &plain).unwrap();
    let get = |flags: &[&str], env: Option<&str>| {
        let mut c = cli(&url);
        c.args(["get", "ns/app", r.as_str(), "--encryption-keys"])
            .arg(&keys)
            .args(flags);
        if let Some(v) = env {
            c.env("RENDER_STORE_ENCRYPTION_REQUIRED", v);
        }
        c.output().unwrap()
    };
    // Without the rule it reads, as a store where encryption was turned on reads its
    // old blobs (README says so), and verify has nothing to say.
    let lenient = get(&[], None);
    assert!(lenient.status.success(), "{}", said(&lenient));
    assert_eq!(lenient.stdout, plain);
    let k: &[&std::ffi::OsStr] = &["--encryption-keys".as_ref(), keys.as_os_str()];
    assert_eq!(verify_json(&url, k).0, Some(0));
    // With it, by flag or environment, it is refused, naming the rule and the blob.
    for (flags, env) in [
        (&["--encryption-required"][..], None),
        (&[][..], Some("true")),
    ] {
        let refused = get(flags, env);
        assert!(!refused.status.success());
        let message = said(&refused);
        assert!(
            message.contains("encryption is required, and blob ns/app/renders/")
                && message.contains("is plaintext"),
            "{message}"
        );
        assert!(!refused.stdout.starts_with(&plain[..8]), "{message}");
    }
    let diff = cli(&url)
        .args([
            "diff",
            "ns/app",
            renders[1].1.as_str(),
            r.as_str(),
            "--encryption-required",
            "--encryption-keys",
        ])
        .arg(&keys)
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(2), "{}", said(&diff));
    assert!(said(&diff).contains("is plaintext"), "{}", said(&diff));
    let required: Vec<&std::ffi::OsStr> = vec![
        "--encryption-required".as_ref(),
        "--encryption-keys".as_ref(),
        keys.as_os_str(),
    ];
    let (code, report) = verify_json(&url, &required);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["renders"], 2, "{report}");
    assert_eq!(report["problems"][0]["kind"], "corrupt", "{report}");
    assert!(
        report["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("is plaintext")
    );
    // A get under the rule, traced, says so in the header and replays the same.
    let trace = dir.path().join("get.jsonl");
    let traced = get(
        &["--encryption-required", "--trace", trace.to_str().unwrap()],
        None,
    );
    assert!(!traced.status.success());
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(r#""encryptionRequired":true"#),
        "{text}"
    );
    let replay = cli(&url)
        .arg("replay")
        .arg(&trace)
        .arg("--encryption-keys")
        .arg(&keys)
        .output()
        .unwrap();
    assert!(replay.status.success(), "{}", said(&replay));
    // put under the rule rewrites it sealed; then everything reads under the rule.
    let put = cli(&url)
        .args(["put", "ns/app"])
        .arg(file)
        .args(&required)
        .output()
        .unwrap();
    assert!(put.status.success(), "{}", said(&put));
    assert_eq!(std::fs::read(&blob).unwrap(), sealed);
    assert!(get(&["--encryption-required"], None).status.success());
    assert_eq!(verify_json(&url, &required).0, Some(0));
    // The rule needs a keyring: asked for without one, every command stops before the
    // store is touched.
    let before = crate::support::snapshot(&root);
    for args in [
        &["put", "ns/app", file.to_str().unwrap()][..],
        &["get", "ns/app", r.as_str()],
        &["verify"],
    ] {
        let out = cli(&url)
            .args(args)
            .env("RENDER_STORE_ENCRYPTION_REQUIRED", "true")
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(
            said(&out).contains(
                "--encryption-required (RENDER_STORE_ENCRYPTION_REQUIRED) needs a keyring"
            ),
            "{}",
            said(&out)
        );
    }
    assert_eq!(crate::support::snapshot(&root), before);
    // Through the library, too.
    let store = RenderStore::open(&url).unwrap().unwrap();
    let err = store.with_encryption_required(true).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidInput(m) if m.starts_with("encryption is required, and the keyring is empty")),
        "{err}"
    );
}
