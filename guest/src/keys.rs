//! The key layout: everything of a Release lies under `<namespace>/<name>/`.
//!
//! ```text
//! <namespace>/<name>/renders/<renderRef>            the render blob
//! <namespace>/<name>/history/<time>-<renderRef>     a history entry
//! ```
//!
//! Names are checked before any key is made, so no key can escape its Release's prefix.
//!
//! A store written through gocloud's fileblob (the storage layer a Go controller may use
//! already) has, beside each key, `<key>.attrs`: that key's metadata, which fileblob
//! writes, hides from its listings and deletes with the key. Here it is metadata of its
//! key too ([`ReleasePrefix::metadata_of`]): never foreign, and GC deletes it with its
//! key. The store itself never writes one.

use crate::error::{Result, invalid};
use crate::json::quote;
use crate::time::{SyncTime, format_key_time, parse_key_time};

pub use crate::wit::types::Release;
impl Release {
    /// A release from its namespace and name (not yet checked).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Release {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Parses `NAMESPACE/NAME` (split at the first `/`; the names are checked by each
    /// call).
    pub fn parse(text: &str) -> Option<Self> {
        let (namespace, name) = text.split_once('/')?;
        Some(Release::new(namespace, name))
    }
}

/// `NAMESPACE/NAME`, as people and the CLI write a release.
impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Longest DNS-1123 label.
pub const MAX_NAMESPACE_LEN: usize = 63;
/// Longest DNS-1123 subdomain.
pub const MAX_NAME_LEN: usize = 253;
/// `sha256:` followed by 64 lowercase hex digits.
pub const RENDER_REF_LEN: usize = 71;
const RENDER_REF_ALGORITHM: &str = "sha256:";

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

/// Checks a namespace: a DNS-1123 label.
pub fn validate_namespace(namespace: &str) -> Result<()> {
    if namespace.len() > MAX_NAMESPACE_LEN || !is_label(namespace) {
        return Err(invalid(format!(
            "namespace {} is not a DNS-1123 label (at most {MAX_NAMESPACE_LEN} \
             characters of a-z, 0-9 and '-', starting and ending with a letter or digit)",
            quote(namespace)
        )));
    }
    Ok(())
}

/// Checks a Release name: a DNS-1123 subdomain, as Kubernetes checks object names.
pub fn validate_name(name: &str) -> Result<()> {
    if name.len() > MAX_NAME_LEN || !name.split('.').all(is_label) {
        return Err(invalid(format!(
            "release name {} is not a DNS-1123 subdomain (at most {MAX_NAME_LEN} \
             characters; dot-separated labels of a-z, 0-9 and '-', each starting and \
             ending with a letter or digit)",
            quote(name)
        )));
    }
    Ok(())
}

/// Checks a renderRef: `sha256:` and 64 lowercase hex digits.
pub fn validate_render_ref(render_ref: &str) -> Result<()> {
    let ok = render_ref.len() == RENDER_REF_LEN
        && render_ref.starts_with(RENDER_REF_ALGORITHM)
        && render_ref.as_bytes()[RENDER_REF_ALGORITHM.len()..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c));
    if !ok {
        return Err(invalid(format!(
            "renderRef {} is not \"sha256:\" followed by 64 lowercase hex digits",
            quote(render_ref)
        )));
    }
    Ok(())
}

pub use crate::wit::types::HistoryKey;
pub use crate::wit::types::ParsedKey;
/// The checked prefix `<namespace>/<name>/` of a Release, and the keys under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleasePrefix {
    prefix: String,
}

const RENDERS: &str = "renders/";
const HISTORY: &str = "history/";
/// The release index's key under the prefix (CONTRACT.md §3): versioned in the key, so
/// an index of another format is another key, which this version neither reads nor
/// overwrites.
pub(crate) const INDEX: &str = "index/v1";

/// The suffix of gocloud fileblob's metadata file of a key: `<key>.attrs`.
pub const METADATA_SUFFIX: &str = ".attrs";

impl ReleasePrefix {
    /// Checks the release's names and makes its prefix.
    pub fn new(release: &Release) -> Result<Self> {
        validate_namespace(&release.namespace)?;
        validate_name(&release.name)?;
        Ok(ReleasePrefix {
            prefix: format!("{}/{}/", release.namespace, release.name),
        })
    }

    /// `<namespace>/<name>/`.
    pub fn as_str(&self) -> &str {
        &self.prefix
    }

    /// `<namespace>/<name>`: the release as sealed blobs and entry MACs name it.
    pub fn release_name(&self) -> &str {
        &self.prefix[..self.prefix.len() - 1]
    }

    /// `<prefix>renders/`, the prefix of all render blobs.
    pub fn renders(&self) -> String {
        format!("{}{RENDERS}", self.prefix)
    }

    /// `<prefix>history/`, the prefix of all history entries.
    pub fn history(&self) -> String {
        format!("{}{HISTORY}", self.prefix)
    }

    /// `<prefix>index/v1`, the release index (what each render of the history holds).
    pub fn index_key(&self) -> String {
        format!("{}{INDEX}", self.prefix)
    }

    /// `<prefix>renders/<renderRef>`, after checking the renderRef.
    pub fn render_key(&self, render_ref: &str) -> Result<String> {
        validate_render_ref(render_ref)?;
        Ok(format!("{}{RENDERS}{render_ref}", self.prefix))
    }

    /// `<prefix>history/<time>-<renderRef>`, after checking the renderRef and the time.
    pub fn history_key(&self, synced_at: SyncTime, render_ref: &str) -> Result<String> {
        validate_render_ref(render_ref)?;
        let time = format_key_time(synced_at)?;
        Ok(format!("{}{HISTORY}{time}-{render_ref}", self.prefix))
    }

    /// Parses a key of this release; `None` for a key that is neither a render nor a
    /// history entry of it (a foreign file, a temp file, a bad time or renderRef).
    pub fn parse(&self, key: &str) -> Option<ParsedKey> {
        let rest = key.strip_prefix(self.prefix.as_str())?;
        if let Some(render_ref) = rest.strip_prefix(RENDERS) {
            validate_render_ref(render_ref).ok()?;
            return Some(ParsedKey::Render(render_ref.to_string()));
        }
        let entry = rest.strip_prefix(HISTORY)?;
        // Neither the time nor the renderRef contains '-': split at the first one.
        let (time, render_ref) = entry.split_once('-')?;
        validate_render_ref(render_ref).ok()?;
        let synced_at = parse_key_time(time).ok()?;
        Some(ParsedKey::History(HistoryKey {
            synced_at,
            render_ref: render_ref.to_string(),
        }))
    }

    /// The key whose metadata `key` is, when `key` is `<key>.attrs` (gocloud fileblob's
    /// metadata file) of a render or history key of this release; `None` otherwise.
    pub fn metadata_of<'k>(&self, key: &'k str) -> Option<&'k str> {
        let of = key.strip_suffix(METADATA_SUFFIX)?;
        self.parse(of).map(|_| of)
    }

    /// The renderRef of a render key of this release.
    pub fn parse_render_key(&self, key: &str) -> Option<String> {
        match self.parse(key)? {
            ParsedKey::Render(render_ref) => Some(render_ref),
            ParsedKey::History(_) => None,
        }
    }

    /// The time and renderRef of a history key of this release.
    pub fn parse_history_key(&self, key: &str) -> Option<(SyncTime, String)> {
        match self.parse(key)? {
            ParsedKey::History(h) => Some((h.synced_at, h.render_ref)),
            ParsedKey::Render(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REF: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn names() {
        for ok in ["a", "a-b", "0", &"a".repeat(63)] {
            validate_namespace(ok).unwrap();
        }
        for bad in [
            "",
            "A",
            "a.b",
            "-a",
            "a-",
            "a/b",
            "..",
            &"a".repeat(64),
            "a\0",
        ] {
            assert!(validate_namespace(bad).is_err(), "{bad:?}");
        }
        for ok in [
            "app",
            "app.v2",
            "a-b.c-d",
            &format!("{}.{}", "a".repeat(126), "b".repeat(126)),
        ] {
            validate_name(ok).unwrap();
        }
        for bad in [
            "",
            ".",
            "..",
            "a..b",
            "a/b",
            ".a",
            "a.",
            "App",
            &"a".repeat(254),
            "%2F",
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn render_refs() {
        validate_render_ref(REF).unwrap();
        for bad in [
            &REF.to_uppercase(),
            &REF[..70],
            &format!("{REF}0"),
            &REF.replace("sha256:", "sha512:"),
            &REF.replace('e', "E"),
            "",
        ] {
            assert!(validate_render_ref(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keys_parse_back() {
        let p = ReleasePrefix::new(&Release::new("ns", "app")).unwrap();
        let t = SyncTime {
            seconds: 1_700_000_000,
            nanoseconds: 5,
        };
        let history = p.history_key(t, REF).unwrap();
        assert_eq!(
            history,
            format!("ns/app/history/20231114T221320.000000005Z-{REF}")
        );
        assert_eq!(p.parse_history_key(&history), Some((t, REF.to_string())));
        let render = p.render_key(REF).unwrap();
        assert_eq!(render, format!("ns/app/renders/{REF}"));
        assert_eq!(p.parse_render_key(&render), Some(REF.to_string()));
        // gocloud's metadata of a key is metadata of that key, and not a key itself.
        assert_eq!(
            p.metadata_of(&format!("{render}.attrs")),
            Some(render.as_str())
        );
        assert_eq!(
            p.metadata_of(&format!("{history}.attrs")),
            Some(history.as_str())
        );
        for not_metadata in [
            format!("ns/app/renders/{REF}"),
            format!("ns/app/renders/{REF}.attrs.attrs"),
            "ns/app/renders/x.attrs".to_string(),
            format!("ns/app2/renders/{REF}.attrs"),
            "ns/app/.attrs".to_string(),
        ] {
            assert_eq!(p.metadata_of(&not_metadata), None, "{not_metadata}");
        }
        for foreign in [
            format!("ns/app/renders/{REF}.attrs"),
            format!("ns/app/renders/{REF}.tmp"),
            format!("ns/app/history/2023-{REF}"),
            format!("ns/app/history/20231114T221320.000000005Z-{REF}-x"),
            format!("ns/app2/renders/{REF}"),
            "ns/app/other".to_string(),
        ] {
            assert_eq!(p.parse(&foreign), None, "{foreign}");
        }
    }
}
