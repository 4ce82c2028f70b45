//! Whole-process time of the CLI against the Go peer's, in one run: `render-store
//! --version` (process start alone), `render-store ref FILE` of a small render, and the
//! Go peer computing the same renderRef (`go-peer json FILE`, the controller's path in a
//! process of its own). Runs alternate between the commands so that load on a shared
//! machine falls on all of them; the median of each is printed with its ratio to Go's.
//!
//! `cargo bench -p render-store-tests --bench cli_start`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "go-peer/driver.rs"]
mod go_peer;

const RUNS: usize = 60;

fn run(program: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the program starts");
    let took = start.elapsed();
    assert!(status.success(), "{} {args:?} failed", program.display());
    took
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    let cli = Path::new(env!("CARGO_BIN_EXE_render-store-under-test"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.json");
    std::fs::write(
        &file,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"k":"v"}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let go = go_peer::GoPeer::build();
    // The compiled component is cached on the first run; measure from the second.
    run(cli, &["ref", file]);

    let (mut version, mut cli_ref, mut go_ref) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        version.push(run(cli, &["--version"]));
        cli_ref.push(run(cli, &["ref", file]));
        if let Ok(go) = &go {
            go_ref.push(run(&go.exe, &["json", file]));
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("whole process, median of {RUNS} alternating runs");
    println!("render-store --version   {:>7.2} ms", ms(median(version)));
    let cli_ref = median(cli_ref);
    println!("render-store ref FILE    {:>7.2} ms", ms(cli_ref));
    match go {
        Ok(_) => {
            let go_ref = median(go_ref);
            println!("go-peer json FILE        {:>7.2} ms", ms(go_ref));
            println!(
                "ref / Go                 {:>7.2}×  (target: at most 1.5×)",
                cli_ref.as_secs_f64() / go_ref.as_secs_f64()
            );
        }
        Err(why) => println!("go-peer json FILE        not available ({why})"),
    }
}
