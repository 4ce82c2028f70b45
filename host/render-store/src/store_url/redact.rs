//! URLs as messages show them: credentials never appear (CONTRACT.md §12).
//!
//! A URL in a message keeps its scheme, host, port and path, which say which store is
//! meant; its user and password become `REDACTED@`, every query value becomes
//! `REDACTED` (the names stay, so an error can still say which parameter is wrong) and
//! a fragment becomes `#REDACTED`. A pasted Azure SAS URL is shown as
//! `https://account.blob.core.windows.net/c?sv=REDACTED&sig=REDACTED`.

use crate::error::Error;
use url::Url;

/// What stands in for a credential or a query value in a message.
pub const REDACTED: &str = "REDACTED";

/// `url` as a message may show it: without its user, password, query values or
/// fragment. Text that does not parse as a URL is treated the same way by its
/// characters: everything before the last `@` of its authority, and every query value,
/// is replaced.
pub fn redact_url(url: &str) -> String {
    let url = url.trim();
    match Url::parse(url) {
        Ok(parsed) if !parsed.cannot_be_a_base() => redact_parsed(&parsed),
        _ => redact_text(url),
    }
}

/// `text` with every URL in it (a `scheme://…` run up to white space or a quote)
/// redacted as [`redact_url`] does: for messages of other libraries, such as an HTTP
/// client's error naming the request it sent, which may carry a signature.
pub fn redact_urls_in(text: &str) -> String {
    let is_scheme_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.');
    let ends_url = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_scheme_char(c))
            .last()
            .map_or(at, |(i, _)| i);
        let mut end = rest[at..].find(ends_url).map_or(rest.len(), |i| at + i);
        // Punctuation after a URL in a sentence ("file://, mem://") ends the sentence's
        // clause, not the URL: left as written, so the URL is not rewritten with it.
        end = at
            + 3
            + rest[at + 3..end]
                .trim_end_matches([',', '.', ';', ':', ')', '!', '?'])
                .len();
        out.push_str(&rest[..start]);
        // A bare `scheme://` (as in "a file:// store") names a scheme, not a URL: it holds
        // nothing to redact, and rewriting it would change the sentence.
        if end == at + 3 {
            out.push_str(&rest[start..end]);
        } else {
            out.push_str(&redact_url(&rest[start..end]));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn redact_parsed(url: &Url) -> String {
    let mut out = format!("{}://", url.scheme());
    if !url.username().is_empty() || url.password().is_some() {
        out.push_str(REDACTED);
        out.push('@');
    }
    out.push_str(url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        out.push_str(&format!(":{port}"));
    }
    out.push_str(url.path());
    push_query(&mut out, url.query());
    if url.fragment().is_some() {
        out.push('#');
        out.push_str(REDACTED);
    }
    out
}

fn redact_text(text: &str) -> String {
    let (text, fragment) = match text.split_once('#') {
        Some((before, _)) => (before, true),
        None => (text, false),
    };
    let (base, query) = match text.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (text, None),
    };
    let (scheme, rest) = match base.find("://") {
        Some(i) => base.split_at(i + 3),
        None => ("", base),
    };
    let mut out = String::from(scheme);
    // Without a parse, an `@` anywhere may end a user:password (which may itself hold
    // `/` or `:`), so everything before the last one goes.
    match rest.rfind('@') {
        Some(i) => {
            out.push_str(REDACTED);
            out.push_str(&rest[i..]);
        }
        None => out.push_str(rest),
    }
    push_query(&mut out, query);
    if fragment {
        out.push('#');
        out.push_str(REDACTED);
    }
    out
}

fn push_query(out: &mut String, query: Option<&str>) {
    let Some(query) = query else {
        return;
    };
    let parts: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|part| match part.split_once('=') {
            Some((name, value)) if says_nothing(name, value) => format!("{name}={value}"),
            Some((name, _)) => format!("{name}={REDACTED}"),
            // A part without a name may be a pasted token.
            None => REDACTED.to_string(),
        })
        .collect();
    out.push('?');
    out.push_str(&parts.join("&"));
}

/// Whether a query parameter's value can be shown: a switch or a choice among a few
/// fixed words (`create_dir=true`, `protocol=http`), which tells a reader how the store
/// was opened and nothing else. Every other value (a region, an endpoint, a key id, any
/// parameter this host does not know) is redacted: it may be a name worth keeping to
/// oneself, or a token pasted where it does not belong.
fn says_nothing(name: &str, value: &str) -> bool {
    const SWITCHES: [&str; 11] = [
        "create_dir",
        "use_path_style",
        "s3ForcePathStyle",
        "disable_https",
        "disableSSL",
        "anonymous",
        "localemu",
        "cdn",
        "dualstack",
        "fips",
        "accelerate",
    ];
    let boolean = matches!(
        value,
        "true" | "false" | "True" | "False" | "TRUE" | "FALSE" | "1" | "0" | "t" | "f"
    );
    match name {
        n if SWITCHES.contains(&n) => boolean,
        "protocol" => matches!(value, "http" | "https"),
        "awssdk" => matches!(value, "v1" | "v2" | "V1" | "V2"),
        "metadata" => value == "skip",
        // The cloud client's bounds: a number of retries or a duration (`2s`, `1m30s`).
        "retries" => value.len() <= 4 && value.bytes().all(|b| b.is_ascii_digit()),
        "timeout" | "connect_timeout" | "retry_timeout" => {
            value.len() <= 16
                && value.bytes().all(|b| b.is_ascii_alphanumeric())
                && humantime::parse_duration(value).is_ok()
        }
        "ssetype" => matches!(value, "AES256" | "aws:kms" | "aws:kms:dsse"),
        _ => false,
    }
}

/// Credentials are read from each backend's environment, never from the URL: a URL
/// is logged, shown and stored in places a secret must not be.
pub(crate) fn refuse_credentials(url: &str, parsed: &Url) -> Result<(), Error> {
    if parsed.username().is_empty() && parsed.password().is_none() {
        return Ok(());
    }
    let instead = match parsed.scheme() {
        "s3" => "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)",
        "gs" => "set GOOGLE_APPLICATION_CREDENTIALS",
        "azblob" => {
            "set AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, \
             or AZURE_STORAGE_CONNECTION_STRING"
        }
        _ => "set the backend's environment variables (docs/urls.md)",
    };
    Err(url_error(
        url,
        format!(
            "credentials do not belong in the URL; remove the user:password part and {instead}"
        ),
    ))
}

/// Every error about a URL is made here, so none shows its credentials.
pub(crate) fn url_error(url: &str, reason: impl Into<String>) -> Error {
    Error::Url {
        url: redact_url(url),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_credentials_and_query_values() {
        let cases = [
            (
                "s3://AKIAEXAMPLE:s3cr3t@bucket?region=eu-west-1&x=1",
                "s3://REDACTED@bucket?region=REDACTED&x=REDACTED",
            ),
            // A switch says nothing worth hiding; an unknown value in its place might.
            (
                "file:///var/store?create_dir=true",
                "file:///var/store?create_dir=true",
            ),
            (
                "file:///var/store?create_dir=t0ken",
                "file:///var/store?create_dir=REDACTED",
            ),
            (
                "azblob://c?protocol=http&localemu=true&domain=acct.example",
                "azblob://c?protocol=http&localemu=true&domain=REDACTED",
            ),
            (
                "s3://b?timeout=2s&connect_timeout=500ms&retries=3&retry_timeout=1m30s",
                "s3://b?timeout=2s&connect_timeout=500ms&retries=3&retry_timeout=1m30s",
            ),
            (
                "s3://b?timeout=s3cr3t&retries=0x1f&retry_timeout=2%20s",
                "s3://b?timeout=REDACTED&retries=REDACTED&retry_timeout=REDACTED",
            ),
            ("mem://", "mem://"),
            ("gs://b", "gs://b"),
            (
                "https://acct.blob.core.windows.net/c?sv=2024&sig=abc%2Bdef&se=2030#frag",
                "https://acct.blob.core.windows.net/c?sv=REDACTED&sig=REDACTED&se=REDACTED#REDACTED",
            ),
            ("http://u@h:9000/p?tok", "http://REDACTED@h:9000/p?REDACTED"),
            // Does not parse (a space in the host, a bad port): redacted by its text.
            (
                "s3://AK IA:se/cret@buck et?k=v",
                "s3://REDACTED@buck et?k=REDACTED",
            ),
            ("s3://a:b/c@host", "s3://REDACTED@host"),
            ("AKIA:SECRET@bucket", "REDACTED@bucket"),
            ("not a url", "not a url"),
        ];
        for (url, want) in cases {
            assert_eq!(redact_url(url), want, "{url}");
        }
    }

    #[test]
    fn urls_inside_text_are_redacted() {
        assert_eq!(
            redact_urls_in(
                "Error performing GET https://a.blob.core.windows.net/c/k?sig=SECRET in 1s, \
                 and \"s3://K:S@b\" too"
            ),
            "Error performing GET https://a.blob.core.windows.net/c/k?sig=REDACTED in 1s, \
             and \"s3://REDACTED@b\" too"
        );
        assert_eq!(redact_urls_in("no url here: a:b"), "no url here: a:b");
        // A scheme named in a sentence is left as it is.
        let sentence = "a symbolic link, which a file:// store never follows; see mem://";
        assert_eq!(redact_urls_in(sentence), sentence);
        // A list of schemes, and punctuation after a URL, stay as written.
        let list = "expected one of s3://, gs://, azblob://, file://, mem://";
        assert_eq!(redact_urls_in(list), list);
        assert_eq!(
            redact_urls_in("open file:///x?create_dir=true, then s3://K:S@b."),
            "open file:///x?create_dir=true, then s3://REDACTED@b."
        );
    }
}
