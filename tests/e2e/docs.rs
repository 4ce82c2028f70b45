//! The docs do not point at what is not there. Docs drift: a file moves and a README
//! still names its old path, a section is renumbered and "§N" still cites it, a design
//! note that never entered the repository is still referred to. This reads the top-level
//! docs and every README.md under host/ and tests/ and fails naming the doc and the
//! reference when (a) a repository path written in backticks does not exist, (b) a "§N"
//! is not a section of CONTRACT.md, or (c) a doc mentions DESIGN.

use std::path::{Path, PathBuf};

const TOP_DOCS: [&str; 4] = ["README.md", "CONTRACT.md", "TRACES.md", "BENCHMARKS.md"];
const TOP_DIRS: [&str; 5] = ["guest/", "host/", "tests/", "wit/", ".ci/"];

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).to_path_buf()
}

/// The docs checked, as paths relative to the repository's root.
fn docs(root: &Path) -> Vec<PathBuf> {
    fn readmes(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                // Installed dependencies and build output are not the repository's.
                if !(name.starts_with('.') || name == "node_modules" || name == "target") {
                    readmes(&path, root, out);
                }
            } else if name == "README.md" {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    let mut out: Vec<PathBuf> = TOP_DOCS.iter().map(PathBuf::from).collect();
    for dir in ["host", "tests"] {
        readmes(&root.join(dir), root, &mut out);
    }
    out
}

/// The backticked texts (code spans within a line) of `text` that name a repository path.
fn paths(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let pieces: Vec<&str> = line.split('`').collect();
        // The odd pieces are in backticks, but for a last one that is never closed.
        for span in pieces
            .iter()
            .skip(1)
            .step_by(2)
            .take((pieces.len() - 1) / 2)
        {
            let path = span.trim_end_matches(['.', ',', ';', ':', ')']);
            let plain = !path.contains([' ', '*', '?', '<', '$', '…']) && !path.contains("://");
            let named = TOP_DOCS.contains(&path)
                || (path.contains('/') && TOP_DIRS.iter().any(|d| path.starts_with(d)));
            // npm's installed dependencies are no repository path.
            let installed = path.split('/').any(|part| part == "node_modules");
            if plain && named && !installed {
                out.push(path);
            }
        }
    }
    out
}

/// The numbers N of every "§N" in `text`.
fn sections(text: &str) -> Vec<String> {
    text.split('§')
        .skip(1)
        .map(|s| {
            s.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

#[test]
fn docs_name_only_what_exists() {
    let root = root();
    let contract = std::fs::read_to_string(root.join("CONTRACT.md")).unwrap();
    // CONTRACT.md numbers its sections in their headings: "## §N Title".
    let numbered: Vec<String> = contract
        .lines()
        .filter(|line| line.starts_with("## §"))
        .flat_map(sections)
        .collect();
    assert!(
        numbered.len() > 5,
        "CONTRACT.md's sections not found: {numbered:?}"
    );
    let mut problems = Vec::new();
    for doc in docs(&root) {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        let shown = doc.display();
        // A package's README may name its own files relative to its folder.
        let folder = root.join(&doc).parent().unwrap().to_path_buf();
        for path in paths(&text) {
            if !root.join(path).exists() && !folder.join(path).exists() {
                problems.push(format!("{shown}: `{path}` does not exist"));
            }
        }
        for n in sections(&text) {
            if !numbered.contains(&n) {
                problems.push(format!("{shown}: §{n} is not a section of CONTRACT.md"));
            }
        }
        if text.contains("DESIGN") {
            problems.push(format!(
                "{shown}: mentions DESIGN, which is not in the repository"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "broken references in the docs:\n{}",
        problems.join("\n")
    );
}
