//! The JavaScript, Python and Go packages side by side with the Rust host, in one run: for
//! each public real render and for 64 MiB renders (one object of one long string; 20,000
//! small objects), the median time of `render_ref`, `put_render` (into a fresh memory
//! bucket) and `get_render` in each host, and each package's time over the Rust host's.
//!
//! The hosts are measured in turn, case by case (each package's script runs once a case,
//! so the three figures of a case are taken within seconds of each other), in several
//! rounds (`RENDER_STORE_BENCH_ROUNDS`, default 5), and each figure is the fastest of its
//! rounds: on a shared machine a neighbour's burst slows whichever host runs at that
//! moment, and taking each host's least disturbed round keeps such bursts out of the
//! ratios.
//!
//! `cargo bench -p render-store-tests --bench packages`. The packages are measured as
//! their test scripts leave them: run `host/js/run.sh` (it builds the component
//! into host/js/generated) and `host/python/run.sh` (it installs the wheel into its venv)
//! first; `RENDER_STORE_BENCH_PYTHON` names another interpreter with the package. The
//! Go package is built here (`go build -tags renderstore_release`) against the release
//! C library, and the Python package loads that library (`RENDER_STORE_LIBRARY`): run
//! `cargo build --release -p render-store-capi` first.
//! A package that cannot run is reported as not available, with the reason.
//! `RENDER_STORE_BENCH_ONLY=TEXT,…` measures only the cases whose name holds one of the
//! texts (`ingress,metallb`: the two smallest real renders).

use render_store::{Release, RenderStore, Runtime, open_bucket};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "go-peer/driver.rs"]
mod go_peer;

const OPS: [&str; 3] = ["render_ref", "put_render", "get_render"];
const MIB: usize = 1 << 20;

/// Median time of `f` over at least 3 runs and `min_time` (at most 200 runs), after a
/// warm-up of at least one run and `min_time` (at most 10,000 runs): the rule the
/// JavaScript and Python scripts follow too. The warm-up is long because V8 compiles
/// the component's hot functions with its optimizing tier in the background while the
/// calls run: on a small render Node's median `putRender` keeps falling for the first
/// thousands of calls, and the figures compare hosts that are all warm.
fn median<T>(min_time: Duration, mut f: impl FnMut() -> T) -> Duration {
    let start = Instant::now();
    let mut warm = 0;
    while warm < 1 || (start.elapsed() < min_time && warm < 10_000) {
        std::hint::black_box(f());
        warm += 1;
    }
    let start = Instant::now();
    let mut runs = Vec::new();
    while runs.len() < 3 || (start.elapsed() < min_time && runs.len() < 200) {
        let t = Instant::now();
        std::hint::black_box(f());
        runs.push(t.elapsed());
    }
    runs.sort();
    runs[runs.len() / 2]
}

/// The 64 MiB renders every host is given, as canonical objects whose canonical render
/// (one newline each) is exactly 64 MiB.
fn big_renders() -> Vec<(String, Vec<Vec<u8>>)> {
    let size = 64 * MIB;
    let (head, tail) = (br#"{"data":""#.as_slice(), br#""}"#.as_slice());
    let mut one = head.to_vec();
    one.resize(size - 1 - tail.len(), b'x');
    one.extend_from_slice(tail);
    let (per, extra) = (size / 20_000, size % 20_000);
    let small = (0..20_000)
        .map(|i| {
            let head = br#"{"apiVersion":"v1","data":{"k":""#;
            let tail = format!(r#""}},"kind":"ConfigMap","metadata":{{"name":"cm-{i:05}"}}}}"#);
            let n = per - 1 + if i == 0 { extra } else { 0 };
            let mut o = head.to_vec();
            o.resize(n - tail.len(), b'v');
            o.extend_from_slice(tail.as_bytes());
            o
        })
        .collect();
    vec![
        ("64 MiB, one string".to_string(), vec![one]),
        ("64 MiB, 20,000 objects".to_string(), small),
    ]
}

type Times = BTreeMap<String, BTreeMap<String, f64>>;

/// Keeps in `into` the faster of its time and `round`'s for every case and call.
fn keep_fastest(into: &mut Times, round: Times) {
    for (case, calls) in round {
        let kept = into.entry(case).or_default();
        for (call, t) in calls {
            let k = kept.entry(call).or_insert(t);
            *k = k.min(t);
        }
    }
}

fn rust_times(cases: &[(String, Vec<Vec<u8>>)], min_time: Duration) -> Times {
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let rt = Runtime::shared().expect("the component compiles");
    let release = Release::parse("bench/app").expect("a valid release");
    let mut times = Times::new();
    for (name, objects) in cases {
        let mut t = BTreeMap::new();
        let s = |d: Duration| d.as_secs_f64();
        t.insert(
            "render_ref".into(),
            s(median(min_time, || {
                tokio.block_on(rt.render_ref(objects)).unwrap()
            })),
        );
        t.insert(
            "put_render".into(),
            s(median(min_time, || {
                let store = RenderStore::new(rt.clone(), open_bucket("mem://").unwrap().unwrap());
                tokio.block_on(store.put_render(&release, objects)).unwrap()
            })),
        );
        let store = RenderStore::new(rt.clone(), open_bucket("mem://").unwrap().unwrap());
        let r = tokio.block_on(store.put_render(&release, objects)).unwrap();
        t.insert(
            "get_render".into(),
            s(median(min_time, || {
                tokio.block_on(store.get_render(&release, &r)).unwrap()
            })),
        );
        times.insert(name.clone(), t);
    }
    times
}

/// Runs a package's measuring script on the cases written under `dir`; its times, or
/// why it could not run.
fn package_times(mut cmd: Command, dir: &Path, cases: &[String]) -> Result<Times, String> {
    let out = cmd
        .arg(dir)
        .args(cases)
        .output()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("failed").to_string());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("unreadable output: {e}"))
}

/// The release C library beside this bench's binary, or why there is none.
fn release_library() -> Result<PathBuf, String> {
    let release = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .ok_or("cannot find the target folder")?;
    let library = release.join("librender_store_capi.so");
    match library.exists() {
        true => Ok(library),
        false => Err(format!(
            "no {}: cargo build --release -p render-store-capi",
            library.display()
        )),
    }
}

fn script_is_python(script: Option<&str>) -> bool {
    script.is_some_and(|s| s.ends_with(".py"))
}

/// Builds the Go package's measuring program against the release C library beside this
/// bench's binary; its path, or why it could not be built.
fn go_program(repo: &Path, into: &Path) -> Result<PathBuf, String> {
    let library = release_library()?;
    let release = library.parent().expect("the library is in a folder");
    let program = into.join("bench-go");
    let out = Command::new("go")
        .current_dir(repo.join("host/go"))
        .args(["build", "-tags", "renderstore_release", "-o"])
        .arg(&program)
        .arg("./bench")
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .env(
            "CGO_LDFLAGS",
            format!("-L{0} -Wl,-rpath,{0}", release.display()),
        )
        .output()
        .map_err(|e| format!("cannot start go: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("go build failed").to_string());
    }
    Ok(program)
}

fn python() -> PathBuf {
    std::env::var_os("RENDER_STORE_BENCH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir()
                .join("render-store-interop-venv")
                .join("bin")
                .join("python")
        })
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let min_time = Duration::from_millis(500);
    let mut cases: Vec<(String, Vec<Vec<u8>>)> = go_peer::real_renders()
        .into_iter()
        .map(|r| (r.name.clone(), r.objects()))
        .collect();
    cases.extend(big_renders());
    // RENDER_STORE_BENCH_ONLY=ingress,metallb measures only the cases whose name holds
    // one of those texts.
    if let Ok(only) = std::env::var("RENDER_STORE_BENCH_ONLY") {
        cases.retain(|(name, _)| only.split(',').any(|part| name.contains(part)));
        assert!(!cases.is_empty(), "no case's name holds any of {only:?}");
    }

    // Each case as JSON lines (one compact object a line), for the scripts.
    let dir = tempfile::tempdir().unwrap();
    for (i, (_, objects)) in cases.iter().enumerate() {
        let mut text = Vec::new();
        for o in objects {
            assert!(!o.contains(&b'\n'), "a compact object holds no newline");
            text.extend_from_slice(o);
            text.push(b'\n');
        }
        std::fs::write(dir.path().join(format!("{i}.jsonl")), text).unwrap();
    }
    let indices: Vec<String> = (0..cases.len()).map(|i| i.to_string()).collect();

    let rounds: usize = std::env::var("RENDER_STORE_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(5);
    println!(
        "packages side by side — the Rust host, the npm package (Node.js), the Python package (ctypes over the C ABI), the Go package (cgo over the C ABI)"
    );
    println!(
        "each figure: the fastest of {rounds} rounds (the hosts in turn, case by case), each round the median of at least 3 runs"
    );
    println!("ratio = the package's time over the Rust host's");
    // Each package: its name, the program that measures it and its script (none for
    // Go's compiled program).
    let packages: [(&str, Result<PathBuf, String>, Option<&str>); 3] = [
        (
            "node",
            Ok(PathBuf::from("node")),
            Some("host/js/bench/packages.mjs"),
        ),
        (
            "python",
            Ok(python()),
            Some("host/python/bench/packages.py"),
        ),
        ("go", go_program(&repo, dir.path()), None),
    ];
    let mut rust = Times::new();
    // A host whose program could not be made is not available from the start.
    let mut hosts: Vec<(&str, Result<Times, String>)> = packages
        .iter()
        .map(|(name, program, _)| (*name, program.clone().map(|_| Times::new())))
        .collect();
    // Case by case, every host in turn: the machine's speed drifts over minutes, and the
    // hosts' figures for one case are taken within seconds of each other.
    for _ in 0..rounds {
        for (i, case) in cases.iter().enumerate() {
            keep_fastest(&mut rust, rust_times(std::slice::from_ref(case), min_time));
            for ((_, program, script), (_, kept)) in packages.iter().zip(hosts.iter_mut()) {
                let (Ok(times), Ok(program)) = (&mut *kept, program) else {
                    continue;
                };
                let mut cmd = Command::new(program);
                if let Some(script) = script {
                    cmd.arg(repo.join(script));
                }
                // The Python package over the release C library, as the Go one: the
                // wheel the tests installed carries the debug build.
                if let Some(library) = release_library().ok().filter(|_| script_is_python(*script))
                {
                    cmd.env("RENDER_STORE_LIBRARY", library);
                }
                match package_times(cmd, dir.path(), &indices[i..=i]) {
                    Ok(round) => keep_fastest(times, round),
                    Err(why) => *kept = Err(why),
                }
            }
        }
    }
    for (host, result) in &hosts {
        if let Err(why) = result {
            println!("{host}: not available ({why})");
        }
    }
    let mut header = format!("\n{:<26} {:<11} {:>10}", "render", "call", "rust");
    for (host, _) in &hosts {
        header += &format!(" {host:>10} {:>7}", "ratio");
    }
    println!("{header} {:>9}", "MiB");
    for (i, (name, objects)) in cases.iter().enumerate() {
        let mib = objects.iter().map(|o| o.len() + 1).sum::<usize>() as f64 / MIB as f64;
        for op in OPS {
            let r = rust[name][op];
            let mut line = format!("{name:<26} {op:<11} {:>10}", ms(r));
            for (_, result) in &hosts {
                match result
                    .as_ref()
                    .ok()
                    .and_then(|t| t.get(&i.to_string()))
                    .and_then(|t| t.get(op))
                {
                    Some(p) => line += &format!(" {:>10} {:>6.2}×", ms(*p), p / r),
                    None => line += &format!(" {:>10} {:>7}", "n/a", ""),
                }
            }
            println!("{line} {mib:>9.2}");
        }
    }
    println!("\nthroughput (MiB/s of canonical render):");
    for (i, (name, objects)) in cases.iter().enumerate() {
        let mib = objects.iter().map(|o| o.len() + 1).sum::<usize>() as f64 / MIB as f64;
        for op in OPS {
            let mut line = format!("{name:<26} {op:<11} rust {:>7.1}", mib / rust[name][op]);
            for (host, result) in &hosts {
                if let Some(p) = result
                    .as_ref()
                    .ok()
                    .and_then(|t| t.get(&i.to_string()))
                    .and_then(|t| t.get(op))
                {
                    line += &format!("  {host} {:>7.1}", mib / p);
                }
            }
            println!("{line}");
        }
    }
}

fn ms(seconds: f64) -> String {
    format!("{:.2} ms", seconds * 1e3)
}
