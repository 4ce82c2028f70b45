//! `s3://bucket?…`: gocloud's s3blob parameters on object_store's S3 client.
//! Credentials come from the usual AWS environment (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, web identity, container and instance
//! metadata), as object_store reads them.

use super::client::{ClientSettings, client_options, retry_config, take_settings};
use super::params::{Params, env};
use crate::error::Error;
use object_store::ObjectStore;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use std::str::FromStr;
use std::sync::Arc;
use url::Url;

pub(crate) const S3_PARAMS: &[&str] = super::client::cloud_params![
    "region",
    "endpoint",
    "use_path_style",
    "s3ForcePathStyle",
    "disable_https",
    "disableSSL",
    "anonymous",
    "ssetype",
    "kmskeyid",
    "awssdk",
    "dualstack",
    "fips",
    "accelerate",
];

pub(crate) fn open(
    parsed: &Url,
    mut params: Params,
    client: &ClientSettings,
) -> Result<Arc<dyn ObjectStore>, Error> {
    let bucket = params.bucket_name(parsed, "bucket")?;
    let client = take_settings(&mut params, client)?;
    let options = client_options(object_store::ClientOptions::new(), &client, "AWS_", |key| {
        match AmazonS3ConfigKey::from_str(key) {
            Ok(AmazonS3ConfigKey::Client(key)) => Some(key),
            _ => None,
        }
    });
    // The client options first: the calls below (allow_http) change them in place.
    let mut builder = AmazonS3Builder::from_env()
        .with_client_options(options)
        .with_retry(retry_config(&client))
        .with_bucket_name(&bucket);

    if let Some(region) = params.take("region").or_else(|| env("AWS_REGION")) {
        builder = builder.with_region(region);
    }
    let disable_https = params
        .take_bool(&["disable_https", "disableSSL"])?
        .unwrap_or(false);
    let path_style = params
        .take_bool(&["use_path_style", "s3ForcePathStyle"])?
        .unwrap_or(false);
    if let Some(endpoint) = params.take("endpoint") {
        // gocloud adds a scheme to a bare host name.
        let endpoint = if endpoint.contains("://") {
            endpoint
        } else if disable_https {
            format!("http://{endpoint}")
        } else {
            format!("https://{endpoint}")
        };
        let parsed_endpoint = Url::parse(&endpoint).map_err(|e| {
            params.error(format!(
                "endpoint {:?} is not a URL: {e}",
                super::redact::redact_url(&endpoint)
            ))
        })?;
        if parsed_endpoint.scheme() == "http" {
            builder = builder.with_allow_http(true);
        }
        builder = if path_style {
            builder.with_endpoint(endpoint)
        } else {
            // Virtual-hosted style, as the AWS SDK makes it: the bucket becomes a
            // subdomain of the endpoint's host.
            let mut hosted = parsed_endpoint.clone();
            let host = parsed_endpoint.host_str().unwrap_or_default();
            hosted
                .set_host(Some(&format!("{bucket}.{host}")))
                .map_err(|e| {
                    params.error(format!(
                        "endpoint {:?}: {e}",
                        super::redact::redact_url(&endpoint)
                    ))
                })?;
            builder
                .with_endpoint(hosted.as_str().trim_end_matches('/'))
                .with_virtual_hosted_style_request(true)
        };
    } else if !path_style {
        builder = builder.with_virtual_hosted_style_request(true);
    }
    if disable_https {
        builder = builder.with_allow_http(true);
    }
    if params.take_bool(&["anonymous"])? == Some(true) {
        builder = builder.with_skip_signature(true);
    }

    let sse = params.take("ssetype");
    let kms_key = params.take("kmskeyid");
    match (sse.as_deref(), kms_key) {
        (None, None) => {}
        (None, Some(_)) => {
            return Err(params.error("kmskeyid needs ssetype=aws:kms or aws:kms:dsse"));
        }
        (Some("AES256"), None) => {
            let key = AmazonS3ConfigKey::from_str("aws_server_side_encryption")
                .expect("object_store knows its own key");
            builder = builder.with_config(key, "AES256");
        }
        (Some("AES256"), Some(_)) => {
            return Err(params.error("kmskeyid does not go with ssetype=AES256"));
        }
        (Some("aws:kms"), key) => {
            builder = builder.with_sse_kms_encryption(key.unwrap_or_default())
        }
        (Some("aws:kms:dsse"), key) => {
            builder = builder.with_dsse_kms_encryption(key.unwrap_or_default())
        }
        (Some(_), _) => {
            return Err(params.error("ssetype must be one of AES256, aws:kms, aws:kms:dsse"));
        }
    }

    // Selects the Go SDK version in gocloud; both talk to the same bucket.
    if let Some(v) = params.take("awssdk")
        && !matches!(v.as_str(), "v1" | "v2" | "V1" | "V2")
    {
        return Err(params.error("awssdk must be v1 or v2"));
    }
    params.refuse_true(
        "dualstack",
        "object_store has no dual-stack endpoints; give endpoint instead",
    )?;
    params.refuse_true(
        "fips",
        "object_store has no FIPS endpoints; give endpoint instead",
    )?;
    params.refuse_true(
        "accelerate",
        "object_store has no transfer acceleration; give endpoint instead",
    )?;
    for name in [
        "profile",
        "rate_limiter_capacity",
        "hostname_immutable",
        "request_checksum_calculation",
        "response_checksum_validation",
    ] {
        params.refuse(name, "object_store's S3 client has no such setting")?;
    }
    params.finish(S3_PARAMS)?;
    let store = builder.build().map_err(|e| {
        super::redact::url_error(parsed.as_str(), format!("cannot open the S3 bucket: {e}"))
    })?;
    Ok(Arc::new(store))
}
