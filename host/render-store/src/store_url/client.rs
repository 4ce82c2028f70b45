//! How the cloud backends' HTTP client waits, retries and trusts servers: one place for
//! `s3://`, `gs://` and `azblob://`.
//!
//! object_store's own defaults retry a request for up to three minutes (ten retries, each
//! request allowed 30 s): a reconcile loop, or a pod's 30 s shutdown grace, cannot wait
//! that long behind one unanswered request. The defaults here end any bucket request
//! within about 45 s, and a caller's deadline (CONTRACT.md §15) cuts it sooner.

#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
use super::params::Params;
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
use crate::error::Error;
use std::time::Duration;

/// The query parameters of every cloud scheme, [`take_settings`]'s, and before them
/// the scheme's own: the four names are written here once.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
macro_rules! cloud_params {
    ($($own:literal),* $(,)?) => {
        &[$($own,)* "timeout", "connect_timeout", "retries", "retry_timeout"]
    };
}
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
pub(crate) use cloud_params;

/// How a cloud backend's HTTP client waits and retries (`s3://`, `gs://`, `azblob://`;
/// nothing else makes requests). The URL parameters of the same names override these
/// for one URL (docs/urls.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSettings {
    /// The most one HTTP request may take, from connecting to the last byte of its
    /// answer (URL `timeout`; default 30 s: a 64 MiB render at 2.2 MB/s).
    pub request_timeout: Duration,
    /// The most connecting may take (URL `connect_timeout`; default 5 s).
    pub connect_timeout: Duration,
    /// How many times a request that failed in a way worth retrying (a timeout or
    /// broken connection of an idempotent request, a 5xx, throttling) is made again
    /// (URL `retries`; default 3; 0: never).
    pub max_retries: u32,
    /// No retry starts later than this after the request's first attempt (URL
    /// `retry_timeout`; default 15 s), so one request ends within about
    /// `retry_timeout + request_timeout`.
    pub retry_timeout: Duration,
}

impl ClientSettings {
    /// The defaults: 30 s a request, 5 s to connect, 3 retries within 15 s.
    pub const DEFAULT: ClientSettings = ClientSettings {
        request_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(5),
        max_retries: 3,
        retry_timeout: Duration::from_secs(15),
    };
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A duration parameter: Go's and humantime's notation (`500ms`, `2s`, `1m30s`), more
/// than zero. The refusal never repeats the value.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
fn take_duration(params: &mut Params, name: &str) -> Result<Option<Duration>, Error> {
    let Some(text) = params.take(name) else {
        return Ok(None);
    };
    match humantime::parse_duration(&text) {
        Ok(d) if !d.is_zero() => Ok(Some(d)),
        _ => Err(params.error(format!(
            "{name} must be a duration above zero with its unit, such as 500ms, 10s or 1m"
        ))),
    }
}

/// `settings` with the URL's own parameters ([`cloud_params`]) taken over them.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
pub(crate) fn take_settings(
    params: &mut Params,
    settings: &ClientSettings,
) -> Result<ClientSettings, Error> {
    let mut s = *settings;
    if let Some(d) = take_duration(params, "timeout")? {
        s.request_timeout = d;
    }
    if let Some(d) = take_duration(params, "connect_timeout")? {
        s.connect_timeout = d;
    }
    if let Some(d) = take_duration(params, "retry_timeout")? {
        s.retry_timeout = d;
    }
    if let Some(text) = params.take("retries") {
        s.max_retries = text.parse().map_err(|_| {
            params.error("retries must be a whole number from 0 (no retry) to 4294967295")
        })?;
    }
    Ok(s)
}

/// The client options of a backend: `base` (the options its builder starts from, which
/// `with_client_options` replaces: GCS's allows http, for its emulator), the settings'
/// timeouts, the roots it trusts ([`add_roots`]), then whatever the backend's
/// environment says of its client (`AWS_ALLOW_HTTP`, `GOOGLE_PROXY_URL`, …), as the
/// builder's `from_env` would have set them.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
pub(crate) fn client_options(
    base: object_store::ClientOptions,
    settings: &ClientSettings,
    env_prefix: &str,
    client_key: impl Fn(&str) -> Option<object_store::ClientConfigKey>,
) -> object_store::ClientOptions {
    let mut options = add_roots(
        base.with_timeout(settings.request_timeout)
            .with_connect_timeout(settings.connect_timeout),
    );
    for (key, value) in std::env::vars_os() {
        if let (Some(key), Some(value)) = (key.to_str(), value.to_str())
            && key.starts_with(env_prefix)
            && let Some(client) = client_key(&key.to_ascii_lowercase())
        {
            options = options.with_config(client, value);
        }
    }
    options
}

/// The retry budget of the settings, with object_store's backoff.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
pub(crate) fn retry_config(settings: &ClientSettings) -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig::default(),
        max_retries: settings.max_retries as usize,
        retry_timeout: settings.retry_timeout,
    }
}

/// The roots a TLS server's certificate must chain to: the system's when it has any
/// (`SSL_CERT_FILE`, `SSL_CERT_DIR`, the distribution's bundle: operators add private
/// CAs there), otherwise Mozilla's roots compiled into this library (webpki-root-certs).
/// An image holding nothing but the binary has no system bundle, and without a root
/// the HTTP client cannot even be built, for an `http://` endpoint too.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
fn add_roots(options: object_store::ClientOptions) -> object_store::ClientOptions {
    use std::sync::OnceLock;
    static SYSTEM_HAS_ROOTS: OnceLock<bool> = OnceLock::new();
    let system = *SYSTEM_HAS_ROOTS.get_or_init(|| {
        let found = !rustls_native_certs::load_native_certs().certs.is_empty();
        if !found {
            tracing::debug!(
                "no CA certificates on this system (SSL_CERT_FILE, SSL_CERT_DIR, the \
                 distribution's bundle): trusting the Mozilla roots built into render-store"
            );
        }
        found
    });
    with_roots(options, system)
}

/// `options` trusting the system's roots, or without any the bundled ones alone.
#[cfg(any(feature = "s3", feature = "gcs", feature = "azure"))]
fn with_roots(
    options: object_store::ClientOptions,
    system_has_roots: bool,
) -> object_store::ClientOptions {
    if system_has_roots {
        return options;
    }
    let mut options = options.with_no_system_certificates(true);
    for root in webpki_root_certs::TLS_SERVER_ROOT_CERTS {
        // Every bundled root is a DER certificate reqwest reads; one that did not parse
        // would only be one root fewer.
        if let Ok(certificate) = object_store::Certificate::from_der(root.as_ref()) {
            options = options.with_root_certificate(certificate);
        }
    }
    options
}

#[cfg(all(test, feature = "s3"))]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_writes_them() {
        for (text, want) in [
            ("500ms", 500),
            ("2s", 2_000),
            ("1m30s", 90_000),
            ("1m", 60_000),
        ] {
            assert_eq!(
                humantime::parse_duration(text).unwrap(),
                Duration::from_millis(want),
                "{text}"
            );
        }
    }

    /// Without a system bundle the bundled roots make a client (the system's verifier
    /// would refuse to be built: "No CA certificates were loaded from the system").
    #[test]
    fn the_bundled_roots_make_a_client_without_a_system_bundle() {
        use object_store::aws::AmazonS3Builder;
        let options = with_roots(object_store::ClientOptions::new(), false);
        let built = AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_region("us-east-1")
            .with_endpoint("http://127.0.0.1:9")
            .with_client_options(options)
            .with_allow_http(true)
            .build();
        assert!(built.is_ok(), "{built:?}");
        assert!(webpki_root_certs::TLS_SERVER_ROOT_CERTS.len() > 100);
    }
}
