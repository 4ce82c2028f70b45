//! `gs://bucket?…`: Google Cloud Storage. Credentials come from
//! `GOOGLE_APPLICATION_CREDENTIALS` or the metadata server, as object_store reads them;
//! with `STORAGE_EMULATOR_HOST` set, as gocloud does, requests go to that emulator
//! without authentication.

use super::client::{ClientSettings, client_options, retry_config, take_settings};
use super::params::{Params, env};
use crate::error::Error;
use object_store::ObjectStore;
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use serde_json::json;
use std::str::FromStr;
use std::sync::Arc;
use url::Url;

pub(crate) const GCS_PARAMS: &[&str] = super::client::cloud_params!["anonymous",];

pub(crate) fn open(
    parsed: &Url,
    mut params: Params,
    client: &ClientSettings,
) -> Result<Arc<dyn ObjectStore>, Error> {
    let bucket = params.bucket_name(parsed, "bucket")?;
    let client = take_settings(&mut params, client)?;
    let anonymous = params.take_bool(&["anonymous"])?.unwrap_or(false);
    params.refuse(
        "access_id",
        "it only signs URLs, which the render store never does",
    )?;
    params.refuse(
        "private_key_path",
        "it only signs URLs, which the render store never does",
    )?;
    params.finish(GCS_PARAMS)?;

    // object_store's GCS builder allows http (for STORAGE_EMULATOR_HOST): so do these.
    let base = object_store::ClientOptions::new().with_allow_http(true);
    let options = client_options(
        base,
        &client,
        "GOOGLE_",
        |key| match GoogleConfigKey::from_str(key) {
            Ok(GoogleConfigKey::Client(key)) => Some(key),
            _ => None,
        },
    );
    let mut builder = GoogleCloudStorageBuilder::from_env()
        .with_client_options(options)
        .with_retry(retry_config(&client))
        .with_bucket_name(&bucket);
    // object_store's way to skip OAuth is a service-account document that says so.
    let no_auth = |base_url: String| {
        json!({
            "gcs_base_url": base_url,
            "disable_oauth": true,
            "client_email": "",
            "private_key": "",
            "private_key_id": "",
        })
        .to_string()
    };
    if let Some(host) = env("STORAGE_EMULATOR_HOST") {
        let base = if host.contains("://") {
            host
        } else {
            format!("http://{host}")
        };
        builder = builder.with_service_account_key(no_auth(base.trim_end_matches('/').to_string()));
    } else if anonymous {
        builder =
            builder.with_service_account_key(no_auth("https://storage.googleapis.com".into()));
    }
    let store = builder.build().map_err(|e| {
        super::redact::url_error(parsed.as_str(), format!("cannot open the GCS bucket: {e}"))
    })?;
    Ok(Arc::new(store))
}
