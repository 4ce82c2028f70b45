//! Progress on standard error: shown when it is a terminal (a pseudo-terminal here),
//! never in a pipe, never with `--quiet`.

use super::cli::Cli;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// Runs the CLI with standard error on a new pseudo-terminal: whether it succeeded, its
/// standard output, and what the terminal showed.
fn on_terminal(cli: &Cli, args: &[&str]) -> (bool, String, String) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors, which are owned below and nowhere else.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty.
    let (mut master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    };
    // The terminal is read while the command runs, so a full buffer never blocks it;
    // the read ends (EIO) once the last descriptor of the other side is closed.
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        let _ = master.read_to_end(&mut shown);
        String::from_utf8_lossy(&shown).into_owned()
    });
    let output = {
        let mut command = Command::new(env!("CARGO_BIN_EXE_render-store-under-test"));
        // Ad-hoc objects without Kubernetes names: this topic is not that rule.
        command.env("RENDER_STORE_VALIDATE", "false");
        command
            .args(args)
            .env("RENDER_STORE_URL", &cli.url)
            .stderr(Stdio::from(slave));
        command.output().unwrap()
        // `command`, holding the parent's copy of the terminal, is dropped here.
    };
    let shown = reader.join().unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        shown,
    )
}

/// A release with `n` renders and entries; returns the object files' paths.
fn populate(cli: &Cli, n: u32) {
    for i in 0..n {
        let file = cli.object(
            &format!("o{i}.json"),
            &format!(r#"{{"kind":"ConfigMap","metadata":{{"name":"c"}},"data":{{"i":"{i}"}}}}"#),
        );
        let r = cli.ok(&["put", "ns/app", &file]);
        cli.ok(&[
            "record",
            "ns/app",
            r.trim(),
            "--synced-at",
            &format!("2026-01-01T00:00:0{i}Z"),
        ]);
    }
}

#[test]
fn delete_release_and_gc_count_their_deletes_on_a_terminal() {
    let cli = Cli::file_store();
    populate(&cli, 4);
    let (ok, stdout, shown) = on_terminal(&cli, &["gc", "ns/app", "--keep", "1", "--grace", "0"]);
    assert!(ok, "{shown}");
    // Three old entries and their three renders; the history is listed twice but its
    // keys counted once: 4 entries and 4 renders.
    assert!(shown.contains("gc: deleted 6 keys (8 listed)"), "{shown:?}");
    assert!(stdout.contains("deleted"), "{stdout}");

    let (ok, stdout, shown) = on_terminal(&cli, &["delete-release", "ns/app"]);
    assert!(ok, "{shown}");
    // The entry, its render and the release index.
    assert!(
        shown.contains("delete-release: deleted 3 of 3 keys"),
        "{shown:?}"
    );
    // Standard output is the command's answer alone.
    assert_eq!(stdout, "deleted 3 keys of ns/app\n");

    // --quiet: nothing on the terminal.
    populate(&cli, 2);
    let (ok, _, shown) = on_terminal(&cli, &["--quiet", "delete-release", "ns/app"]);
    assert!(ok);
    assert_eq!(shown, "", "--quiet showed progress");

    // Standard error in a pipe: nothing either.
    populate(&cli, 2);
    let out = cli.run(&["delete-release", "ns/app"]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_large_put_shows_its_bytes_and_a_small_one_nothing() {
    let cli = Cli::file_store();
    let large = cli.object(
        "large.json",
        &format!(
            r#"{{"kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"blob":"{}"}}}}"#,
            "x".repeat(3 << 20)
        ),
    );
    let (ok, stdout, shown) = on_terminal(&cli, &["put", "ns/app", &large]);
    assert!(ok, "{shown}");
    assert!(stdout.starts_with("sha256:"), "{stdout}");
    assert!(shown.contains("put: canonicalizing 3.0 MiB"), "{shown:?}");
    assert!(shown.contains("put: stored 3.0 MiB of render"), "{shown:?}");
    // Stored already: checked, not written again.
    let (ok, _, shown) = on_terminal(&cli, &["put", "ns/app", &large]);
    assert!(ok);
    assert!(
        shown.contains("put: already stored, nothing written") && !shown.contains("writing"),
        "{shown:?}"
    );

    let small = cli.object("small.json", r#"{"kind":"ConfigMap"}"#);
    let (ok, _, shown) = on_terminal(&cli, &["put", "ns/app", &small]);
    assert!(ok);
    assert_eq!(shown, "", "a small put showed progress");
}
