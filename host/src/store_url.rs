//! Render-store URLs, in gocloud.dev syntax so the controller's `--render-store-url`
//! value works unchanged: `file:///abs/path[?create_dir=true]` and `mem://`.
//! An empty URL means "no render store".

use crate::error::{Error, Result};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use std::sync::Arc;
use url::Url;

/// The schemes this build opens.
pub const SCHEMES: &[&str] = &["file", "mem"];

fn url_error(url: &str, reason: impl Into<String>) -> Error {
    Error::Url {
        url: url.to_string(),
        reason: reason.into(),
    }
}

/// Opens the backend a render-store URL names; `None` for an empty URL.
///
/// - `file:///abs/path` — a folder; `create_dir=true` creates it when missing, otherwise
///   it must exist. Keys are files below it; writes go through a temporary file and a
///   rename, so a reader never sees half a blob.
/// - `mem://` — memory private to this process, gone when it exits.
///
/// An unknown scheme or query parameter is an error naming it.
pub fn open_backend(url: &str) -> Result<Option<Arc<dyn ObjectStore>>> {
    let url = url.trim();
    if url.is_empty() {
        return Ok(None);
    }
    let parsed = Url::parse(url).map_err(|e| {
        url_error(
            url,
            format!("not a URL ({e}); expected one of {}", schemes_hint()),
        )
    })?;
    let params: Vec<(String, String)> = parsed
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let allowed: &[&str] = match parsed.scheme() {
        "file" => &["create_dir"],
        "mem" => &[],
        other => {
            return Err(url_error(
                url,
                format!(
                    "unknown scheme {other:?}; expected one of {}",
                    schemes_hint()
                ),
            ));
        }
    };
    if let Some((name, _)) = params.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
        let accepted = if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(", ")
        };
        return Err(url_error(
            url,
            format!(
                "unknown parameter {name:?} for {}:// (accepted: {accepted})",
                parsed.scheme()
            ),
        ));
    }
    match parsed.scheme() {
        "mem" => {
            if parsed.host_str().is_some_and(|h| !h.is_empty())
                || !matches!(parsed.path(), "" | "/")
            {
                return Err(url_error(url, "mem:// takes no bucket name or path"));
            }
            Ok(Some(Arc::new(InMemory::new())))
        }
        _ => open_file(url, &parsed, &params).map(Some),
    }
}

fn schemes_hint() -> String {
    SCHEMES
        .iter()
        .map(|s| format!("{s}://"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn open_file(url: &str, parsed: &Url, params: &[(String, String)]) -> Result<Arc<dyn ObjectStore>> {
    if parsed
        .host_str()
        .is_some_and(|h| !h.is_empty() && h != "localhost")
    {
        return Err(url_error(
            url,
            "file:// URLs take an absolute path: file:///abs/path (three slashes)",
        ));
    }
    let dir = parsed
        .to_file_path()
        .map_err(|()| url_error(url, "not an absolute file path"))?;
    let create_dir = match params.iter().find(|(k, _)| k == "create_dir") {
        None => false,
        Some((_, v)) => parse_bool(v).ok_or_else(|| {
            url_error(url, format!("create_dir must be true or false, not {v:?}"))
        })?,
    };
    if create_dir {
        std::fs::create_dir_all(&dir).map_err(|e| {
            url_error(
                url,
                format!("cannot create directory {}: {e}", dir.display()),
            )
        })?;
    } else if !dir.is_dir() {
        return Err(url_error(
            url,
            format!(
                "directory {} does not exist; create it or add ?create_dir=true",
                dir.display()
            ),
        ));
    }
    let store = LocalFileSystem::new_with_prefix(&dir)
        .map_err(|e| url_error(url, format!("cannot open {}: {e}", dir.display())))?
        // Deleting a blob also removes the folders it leaves empty.
        .with_automatic_cleanup(true);
    Ok(Arc::new(store))
}

/// gocloud parses booleans with Go's `strconv.ParseBool`.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(url: &str) -> String {
        match open_backend(url) {
            Err(Error::Url { reason, .. }) => reason,
            Err(other) => panic!("{url}: unexpected error {other}"),
            Ok(_) => panic!("{url}: opened"),
        }
    }

    #[test]
    fn empty_means_no_store() {
        assert!(open_backend("").unwrap().is_none());
        assert!(open_backend("  ").unwrap().is_none());
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert!(reason("ftp://x").contains("\"ftp\""));
        assert!(reason("mem://?color=red").contains("\"color\""));
        assert!(reason("file:///tmp?create_dirs=true").contains("\"create_dirs\""));
        assert!(reason("file:///tmp?create_dir=maybe").contains("maybe"));
        assert!(reason("file:///surely/not/here").contains("create_dir=true"));
        assert!(reason("not a url").contains("not a URL"));
        assert!(reason("mem://bucket").contains("no bucket"));
    }

    #[test]
    fn create_dir_creates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b");
        let url = format!("file://{}?create_dir=true", path.display());
        assert!(open_backend(&url).unwrap().is_some());
        assert!(path.is_dir());
    }
}
