//! Render-store URLs, in gocloud.dev syntax so the controller's `--render-store-url`
//! value works unchanged: `s3://`, `gs://`, `azblob://`, `file://` and `mem://`.
//! An empty URL means "no render store". Every query parameter is either honoured or
//! refused with an error naming it: none is silently dropped.

#[cfg(feature = "cloud")]
mod azure;
#[cfg(feature = "cloud")]
mod gcs;
mod local;
mod params;
mod redact;
#[cfg(feature = "cloud")]
mod s3;

use crate::bucket::{Bucket, ObjectStoreBucket};
use crate::error::Result;
use params::Params;
use redact::url_error;
pub use redact::{REDACTED, redact_url, redact_urls_in};
use std::sync::Arc;
use url::Url;

/// The schemes this build opens: `s3`, `gs` and `azblob` only with the `cloud` feature.
#[cfg(feature = "cloud")]
pub const SCHEMES: &[&str] = &["s3", "gs", "azblob", "file", "mem"];
/// The schemes this build opens: `s3`, `gs` and `azblob` only with the `cloud` feature.
#[cfg(not(feature = "cloud"))]
pub const SCHEMES: &[&str] = &["file", "mem"];

/// The schemes that need the `cloud` feature.
const CLOUD_SCHEMES: &[&str] = &["s3", "gs", "azblob"];

/// The query parameters each scheme accepts (none for a scheme this build lacks).
pub fn accepted_params(scheme: &str) -> &'static [&'static str] {
    match scheme {
        #[cfg(feature = "cloud")]
        "s3" => s3::S3_PARAMS,
        #[cfg(feature = "cloud")]
        "gs" => gcs::GCS_PARAMS,
        #[cfg(feature = "cloud")]
        "azblob" => azure::AZURE_PARAMS,
        "file" => local::FILE_PARAMS,
        _ => &[],
    }
}

/// Opens the bucket a render-store URL names; `None` for an empty URL.
///
/// - `s3://bucket` — Amazon S3 or an S3-compatible server.
/// - `gs://bucket` — Google Cloud Storage (`STORAGE_EMULATOR_HOST` honoured).
/// - `azblob://container` — Azure Blob Storage.
/// - `file:///abs/path` — a folder; `create_dir=true` creates it when missing,
///   otherwise it must exist. Never follows a symbolic link beneath it
///   ([`crate::bucket::FolderBucket`]).
/// - `mem://` — memory private to this process, gone when it exits.
///
/// README.md lists every parameter. An unknown scheme or parameter is an error naming
/// it. Credentials are read from the environment: a URL with a user or password is
/// refused, and the URL in an error is redacted ([`redact_url`]).
pub fn open_bucket(url: &str) -> Result<Option<Arc<dyn Bucket>>> {
    let url = url.trim();
    if url.is_empty() {
        return Ok(None);
    }
    let parsed = Url::parse(url).map_err(|e| {
        // A path where a URL belongs is the commonest slip: say which URL it means.
        if url.starts_with('/') || url.starts_with('.') || !url.contains(':') {
            let absolute = std::path::absolute(url).unwrap_or_else(|_| url.into());
            return url_error(
                url,
                format!(
                    "a path, not a URL: a folder is named file://{} (file:// and an \
                     absolute path); other stores are {}",
                    absolute.display(),
                    schemes_hint()
                ),
            );
        }
        url_error(
            url,
            format!("not a URL ({e}); expected one of {}", schemes_hint()),
        )
    })?;
    redact::refuse_credentials(url, &parsed)?;
    if !cfg!(feature = "cloud") && CLOUD_SCHEMES.contains(&parsed.scheme()) {
        return Err(url_error(
            url,
            format!(
                "{}:// stores need the render-store library's `cloud` feature, which this \
                 build was made without; enable it in Cargo.toml (the render-store CLI has it)",
                parsed.scheme()
            ),
        ));
    }
    let params = Params::new(url, &parsed)?;
    let store = match parsed.scheme() {
        #[cfg(feature = "cloud")]
        "s3" => s3::open(&parsed, params)?,
        #[cfg(feature = "cloud")]
        "gs" => gcs::open(&parsed, params)?,
        #[cfg(feature = "cloud")]
        "azblob" => azure::open(&parsed, params)?,
        "file" => return Ok(Some(Arc::new(local::open_file(&parsed, params)?))),
        "mem" => local::open_mem(&parsed, params)?,
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
    Ok(Some(Arc::new(ObjectStoreBucket::new(store))))
}

fn schemes_hint() -> String {
    SCHEMES
        .iter()
        .map(|s| format!("{s}://"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn reason(url: &str) -> String {
        match open_bucket(url) {
            Err(Error::Url { reason, .. }) => reason,
            Err(other) => panic!("{url}: unexpected error {other}"),
            Ok(_) => panic!("{url}: opened"),
        }
    }

    #[test]
    fn empty_means_no_store() {
        assert!(open_bucket("").unwrap().is_none());
        assert!(open_bucket("  ").unwrap().is_none());
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert!(reason("ftp://x").contains("\"ftp\""));
        assert!(reason("mem://?color=red").contains("\"color\""));
        assert!(reason("file:///tmp?create_dirs=true").contains("\"create_dirs\""));
        // A bad value is named by its parameter, never repeated (it may be a secret).
        let bad = reason("file:///tmp?create_dir=maybe");
        assert!(bad.contains("create_dir must be true or false") && !bad.contains("maybe"));
        assert!(reason("file:///surely/not/here").contains("create_dir=true"));
        // A bare path is answered with the file:// URL it means.
        assert!(reason("/var/renders").contains("file:///var/renders"));
        assert!(reason("renders").contains("file:///"));
        assert!(reason("not a url").contains("not a URL"));
        assert!(reason("mem://bucket").contains("no bucket"));
    }

    #[cfg(not(feature = "cloud"))]
    #[test]
    fn cloud_schemes_name_the_missing_feature() {
        for url in ["s3://b", "gs://b", "azblob://c"] {
            assert!(reason(url).contains("`cloud` feature"), "{url}");
        }
    }

    #[cfg(feature = "cloud")]
    #[test]
    fn cloud_parameters_are_checked() {
        assert!(reason("s3://").contains("needs a bucket"));
        assert!(reason("s3://b?region=x&colour=red").contains("\"colour\""));
        assert!(
            reason("s3://b?use_path_style=true&s3ForcePathStyle=true").contains("mean the same")
        );
        assert!(reason("s3://b?ssetype=rot13").contains("ssetype must be one of"));
        assert!(!reason("s3://b?ssetype=rot13").contains("rot13"));
        assert!(reason("s3://b?kmskeyid=k").contains("ssetype"));
        assert!(reason("s3://b?fips=true").contains("\"fips\""));
        assert!(reason("s3://b?profile=dev").contains("\"profile\""));
        assert!(reason("s3://b?disable_https=maybe").contains("disable_https must be"));
        assert!(reason("gs://b?access_id=x").contains("\"access_id\""));
        assert!(reason("gs://b?region=x").contains("\"region\""));
        assert!(reason("azblob://c?protocol=ftp").contains("protocol"));
        assert!(reason("azblob://c?domain=x&cdn=yes").contains("cdn"));
    }

    #[test]
    fn create_dir_creates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b");
        let url = format!("file://{}?create_dir=true", path.display());
        assert!(open_bucket(&url).unwrap().is_some());
        assert!(path.is_dir());
    }
}
