//! Render-store URLs, in gocloud.dev syntax so the controller's `--render-store-url`
//! value works unchanged: `s3://`, `gs://`, `azblob://`, `file://` and `mem://`.
//! An empty URL means "no render store". Every query parameter is either honoured or
//! refused with an error naming it: none is silently dropped.

#[cfg(feature = "azure")]
mod azure;
mod client;
#[cfg(feature = "gcs")]
mod gcs;
mod local;
mod params;
mod redact;
#[cfg(feature = "s3")]
mod s3;

use crate::bucket::{Bucket, ObjectStoreBucket};
use crate::error::Result;
pub use client::ClientSettings;
use params::Params;
use redact::url_error;
pub use redact::{REDACTED, redact_url, redact_urls_in};
use std::sync::Arc;
use url::Url;

/// The schemes this build opens: `s3`, `gs` and `azblob` only with the features of
/// those names (`cloud`: all three).
pub const SCHEMES: &[&str] = &[
    #[cfg(feature = "s3")]
    "s3",
    #[cfg(feature = "gcs")]
    "gs",
    #[cfg(feature = "azure")]
    "azblob",
    "file",
    "mem",
];

/// The cloud schemes and the feature each needs.
const CLOUD_SCHEMES: &[(&str, &str)] = &[("s3", "s3"), ("gs", "gcs"), ("azblob", "azure")];

/// The query parameters each scheme accepts (none for a scheme this build lacks).
pub fn accepted_params(scheme: &str) -> &'static [&'static str] {
    match scheme {
        #[cfg(feature = "s3")]
        "s3" => s3::S3_PARAMS,
        #[cfg(feature = "gcs")]
        "gs" => gcs::GCS_PARAMS,
        #[cfg(feature = "azure")]
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
/// docs/urls.md lists every parameter. An unknown scheme or parameter is an error naming
/// it. Credentials are read from the environment: a URL with a user or password is
/// refused, and the URL in an error is redacted ([`redact_url`]). A cloud backend's
/// client waits and retries as [`ClientSettings::DEFAULT`] says, or as the URL's
/// `timeout`, `connect_timeout`, `retries` and `retry_timeout` say.
pub fn open_bucket(url: &str) -> Result<Option<Arc<dyn Bucket>>> {
    open_bucket_with(url, &ClientSettings::DEFAULT)
}

/// [`open_bucket`] whose cloud client waits and retries as `client` says, unless the
/// URL's own parameters say otherwise (file:// and mem:// make no request).
pub fn open_bucket_with(url: &str, client: &ClientSettings) -> Result<Option<Arc<dyn Bucket>>> {
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
    if let Some((scheme, feature)) = CLOUD_SCHEMES
        .iter()
        .find(|(scheme, _)| *scheme == parsed.scheme())
        && !SCHEMES.contains(scheme)
    {
        return Err(url_error(
            url,
            format!(
                "{scheme}:// stores need the render-store library's `{feature}` feature \
                 (or `cloud`), which this build was made without; enable it in Cargo.toml \
                 (the render-store CLI has them all)"
            ),
        ));
    }
    let params = Params::new(url, &parsed)?;
    // Without a cloud backend, nothing reads the client's settings.
    let _ = client;
    let store = match parsed.scheme() {
        #[cfg(feature = "s3")]
        "s3" => s3::open(&parsed, params, client)?,
        #[cfg(feature = "gcs")]
        "gs" => gcs::open(&parsed, params, client)?,
        #[cfg(feature = "azure")]
        "azblob" => azure::open(&parsed, params, client)?,
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
        for (url, feature) in [("s3://b", "s3"), ("gs://b", "gcs"), ("azblob://c", "azure")] {
            if !SCHEMES.contains(&url.split(':').next().unwrap()) {
                assert!(
                    reason(url).contains(&format!("`{feature}` feature")),
                    "{url}"
                );
            }
        }
    }

    #[cfg(feature = "cloud")]
    #[test]
    fn the_client_settings_are_parameters_of_every_cloud_scheme() {
        for scheme in ["s3", "gs", "azblob"] {
            for name in ["timeout", "connect_timeout", "retries", "retry_timeout"] {
                assert!(accepted_params(scheme).contains(&name), "{scheme} {name}");
            }
            let bad = reason(&format!("{scheme}://b?timeout=soon"));
            assert!(
                bad.contains("timeout must be a duration") && !bad.contains("soon"),
                "{bad}"
            );
            assert!(reason(&format!("{scheme}://b?retries=-1")).contains("retries must be"));
            assert!(reason(&format!("{scheme}://b?connect_timeout=0s")).contains("above zero"));
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

    /// gocloud's fileblob parameter for writing no `.attrs` files: the render store never
    /// writes them, so `skip` is what it does anyway; any other value is refused.
    #[test]
    fn file_urls_take_gocloud_s_metadata_skip() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}?metadata=skip", dir.path().display());
        assert!(open_bucket(&url).unwrap().is_some());
        let bad = reason(&format!("file://{}?metadata=write", dir.path().display()));
        assert!(
            bad.contains("only value is skip") && !bad.contains("=write"),
            "{bad}"
        );
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
