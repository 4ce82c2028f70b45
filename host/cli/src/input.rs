//! Renders as users hold them: files and standard input, each one JSON object or a YAML
//! stream (`helm template`, `kustomize build`, a release's `deploy.yaml`). The YAML is
//! turned into objects by the component, exactly as a Go controller reads it.

use anyhow::{Context, Result, bail};
use render_store::Runtime;
use std::io::Read;
use std::path::{Path, PathBuf};

/// How an input is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// JSON when the first byte other than white space is `{`, YAML otherwise.
    Auto,
    /// One JSON object.
    Json,
    /// A YAML stream: every document that is not empty or `null` is an object.
    Yaml,
}

/// The inputs of a render, as `ref`, `canonical` and `put` take them.
#[derive(Debug, Clone, clap::Args)]
pub struct RenderInput {
    /// How each input is read: auto (JSON if it starts with `{`, YAML otherwise), json
    /// (one object) or yaml (a stream of documents).
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Files in render order, `-` for standard input; none: standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

impl RenderInput {
    /// The render's objects, read as [`read_render`] reads them, up to the runtime's
    /// memory cap.
    pub async fn read(&self, rt: &Runtime) -> Result<Vec<Vec<u8>>> {
        read_render(rt, &self.files, self.format, rt.limits().memory_bytes).await
    }
}

/// The name standard input goes by on the command line.
const STDIN: &str = "-";

/// The objects of the render `files` hold, in order: each file's objects in turn, standard
/// input when `files` is empty. No input is read past `limit` bytes (the memory cap of a
/// sandboxed call, which could not hold it anyway).
pub async fn read_render(
    rt: &Runtime,
    files: &[PathBuf],
    format: Format,
    limit: usize,
) -> Result<Vec<Vec<u8>>> {
    let stdin_only = [PathBuf::from(STDIN)];
    let files = if files.is_empty() {
        &stdin_only[..]
    } else {
        files
    };
    if files.iter().filter(|f| is_stdin(f)).count() > 1 {
        bail!("standard input (-) can be read once only");
    }
    let mut objects = Vec::new();
    for file in files {
        let name = if is_stdin(file) {
            "standard input".to_string()
        } else {
            file.display().to_string()
        };
        let bytes = read_bounded(file, limit).with_context(|| format!("reading {name}"))?;
        let is_json = match format {
            Format::Json => true,
            Format::Yaml => false,
            Format::Auto => starts_like_json(&bytes),
        };
        if is_json {
            objects.push(bytes);
        } else {
            let stream = rt
                .yaml_objects(&bytes)
                .await
                .with_context(|| format!("reading {name} as YAML"))?;
            objects.extend(stream);
        }
    }
    Ok(objects)
}

fn is_stdin(file: &Path) -> bool {
    file.as_os_str() == STDIN
}

/// `auto`'s rule: a JSON object's first byte other than white space is `{`; a YAML
/// stream (even one written in flow style) is read as YAML otherwise.
fn starts_like_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

fn read_bounded(file: &Path, limit: usize) -> Result<Vec<u8>> {
    let reader: Box<dyn Read> = if is_stdin(file) {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file)?)
    };
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    reader.take(cap).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        bail!(
            "it is larger than the memory cap of a call ({limit} bytes); raise \
             --memory-cap-mib if the render is legitimate"
        );
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reads_an_object_as_json_and_anything_else_as_yaml() {
        assert!(starts_like_json(b"{}"));
        assert!(starts_like_json(b" \n\t{\"kind\":\"A\"}"));
        assert!(!starts_like_json(b"kind: A\n"));
        assert!(!starts_like_json(b"---\n{\"kind\":\"A\"}\n"));
        assert!(!starts_like_json(b"[]"));
        assert!(!starts_like_json(b""));
    }

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        std::fs::write(&path, vec![b'a'; 11]).unwrap();
        assert_eq!(read_bounded(&path, 11).unwrap().len(), 11);
        let e = read_bounded(&path, 10).unwrap_err();
        assert!(e.to_string().contains("memory cap"), "{e}");
    }
}
