//! Which container images a render runs, and when each was in a release's recorded
//! renders: the images of every pod template of a render, references normalised as
//! container runtimes normalise them (`nginx` is `docker.io/library/nginx:latest`), the
//! patterns people search them with, and the intervals of a history during which each
//! was in the recorded render.
//!
//! "Ran" here means "was in the render the history records": from an entry's sync until
//! the next entry's. A rollback adds no entry (the history keeps each render at its first
//! apply), so the interval of a render rolled back to is the one recorded.

use crate::bucket::Bucket;
use crate::encryption::Keyring;
use crate::error::{Error, Result};
use crate::json::{Document, decode_object};
use crate::keys::{Release, ReleasePrefix};
use crate::time::SyncTime;
use std::collections::{BTreeMap, BTreeSet};

pub use crate::wit::types::ImageInterval;
pub use crate::wit::types::ImageUse;

/// An image reference, parsed as Docker's distribution/reference grammar reads it
/// (`ParseNormalizedNamed`, then `TagNameOnly`).
///
/// The grammar is written here rather than taken from a crate: the kept Rust parser
/// (oci-spec's `distribution::Reference`) brings the regex crate's Unicode tables into
/// the component, which nearly doubles the memory every sandboxed call starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The registry: `docker.io` when none is named.
    pub domain: String,
    /// The repository path, `library/` before a Docker Hub name without a slash.
    pub path: String,
    /// The tag; `latest` when neither a tag nor a digest is given.
    pub tag: Option<String>,
    /// The digest (`sha256:HEX`).
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `text`; `None` when it is no reference.
    pub fn parse(text: &str) -> Option<Reference> {
        let (rest, digest) = match text.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (text, None),
        };
        // A tag follows the last `:` of the last path component (a registry's port
        // comes before a `/`).
        let (name, tag) = match rest.rfind(':') {
            Some(i) if !rest[i..].contains('/') => (&rest[..i], Some(&rest[i + 1..])),
            _ => (rest, None),
        };
        let (domain, path) = match name.split_once('/') {
            Some((first, path))
                if first.contains(['.', ':'])
                    || first == "localhost"
                    || first != first.to_lowercase() =>
            {
                (first, path.to_string())
            }
            _ => ("docker.io", name.to_string()),
        };
        let domain = if domain == "index.docker.io" {
            "docker.io"
        } else {
            domain
        };
        let path = if domain == "docker.io" && !path.contains('/') {
            format!("library/{path}")
        } else {
            path
        };
        let valid = valid_domain(domain)
            && name.len() <= 255
            && path.split('/').all(valid_path_component)
            && tag.is_none_or(valid_tag)
            && digest.is_none_or(valid_digest);
        valid.then(|| Reference {
            domain: domain.to_string(),
            tag: match (tag, digest) {
                (None, None) => Some("latest".to_string()),
                (tag, _) => tag.map(str::to_string),
            },
            digest: digest.map(str::to_string),
            path,
        })
    }

    /// The repository: registry and path.
    pub fn repository(&self) -> String {
        format!("{}/{}", self.domain, self.path)
    }

    /// The whole reference: `REGISTRY/PATH[:TAG][@DIGEST]`.
    pub fn whole(&self) -> String {
        let mut out = self.repository();
        if let Some(tag) = &self.tag {
            out.push(':');
            out.push_str(tag);
        }
        if let Some(digest) = &self.digest {
            out.push('@');
            out.push_str(digest);
        }
        out
    }
}

/// A registry: host name components (letters, digits, `-` inside) joined by `.`, or an
/// IPv6 address in brackets, and an optional port.
fn valid_domain(domain: &str) -> bool {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port))
            if !host.ends_with(':') && !domain.starts_with('[') || host.ends_with(']') =>
        {
            (host, Some(port))
        }
        _ => (domain, None),
    };
    let host_ok = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
    } else {
        !host.is_empty()
            && host.split('.').all(|c| {
                !c.is_empty()
                    && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !c.starts_with('-')
                    && !c.ends_with('-')
            })
    };
    host_ok && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A path component: lowercase letters and digits, in runs joined by `.`, `_`, `__` or
/// any number of `-`.
fn valid_path_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        let ok = separator == "."
            || separator == "_"
            || separator == "__"
            || separator.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// A tag: a word character, then up to 127 word characters, `.` or `-`.
fn valid_tag(tag: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && word(bytes[0])
        && bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-')
}

/// A digest: `ALGORITHM:ENCODED`, a sha256 one 64 lowercase hex digits.
fn valid_digest(digest: &str) -> bool {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_ok = !algorithm.is_empty()
        && algorithm
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+._-".contains(&b));
    let encoded_ok = match algorithm {
        "sha256" => {
            encoded.len() == 64
                && encoded
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }
        _ => {
            encoded.len() >= 32
                && encoded
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"=_-".contains(&b))
        }
    };
    algorithm_ok && encoded_ok
}

/// `image` as container runtimes read it ([`Reference`]): `nginx` is
/// `docker.io/library/nginx:latest`. A reference that does not parse (a template
/// placeholder, say) is kept as written: it is still what the render holds.
pub fn normalize(image: &str) -> String {
    match Reference::parse(image) {
        Some(reference) => reference.whole(),
        None => image.to_string(),
    }
}

/// Every container of every pod template of a canonical render, in render order, with
/// its image normalised: the pod templates [`crate::changes::container_images`] finds (a
/// Pod's `spec`, a PodTemplate's `template.spec`, any object's `spec.template.spec`, a
/// CronJob's `spec.jobTemplate.spec.template.spec`, and the same in the items of
/// lists); in each, `initContainers`, `containers` and `ephemeralContainers`. A
/// container that names no image is left out.
pub fn render_images(canonical: &[u8]) -> Result<Vec<ImageUse>> {
    let mut out = Vec::new();
    for_each_object(canonical, |_, doc| out.extend(object_images(doc)))?;
    Ok(out)
}

/// Calls `f` with each object of a canonical render (its line and its parse tree), in
/// render order; a line that is not a JSON object is refused, naming its place.
fn for_each_object(canonical: &[u8], mut f: impl FnMut(&[u8], &Document<'_>)) -> Result<()> {
    for (index, line) in canonical
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let doc = decode_object(line).map_err(|e| {
            Error::InvalidInput(format!("the render's object {index} is invalid: {e}"))
        })?;
        f(line, &doc);
    }
    Ok(())
}

/// The containers of one object's pod templates, with their images normalised.
fn object_images(doc: &Document<'_>) -> Vec<ImageUse> {
    crate::changes::container_images(doc)
        .into_iter()
        .filter_map(|c| {
            Some(ImageUse {
                image: normalize(&c.image?),
                object: c.object,
                container: c.container,
            })
        })
        .collect()
}

pub use crate::wit::types::IndexedObject;
/// The hash an export gives an object: of its canonical line, or, for an object that
/// holds Secret values, of its masked form. A digest of a value would let anyone who
/// reads the export confirm a guessed password, as the masked views refuse to (the
/// changes of a Secret's values are `changes`' to say, by key).
fn object_hash(line: &[u8], doc: &Document<'_>) -> String {
    if !crate::secrets::may_hold_secrets(doc) {
        return crate::render::sha256_hex(line);
    }
    let mut masked = doc.clone();
    crate::secrets::mask_one(&mut masked);
    let mut bytes = Vec::new();
    crate::json::encode_document(&masked, &mut bytes);
    crate::render::sha256_hex(&bytes)
}

/// Every object of a canonical render, in render order, as [`IndexedObject`]s.
pub fn index_objects(canonical: &[u8]) -> Result<Vec<IndexedObject>> {
    let mut out = Vec::new();
    for_each_object(canonical, |line, doc| {
        let images: BTreeSet<String> = object_images(doc).into_iter().map(|u| u.image).collect();
        out.push(IndexedObject {
            id: crate::diff::id_of(doc, doc.root()),
            hash: object_hash(line, doc),
            images: images.into_iter().collect(),
        });
    })?;
    Ok(out)
}

/// What people search images with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImagePattern {
    /// A repository (`nginx`, `ghcr.io/org/app`): every tag and digest of it.
    Repository(String),
    /// A repository and a tag or digest (`nginx:1.25`, `app@sha256:…`): that one.
    Reference(String),
    /// A digest alone (`@sha256:…`), of any repository.
    Digest(String),
    /// A glob (`*` any run of characters, `?` one) over the normalised reference.
    Glob(String),
}

impl ImagePattern {
    /// Reads a pattern; one that is neither a reference, a digest nor a glob is refused,
    /// saying what each looks like.
    pub fn parse(text: &str) -> Result<ImagePattern> {
        let text = text.trim();
        let bad = |why: &str| {
            Error::InvalidInput(format!(
                "image pattern {text:?} {why}: give a repository (nginx, ghcr.io/org/app), \
                 a reference (nginx:1.25, app@sha256:HEX), a digest (@sha256:HEX) or a glob \
                 (*/nginx:1.*)"
            ))
        };
        if text.is_empty() {
            return Err(bad("is empty"));
        }
        if let Some(digest) = text.strip_prefix('@') {
            let (algorithm, hex) = digest.split_once(':').ok_or_else(|| bad("is no digest"))?;
            if algorithm.is_empty() || hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit())
            {
                return Err(bad("is no digest"));
            }
            return Ok(ImagePattern::Digest(digest.to_ascii_lowercase()));
        }
        if text.contains(['*', '?']) {
            return Ok(ImagePattern::Glob(text.to_string()));
        }
        let reference = Reference::parse(text).ok_or_else(|| bad("does not parse"))?;
        // Whether a tag or digest was given: runtimes add `latest` when neither is.
        let last = text.rsplit('/').next().unwrap_or(text);
        if last.contains(':') || text.contains('@') {
            Ok(ImagePattern::Reference(reference.whole()))
        } else {
            Ok(ImagePattern::Repository(reference.repository()))
        }
    }

    /// Whether the normalised `image` matches.
    pub fn matches(&self, image: &str) -> bool {
        match self {
            ImagePattern::Repository(repository) => image
                .strip_prefix(repository.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '@'])),
            ImagePattern::Reference(whole) => image == whole,
            ImagePattern::Digest(digest) => image
                .rsplit_once('@')
                .is_some_and(|(_, d)| d.eq_ignore_ascii_case(digest)),
            ImagePattern::Glob(glob) => glob_matches(glob.as_bytes(), image.as_bytes()),
        }
    }
}

/// `*` matches any run of bytes, `?` one byte, anything else itself.
fn glob_matches(glob: &[u8], text: &[u8]) -> bool {
    // The last `*` seen and where in `text` it was tried: on a mismatch, the `*` takes
    // one more byte. Linear in practice, never exponential.
    let (mut g, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match glob.get(g) {
            Some(b'*') => {
                star = Some((g, t));
                g += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                g += 1;
                t += 1;
            }
            _ => match star {
                Some((sg, st)) => {
                    g = sg + 1;
                    t = st + 1;
                    star = Some((sg, st + 1));
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|&c| c == b'*')
}

/// The intervals of `history` (oldest first: each entry's sync and render) during which
/// each image was in the recorded render, `images_of` giving each render's images:
/// from an entry whose render holds the image until the next entry whose render does
/// not, consecutive entries merged; open (`until` `None`) when the newest holds it.
/// Sorted by image, then start.
pub fn image_intervals(
    history: &[(SyncTime, &str)],
    images_of: impl Fn(&str) -> BTreeSet<String>,
) -> Vec<ImageInterval> {
    let mut open: BTreeMap<String, ImageInterval> = BTreeMap::new();
    let mut done = Vec::new();
    for &(synced_at, render_ref) in history {
        let images = images_of(render_ref);
        let ended: Vec<String> = open
            .keys()
            .filter(|image| !images.contains(*image))
            .cloned()
            .collect();
        for image in ended {
            let mut interval = open.remove(&image).expect("listed above");
            interval.until = Some(synced_at);
            done.push(interval);
        }
        for image in images {
            let interval = open.entry(image.clone()).or_insert_with(|| ImageInterval {
                image,
                from: synced_at,
                until: None,
                render_refs: Vec::new(),
            });
            if interval.render_refs.last().map(String::as_str) != Some(render_ref) {
                interval.render_refs.push(render_ref.to_string());
            }
        }
    }
    done.extend(open.into_values());
    done.sort_by(|a, b| a.image.cmp(&b.image).then(a.from.cmp(&b.from)));
    done
}

/// Whether an interval meets the window from `since` (included) until `until`
/// (excluded).
pub fn in_window(
    interval: &ImageInterval,
    since: Option<SyncTime>,
    until: Option<SyncTime>,
) -> bool {
    until.is_none_or(|u| interval.from < u)
        && since.is_none_or(|s| interval.until.is_none_or(|end| end > s))
}

/// The image intervals of a release's history that match `pattern` (every image when
/// `None`) and meet the window: `list(P/history/)` (where encryption is required, then
/// `get` of each entry, the unauthenticated ones left out), then what each render the history
/// names holds, from the release index where it names the render and by reading the
/// render where not ([`crate::render_index::objects_by_render`]). A render that cannot
/// be read stops the query with its error: an answer that left it out would say "not
/// there" for what could not be seen.
pub fn release_images<B: Bucket>(
    bucket: &mut B,
    release: &Release,
    pattern: Option<&ImagePattern>,
    window: (Option<SyncTime>, Option<SyncTime>),
    keyring: &Keyring,
) -> Result<Vec<ImageInterval>> {
    let prefix = ReleasePrefix::new(release)?;
    let entries = crate::history::trusted_entries(bucket, &prefix, keyring)?;
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let refs: BTreeSet<&str> = entries.iter().map(|e| e.render_ref.as_str()).collect();
    let objects = crate::render_index::objects_by_render(bucket, &prefix, release, &refs, keyring)?;
    let images_by_render: BTreeMap<&str, BTreeSet<String>> = objects
        .iter()
        .map(|(render_ref, objects)| {
            let images = objects
                .iter()
                .flat_map(|o| o.images.iter())
                .filter(|image| pattern.is_none_or(|p| p.matches(image)))
                .cloned()
                .collect();
            (render_ref.as_str(), images)
        })
        .collect();
    let history: Vec<(SyncTime, &str)> = entries
        .iter()
        .map(|e| (e.synced_at, e.render_ref.as_str()))
        .collect();
    let intervals = image_intervals(&history, |r| {
        images_by_render.get(r).cloned().unwrap_or_default()
    });
    Ok(intervals
        .into_iter()
        .filter(|i| in_window(i, window.0, window.1))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(objects: &[&str]) -> Vec<u8> {
        crate::canonical(objects).unwrap()
    }

    #[test]
    fn references_are_normalised_as_runtimes_do() {
        assert_eq!(normalize("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(normalize("nginx:1.25"), "docker.io/library/nginx:1.25");
        assert_eq!(
            normalize("index.docker.io/library/nginx:1.25"),
            "docker.io/library/nginx:1.25"
        );
        assert_eq!(normalize("bitnami/redis:7"), "docker.io/bitnami/redis:7");
        assert_eq!(normalize("ghcr.io/org/app:v1"), "ghcr.io/org/app:v1");
        assert_eq!(normalize("registry:5000/app"), "registry:5000/app:latest");
        assert_eq!(normalize("localhost/app"), "localhost/app:latest");
        assert_eq!(normalize("localhost:5000/a/b:c"), "localhost:5000/a/b:c");
        assert_eq!(normalize("[::1]:5000/app:v2"), "[::1]:5000/app:v2");
        assert_eq!(normalize("test.com:tag"), "docker.io/library/test.com:tag");
        assert_eq!(
            normalize("foo_bar.com:8080"),
            "docker.io/library/foo_bar.com:8080"
        );
        assert_eq!(
            normalize("lowercase:Uppercase"),
            "docker.io/library/lowercase:Uppercase"
        );
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(
            normalize(&format!("nginx:1.25@{digest}")),
            format!("docker.io/library/nginx:1.25@{digest}")
        );
        assert_eq!(
            normalize(&format!("nginx@{digest}")),
            format!("docker.io/library/nginx@{digest}")
        );
        // Not references: kept as written.
        for bad in [
            "${IMAGE}",
            "Upper/Case",
            "a//b",
            "-a",
            "nginx:",
            "nginx@sha256:abc",
            "",
        ] {
            assert_eq!(normalize(bad), bad, "{bad:?}");
        }
    }

    #[test]
    fn every_pod_template_s_containers_are_found() {
        let r = canonical(&[
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"a","image":"nginx:1.25"}],"initContainers":[{"name":"init","image":"busybox"}]}}"#,
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"ghcr.io/org/app:v1"}],"ephemeralContainers":[{"name":"dbg","image":"alpine"}]}}}}"#,
            r#"{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"job","image":"redis:7"}]}}}}}}"#,
            r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"quay.io/x/agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]}}}}]}"#,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"image":"not-a-container"}}"#,
        ]);
        let found: Vec<(String, String, String)> = render_images(&r)
            .unwrap()
            .into_iter()
            .map(|u| (u.object.name, u.container, u.image))
            .collect();
        let expect = [
            ("p", "init", "docker.io/library/busybox:latest"),
            ("p", "a", "docker.io/library/nginx:1.25"),
            ("d", "app", "ghcr.io/org/app:v1"),
            ("d", "dbg", "docker.io/library/alpine:latest"),
            ("c", "job", "docker.io/library/redis:7"),
            (
                "ds",
                "agent",
                "quay.io/x/agent@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            ),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
        assert_eq!(found, expect);
        assert!(render_images(b"[1]\n").is_err());
    }

    #[test]
    fn an_index_names_each_object_with_its_hash_and_images() {
        let r = canonical(&[
            r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"nginx"}]}}]}"#,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"}}"#,
        ]);
        let index = index_objects(&r).unwrap();
        assert_eq!(index.len(), 2);
        assert_eq!(index[0].id.kind, "List");
        assert_eq!(index[0].images, ["docker.io/library/nginx:latest"]);
        assert_eq!(
            (index[1].id.namespace.as_str(), index[1].id.name.as_str()),
            ("ns", "cm")
        );
        assert!(index[1].images.is_empty());
        let line = r.split(|&b| b == b'\n').nth(1).unwrap();
        assert_eq!(index[1].hash, crate::render::sha256_hex(line));
        // A Secret's hash is of its masked form: the same whatever its values.
        let secret = |v: &str| {
            canonical(&[&format!(
                r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"s"}},"stringData":{{"password":"{v}"}}}}"#
            )])
        };
        let (a, b) = (secret("hunter2"), secret("letmein"));
        let (ia, ib) = (index_objects(&a).unwrap(), index_objects(&b).unwrap());
        assert_eq!(ia[0].hash, ib[0].hash);
        assert_ne!(ia[0].hash, crate::render::sha256_hex(a.trim_ascii_end()));
    }

    #[test]
    fn patterns_match_repositories_references_digests_and_globs() {
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let pinned = format!("quay.io/x/agent@{digest}");
        let p = |t: &str| ImagePattern::parse(t).unwrap();
        assert!(p("nginx").matches("docker.io/library/nginx:1.25"));
        assert!(p("docker.io/library/nginx").matches("docker.io/library/nginx:latest"));
        assert!(!p("nginx").matches("docker.io/library/nginx-exporter:1"));
        assert!(p("nginx:1.25").matches("docker.io/library/nginx:1.25"));
        assert!(!p("nginx:1.25").matches("docker.io/library/nginx:1.26"));
        assert!(p(&format!("@{digest}")).matches(&pinned));
        assert!(p("quay.io/x/agent").matches(&pinned));
        assert!(p("*nginx:1.*").matches("docker.io/library/nginx:1.25"));
        assert!(!p("*nginx:1.*").matches("docker.io/library/nginx:2.0"));
        assert!(p("ghcr.io/*").matches("ghcr.io/org/app:v1"));
        assert!(p("*/app:v?").matches("ghcr.io/org/app:v1"));
        for bad in ["", "@sha256:xyz", "@nodigest", "UPPER/Case"] {
            let e = ImagePattern::parse(bad).unwrap_err();
            assert!(e.to_string().contains("image pattern"), "{bad}: {e}");
        }
    }

    #[test]
    fn intervals_merge_consecutive_entries_and_stay_open_at_the_newest() {
        let t = |s| SyncTime {
            seconds: s,
            nanoseconds: 0,
        };
        let renders: BTreeMap<&str, Vec<&str>> = [
            ("r1", vec!["a", "b"]),
            ("r2", vec!["a"]),
            ("r3", vec!["a", "b"]),
        ]
        .into_iter()
        .collect();
        // r1, r2, r3, then r1 again: the algebra takes any sequence (a store written by
        // other means may name a render twice).
        let history = [(t(10), "r1"), (t(20), "r2"), (t(30), "r3"), (t(40), "r1")];
        let got = image_intervals(&history, |r| {
            renders[r].iter().map(|s| s.to_string()).collect()
        });
        let view: Vec<(&str, i64, Option<i64>, Vec<&str>)> = got
            .iter()
            .map(|i| {
                (
                    i.image.as_str(),
                    i.from.seconds,
                    i.until.map(|u| u.seconds),
                    i.render_refs.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            view,
            [
                ("a", 10, None, vec!["r1", "r2", "r3", "r1"]),
                ("b", 10, Some(20), vec!["r1"]),
                ("b", 30, None, vec!["r3", "r1"]),
            ]
        );
        // The window: an interval that ended before it, or starts at its end, is out.
        let b_first = &got[1];
        assert!(in_window(b_first, Some(t(15)), None));
        assert!(!in_window(b_first, Some(t(20)), None));
        assert!(!in_window(&got[2], None, Some(t(30))));
        assert!(in_window(&got[2], None, Some(t(31))));
    }
}
