//! `file:///abs/path[?create_dir=true]` and `mem://`.

use super::params::Params;
use crate::bucket::FolderBucket;
use crate::error::Error;
use object_store::ObjectStore;
use object_store::memory::InMemory;
use std::os::unix::fs::DirBuilderExt;
use std::sync::Arc;
use url::Url;

pub(crate) const FILE_PARAMS: &[&str] = &["create_dir", "metadata"];

pub(crate) fn open_mem(parsed: &Url, params: Params) -> Result<Arc<dyn ObjectStore>, Error> {
    if parsed.host_str().is_some_and(|h| !h.is_empty()) || !matches!(parsed.path(), "" | "/") {
        return Err(params.error("mem:// takes no bucket name or path"));
    }
    params.finish(&[])?;
    Ok(Arc::new(InMemory::new()))
}

pub(crate) fn open_file(parsed: &Url, mut params: Params) -> Result<FolderBucket, Error> {
    if parsed
        .host_str()
        .is_some_and(|h| !h.is_empty() && h != "localhost")
    {
        return Err(
            params.error("file:// URLs take an absolute path: file:///abs/path (three slashes)")
        );
    }
    let dir = parsed
        .to_file_path()
        .map_err(|()| params.error("not an absolute file path"))?;
    let create_dir = params.take_bool(&["create_dir"])?.unwrap_or(false);
    params.refuse("base_url", "the render store never signs URLs")?;
    params.refuse("secret_key_path", "the render store never signs URLs")?;
    // gocloud's fileblob writes each key's attributes to a `<key>.attrs` file beside it
    // unless told `metadata=skip`. The render store writes none either way, and reads
    // such files as metadata of their key (CONTRACT.md §3), so one URL serves a
    // gocloud controller and the render store alike.
    if let Some(metadata) = params.take("metadata")
        && metadata != "skip"
    {
        return Err(params.error(
            "metadata: the only value is skip (gocloud's: write no .attrs files, which the \
             render store never writes)",
        ));
    }
    params.finish(FILE_PARAMS)?;
    let error = |reason: String| super::redact::url_error(parsed.as_str(), reason);
    if create_dir {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| error(format!("cannot create directory {}: {e}", dir.display())))?;
    } else if !dir.is_dir() {
        return Err(error(match std::fs::symlink_metadata(&dir) {
            Ok(_) => format!(
                "{} is not a directory: a file:// store is a folder; name the folder \
                 to keep renders in (or a new one, with ?create_dir=true)",
                dir.display()
            ),
            Err(_) => format!(
                "directory {} does not exist; create it or add ?create_dir=true",
                dir.display()
            ),
        }));
    }
    FolderBucket::open(&dir).map_err(|e| error(format!("cannot open {}: {e}", dir.display())))
}
