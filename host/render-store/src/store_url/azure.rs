//! `azblob://container?…`: Azure Blob Storage with gocloud's parameters and
//! environment: `AZURE_STORAGE_ACCOUNT`, `AZURE_STORAGE_KEY`, `AZURE_STORAGE_SAS_TOKEN`,
//! `AZURE_STORAGE_CONNECTION_STRING` (and `AZURE_STORAGE_DOMAIN`,
//! `AZURE_STORAGE_PROTOCOL`, `AZURE_STORAGE_IS_CDN`, `AZURE_STORAGE_IS_LOCAL_EMULATOR`
//! as defaults of the parameters). Without a key, SAS or connection string, the
//! service-principal and managed-identity variables object_store reads apply.

use super::client::{ClientSettings, client_options, retry_config, take_settings};
use super::params::{Params, env, not_a_bool, parse_bool};
use crate::error::Error;
use object_store::ObjectStore;
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use std::str::FromStr;
use std::sync::Arc;
use url::Url;

pub(crate) const AZURE_PARAMS: &[&str] =
    super::client::cloud_params!["domain", "protocol", "localemu", "cdn",];

/// The parts of an Azure storage connection string the client uses.
#[derive(Debug, Default, PartialEq, Eq)]
struct ConnectionString {
    account: Option<String>,
    key: Option<String>,
    sas: Option<String>,
    blob_endpoint: Option<String>,
    protocol: Option<String>,
    suffix: Option<String>,
}

/// Errors name a part by its position and key, never by its text: a malformed part
/// may be a piece of the account key.
fn parse_connection_string(text: &str) -> Result<ConnectionString, String> {
    let mut c = ConnectionString::default();
    let parts = text.split(';').map(str::trim).filter(|p| !p.is_empty());
    for (n, part) in parts.enumerate() {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("connection string part {} is not key=value", n + 1))?;
        let v = v.to_string();
        match k {
            "AccountName" => c.account = Some(v),
            "AccountKey" => c.key = Some(v),
            "SharedAccessSignature" => c.sas = Some(v),
            "BlobEndpoint" => c.blob_endpoint = Some(v),
            "DefaultEndpointsProtocol" => c.protocol = Some(v),
            "EndpointSuffix" => c.suffix = Some(v),
            // Endpoints of the other storage services.
            "QueueEndpoint" | "TableEndpoint" | "FileEndpoint" => {}
            other => {
                return Err(format!(
                    "connection string key {other:?} (part {}) is not understood",
                    n + 1
                ));
            }
        }
    }
    Ok(c)
}

fn bool_param(params: &mut Params, name: &str, env_name: &str) -> Result<bool, Error> {
    match params.take_bool(&[name])? {
        Some(b) => Ok(b),
        None => match env(env_name) {
            None => Ok(false),
            Some(v) => parse_bool(&v).ok_or_else(|| params.error(not_a_bool(env_name))),
        },
    }
}

pub(crate) fn open(
    parsed: &Url,
    mut params: Params,
    client: &ClientSettings,
) -> Result<Arc<dyn ObjectStore>, Error> {
    let container = params.bucket_name(parsed, "container")?;
    let client = take_settings(&mut params, client)?;
    let localemu = bool_param(&mut params, "localemu", "AZURE_STORAGE_IS_LOCAL_EMULATOR")?;
    let cdn = bool_param(&mut params, "cdn", "AZURE_STORAGE_IS_CDN")?;
    let domain = params
        .take("domain")
        .or_else(|| env("AZURE_STORAGE_DOMAIN"));
    let protocol = params
        .take("protocol")
        .or_else(|| env("AZURE_STORAGE_PROTOCOL"));
    params.finish(AZURE_PARAMS)?;
    if let Some(p) = protocol.as_deref()
        && p != "http"
        && p != "https"
    {
        return Err(super::redact::url_error(
            parsed.as_str(),
            "protocol (or AZURE_STORAGE_PROTOCOL) must be http or https".to_string(),
        ));
    }
    let fail = |reason: String| super::redact::url_error(parsed.as_str(), reason);

    let conn = match env("AZURE_STORAGE_CONNECTION_STRING") {
        Some(text) => parse_connection_string(&text)
            .map_err(|e| fail(format!("AZURE_STORAGE_CONNECTION_STRING: {e}")))?,
        None => ConnectionString::default(),
    };
    let account = conn
        .account
        .clone()
        .or_else(|| env("AZURE_STORAGE_ACCOUNT"))
        .ok_or_else(|| {
            fail(
                "no storage account: set AZURE_STORAGE_ACCOUNT or AZURE_STORAGE_CONNECTION_STRING"
                    .into(),
            )
        })?;

    let options = client_options(
        object_store::ClientOptions::new(),
        &client,
        "AZURE_",
        |key| match AzureConfigKey::from_str(key) {
            Ok(AzureConfigKey::Client(key)) => Some(key),
            _ => None,
        },
    );
    let mut builder = MicrosoftAzureBuilder::from_env()
        .with_client_options(options)
        .with_retry(retry_config(&client))
        .with_account(&account)
        .with_container_name(&container);
    if let Some(key) = conn.key.clone().or_else(|| env("AZURE_STORAGE_KEY")) {
        builder = builder.with_access_key(key);
    } else if let Some(sas) = conn.sas.clone().or_else(|| env("AZURE_STORAGE_SAS_TOKEN")) {
        builder = builder.with_config(AzureConfigKey::SasKey, sas);
    }

    let protocol = protocol.or(conn.protocol.clone()).unwrap_or_else(|| {
        if localemu {
            "http".into()
        } else {
            "https".into()
        }
    });
    let endpoint = match (&conn.blob_endpoint, domain) {
        (Some(endpoint), None) => endpoint.trim_end_matches('/').to_string(),
        (_, domain) => {
            let domain = domain.unwrap_or_else(|| match &conn.suffix {
                Some(suffix) => format!("blob.{suffix}"),
                None if localemu => "127.0.0.1:10000".into(),
                None => "blob.core.windows.net".into(),
            });
            if localemu {
                format!("{protocol}://{domain}/{account}")
            } else if cdn {
                format!("{protocol}://{domain}")
            } else {
                format!("{protocol}://{account}.{domain}")
            }
        }
    };
    if endpoint.starts_with("http://") {
        builder = builder.with_allow_http(true);
    }
    let store = builder
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| fail(format!("cannot open the Azure container: {e}")))?;
    Ok(Arc::new(store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_strings() {
        let c = parse_connection_string(
            "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/dev;",
        )
        .unwrap();
        assert_eq!(c.account.as_deref(), Some("dev"));
        assert_eq!(c.key.as_deref(), Some("a2V5"));
        assert_eq!(
            c.blob_endpoint.as_deref(),
            Some("http://127.0.0.1:10000/dev")
        );
        assert!(parse_connection_string("AccountName").is_err());
        let err = parse_connection_string("AccountName=a;c2VjcmV0a2V5").unwrap_err();
        assert!(
            err.contains("part 2") && !err.contains("c2VjcmV0a2V5"),
            "{err}"
        );
        assert!(
            parse_connection_string("Color=red")
                .unwrap_err()
                .contains("Color")
        );
    }
}
