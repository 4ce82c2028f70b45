//! Renders as users hold them: files and standard input, each JSON objects (one, or a
//! stream of them as `render-store get` writes) or a YAML stream (`helm template`,
//! `kustomize build`, a release's `deploy.yaml`). The component splits both and decides
//! what a Kubernetes object is; the YAML exactly as a Go controller reads it.

use anyhow::{Context, Result, bail};
use render_store::{JoinedObjects, Runtime};
use std::io::Read;
use std::path::{Path, PathBuf};

/// How an input is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// JSON when the first byte other than white space is `{`, YAML otherwise.
    Auto,
    /// JSON objects: one, or several one after another (a render's canonical bytes, as
    /// `get` writes them).
    Json,
    /// A YAML stream: every document that is not empty or `null` is an object.
    Yaml,
}

/// The inputs of a render, as `ref`, `canonical` and `put` take them.
#[derive(Debug, Clone, clap::Args)]
pub struct RenderInput {
    /// How each input is read: auto (JSON if it starts with `{`, YAML otherwise), json
    /// (JSON objects, one or a stream of them) or yaml (a stream of documents).
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    pub format: Format,
    /// Take a render with no objects (an empty input, or only empty or `null` YAML
    /// documents). Without it, such input is refused: it is what a failed `helm
    /// template` in a pipe gives.
    #[arg(long)]
    pub allow_empty: bool,
    /// Refuse what is not a Kubernetes object, as kubectl does: no apiVersion, kind or
    /// metadata.name (or generateName); a List's item that is not one; a Secret whose
    /// values a masked view replaced by `***`. --validate=false takes any JSON object
    /// (the renderRef is the same either way).
    #[arg(long, env = "RENDER_STORE_VALIDATE", default_value_t = true,
          action = clap::ArgAction::Set, value_name = "BOOL")]
    pub validate: bool,
    /// Files in render order, `-` for standard input; none: standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

impl RenderInput {
    /// The render, read as [`read_render`] reads it, up to the runtime's memory cap,
    /// and checked as Kubernetes objects ([`Render::check`]).
    pub async fn read(&self, rt: &Runtime) -> Result<Render> {
        let mut render =
            read_render(rt, &self.files, self.format, rt.limits().memory_bytes).await?;
        render.check(rt, self.allow_empty, self.validate).await?;
        Ok(render)
    }

    /// The render as read, with no check: what `canonical` writes, for any JSON.
    pub async fn read_unchecked(&self, rt: &Runtime) -> Result<Render> {
        read_render(rt, &self.files, self.format, rt.limits().memory_bytes).await
    }
}

/// A render read from its inputs: the objects, and the input each came from.
#[derive(Debug, Default)]
pub struct Render {
    /// The objects, in render order, in one buffer: for a single JSON input, the input's
    /// own bytes (the component says where each object ends), so a large render is held
    /// once.
    pub objects: JoinedObjects,
    /// For each object, the input it came from ("deploy.yaml", "standard input").
    pub origins: Vec<String>,
    /// Every input's name, in order.
    pub inputs: Vec<String>,
}

impl Render {
    /// The rule for a render given by a person (the component takes any JSON objects,
    /// as a Go controller does): at least one object unless `allow_empty`, and (when
    /// `validate`) each a Kubernetes object as the component decides
    /// ([`Runtime::check_objects`], CONTRACT.md §4).
    pub async fn check(&mut self, rt: &Runtime, allow_empty: bool, validate: bool) -> Result<()> {
        if self.objects.is_empty() && !allow_empty {
            return Err(crate::failure::input(format!(
                "no objects in {}: the input is empty or holds only empty or null YAML \
                 documents (what a failed `helm template` in a pipe gives); nothing was \
                 stored. Pass --allow-empty to take an empty render",
                self.inputs.join(", ")
            )));
        }
        if !validate {
            return Ok(());
        }
        match rt.check_objects_in(&mut self.objects).await {
            Err(render_store::Error::InvalidObject { index, message }) => Err(
                crate::failure::input(format!("{} {message}", self.describe(index as usize))),
            ),
            other => Ok(other?),
        }
    }

    /// Object `i` as a person finds it: by its place in its input.
    fn describe(&self, i: usize) -> String {
        let Some(origin) = self.origins.get(i) else {
            return format!("object {}", i + 1);
        };
        let within = self.origins[..i].iter().filter(|o| *o == origin).count();
        if self.inputs.len() == 1 {
            format!("object {} of {origin}", within + 1)
        } else {
            format!(
                "object {} of the render (the {} of {origin})",
                i + 1,
                ordinal(within + 1)
            )
        }
    }

    /// `e` with the input that holds the object it names, for an invalid object.
    pub fn name_input(&self, e: render_store::Error) -> anyhow::Error {
        match &e {
            render_store::Error::InvalidObject { index, .. } => {
                match self.origins.get(*index as usize) {
                    Some(origin) => anyhow::Error::new(e).context(format!("in {origin}")),
                    None => e.into(),
                }
            }
            _ => e.into(),
        }
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The name standard input goes by on the command line.
const STDIN: &str = "-";

/// The objects of the render `files` hold, in order: each file's objects in turn, standard
/// input when `files` is empty. The inputs together are read up to `limit` bytes (the
/// memory cap of a sandboxed call, which could not hold a larger render anyway), not
/// each one: ten files of the cap would be ten times the memory.
pub async fn read_render(
    rt: &Runtime,
    files: &[PathBuf],
    format: Format,
    limit: usize,
) -> Result<Render> {
    let stdin_only = [PathBuf::from(STDIN)];
    let files = if files.is_empty() {
        &stdin_only[..]
    } else {
        files
    };
    if files.iter().filter(|f| is_stdin(f)).count() > 1 {
        bail!("standard input (-) can be read once only");
    }
    let mut render = Render::default();
    let mut left = limit;
    for file in files {
        let name = if is_stdin(file) {
            "standard input".to_string()
        } else {
            file.display().to_string()
        };
        let bytes = read_bounded(file, left, limit).with_context(|| format!("reading {name}"))?;
        left -= bytes.len();
        let is_json = match format {
            Format::Json => true,
            Format::Yaml => false,
            Format::Auto => starts_like_json(&bytes),
        };
        let before = render.objects.len();
        if is_json {
            let ends = match rt.json_object_ends(&bytes).await {
                Ok(ends) if !ends.is_empty() => ends,
                // No object: the input as one, which the component refuses as empty.
                // Not a stream of objects: the input as the one object it was meant to
                // be, which the component then refuses in Go's words, naming its place
                // in the render, as put, ref and canonical always have.
                Ok(_) | Err(render_store::Error::InvalidObject { .. }) => {
                    vec![u32::try_from(bytes.len()).unwrap_or(u32::MAX)]
                }
                Err(e) => return Err(e.into()),
            };
            append_joined(&mut render.objects, bytes, ends);
        } else if starts_like_json(&bytes)
            && rt.json_object_ends(&bytes).await.is_ok_and(|o| o.len() > 1)
        {
            // YAML reads a stream of JSON objects as its first object alone (as Go
            // does): asked for YAML, that would store a part of the render.
            return Err(crate::failure::input(format!(
                "{name} is a stream of JSON objects (what `get` writes, one a line), which \
                 YAML reads as its first object alone; nothing was stored. Read it as \
                 JSON: --format json, or the default --format auto"
            )));
        } else {
            let objects = rt
                .yaml_objects(&bytes)
                .await
                .map_err(|e| yaml_error(e, &name))?;
            drop(bytes);
            for object in objects {
                render.objects.push(&object);
            }
        }
        let added = render.objects.len() - before;
        render
            .origins
            .extend(std::iter::repeat_n(name.clone(), added));
        render.inputs.push(name);
    }
    Ok(render)
}

/// Appends the objects of one input (its bytes, and where each object ends in them)
/// to the render's buffer: the input's own buffer becomes the render's when it is the
/// first, so a render of one input is never copied.
fn append_joined(objects: &mut JoinedObjects, bytes: Vec<u8>, ends: Vec<u32>) {
    if objects.bytes.is_empty() {
        // Objects before it are empty: they end at 0, where this input's bytes begin.
        objects.bytes = bytes;
        objects.ends.extend(ends);
        return;
    }
    let offset = u32::try_from(objects.bytes.len()).unwrap_or(u32::MAX);
    objects.bytes.extend_from_slice(&bytes);
    objects
        .ends
        .extend(ends.iter().map(|e| e.saturating_add(offset)));
}

/// A YAML stream's error in a person's words first, Go's text after it (the vectors
/// keep Go's wording, and scripts may match on it).
fn yaml_error(e: render_store::Error, name: &str) -> anyhow::Error {
    let hint = match &e {
        render_store::Error::InvalidYaml {
            document, message, ..
        } if message.contains("cannot unmarshal array") => Some(format!(
            "document {document} of {name} is a list, not an object: a render is a \
                 stream of objects separated by `---` (write each item as its own document)"
        )),
        render_store::Error::InvalidYaml {
            document, message, ..
        } if message.contains("cannot unmarshal") => Some(format!(
            "document {document} of {name} is a single value, not an object (`key: value` \
                 lines)"
        )),
        _ => None,
    };
    let e = anyhow::Error::new(e);
    match hint {
        Some(h) => e.context(format!("reading {name} as YAML")).context(h),
        None => e.context(format!("reading {name} as YAML")),
    }
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

/// The bytes of `file`, if they are at most `left`, what remains of the render's
/// `limit`.
fn read_bounded(file: &Path, left: usize, limit: usize) -> Result<Vec<u8>> {
    let reader: Box<dyn Read> = if is_stdin(file) {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file)?)
    };
    // A file's size, when it says one, sizes the buffer: growing it by doubling would
    // hold two copies of a large render for a moment and leave up to one unused.
    let hint = match is_stdin(file) {
        true => 0,
        false => std::fs::metadata(file).map_or(0, |m| m.len()),
    };
    let mut bytes = Vec::with_capacity(usize::try_from(hint.min(left as u64 + 1)).unwrap_or(0));
    let cap = u64::try_from(left).unwrap_or(u64::MAX).saturating_add(1);
    reader.take(cap).read_to_end(&mut bytes)?;
    if bytes.len() > left {
        bail!(
            "the render's inputs are larger than the memory cap of a call ({limit} bytes \
             in all); raise --memory-cap-mib if the render is legitimate"
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

    fn render(objects: &[&str]) -> Render {
        let mut joined = JoinedObjects::default();
        for o in objects {
            joined.push(o.as_bytes());
        }
        Render {
            objects: joined,
            origins: vec!["in.yaml".to_string(); objects.len()],
            inputs: vec!["in.yaml".to_string()],
        }
    }

    #[tokio::test]
    async fn an_empty_render_is_refused_unless_allowed() {
        let rt = Runtime::shared().unwrap();
        let e = render(&[])
            .check(&rt, false, true)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no objects in in.yaml") && e.contains("--allow-empty"),
            "{e}"
        );
        render(&[]).check(&rt, true, true).await.unwrap();
    }

    #[tokio::test]
    async fn the_component_says_which_object_is_not_a_kubernetes_object() {
        let rt = Runtime::shared().unwrap();
        let ok = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#;
        render(&[ok]).check(&rt, false, true).await.unwrap();
        let e = render(&[ok, r#"{"a":1}"#])
            .check(&rt, false, true)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("object 2 of in.yaml is not a Kubernetes object")
                && e.contains("no apiVersion, no kind, no metadata.name"),
            "{e}"
        );
        render(&[ok, r#"{"a":1}"#])
            .check(&rt, false, false)
            .await
            .unwrap();
    }

    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).into();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
            ]
        );
    }

    #[test]
    fn a_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        std::fs::write(&path, vec![b'a'; 11]).unwrap();
        assert_eq!(read_bounded(&path, 11, 11).unwrap().len(), 11);
        let e = read_bounded(&path, 10, 20).unwrap_err();
        assert!(
            e.to_string()
                .contains("memory cap of a call (20 bytes in all)"),
            "{e}"
        );
        assert!(e.to_string().contains("--memory-cap-mib"), "{e}");
    }
}
