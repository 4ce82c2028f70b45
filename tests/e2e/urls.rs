//! The table of render-store URLs in docs/urls.md matches what the code accepts.

use render_store::{Error, SCHEMES, accepted_params, open_bucket};
use std::collections::{BTreeMap, BTreeSet};

/// Parameter names per scheme, read from docs/urls.md's URL table.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let readme = include_str!("../../docs/urls.md");
    let table = readme
        .split("| scheme | parameter | what it does |")
        .nth(1)
        .expect("docs/urls.md has the URL table");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // A row group may name several schemes (`s3://`, `gs://`, `azblob://`: the cloud
    // client's parameters); its rows below with an empty first cell are theirs too.
    let mut schemes: Vec<String> = Vec::new();
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let named: Vec<String> = cells[1]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|c| c.split_once("://").map(|(s, _)| s.to_string()))
            .collect();
        if !named.is_empty() {
            schemes = named;
        }
        for scheme in &schemes {
            let names = out.entry(scheme.clone()).or_default();
            for (i, part) in cells[2].split('`').enumerate() {
                if i % 2 == 1 {
                    names.insert(part.to_string());
                }
            }
        }
    }
    out
}

fn url_with(scheme: &str, param: &str) -> String {
    match scheme {
        "file" => format!("file:///tmp?{param}=true"),
        "mem" => format!("mem://?{param}=true"),
        _ => format!("{scheme}://b?{param}=true"),
    }
}

#[test]
fn every_accepted_parameter_is_documented_and_every_other_one_refused_by_name() {
    let documented = documented();
    assert_eq!(
        documented
            .keys()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        SCHEMES.iter().copied().collect::<BTreeSet<_>>(),
        "the table has a row group per scheme"
    );
    for scheme in SCHEMES {
        let names = &documented[*scheme];
        for accepted in accepted_params(scheme) {
            assert!(
                names.contains(*accepted),
                "{scheme}: {accepted} is not in docs/urls.md"
            );
        }
        for name in names
            .iter()
            .filter(|n| !accepted_params(scheme).contains(&n.as_str()))
        {
            match open_bucket(&url_with(scheme, name)) {
                Err(Error::Url { reason, .. }) => {
                    assert!(
                        reason.contains(&format!("{name:?}")),
                        "{scheme}: {name}: {reason}"
                    )
                }
                other => panic!(
                    "{scheme}: {name} should be refused, got {:?}",
                    other.map(|_| ())
                ),
            }
        }
        match open_bucket(&url_with(scheme, "no_such_parameter")) {
            Err(Error::Url { reason, .. }) => {
                assert!(reason.contains("no_such_parameter"), "{reason}")
            }
            other => panic!(
                "{scheme}: an unknown parameter opened: {:?}",
                other.map(|_| ())
            ),
        }
    }
}

/// Strings that stand for credentials in the tests below; none may appear in a message.
const SECRETS: &[&str] = &[
    "AKIAUSERSECRET",
    "PASSWORDSECRET",
    "REGIONSECRET",
    "QUERYSECRET",
    "SIGSECRET",
];

fn assert_no_secret(message: &str) {
    for secret in SECRETS {
        assert!(!message.contains(secret), "{secret} shown in: {message}");
    }
}

fn url_error(url: &str) -> String {
    match open_bucket(url) {
        Err(e @ Error::Url { .. }) => e.to_string(),
        Err(other) => panic!("{url}: unexpected error {other}"),
        Ok(_) => panic!("{url}: opened"),
    }
}

#[test]
fn credentials_in_a_url_are_refused_and_never_shown() {
    let err =
        url_error("s3://AKIAUSERSECRET:PASSWORDSECRET@bucket?region=REGIONSECRET&x=QUERYSECRET");
    assert_no_secret(&err);
    assert!(
        err.contains("credentials do not belong in the URL") && err.contains("AWS_ACCESS_KEY_ID"),
        "{err}"
    );
    assert!(
        err.contains("s3://REDACTED@bucket?region=REDACTED&x=REDACTED"),
        "{err}"
    );
    let err = url_error("azblob://AKIAUSERSECRET@container");
    assert_no_secret(&err);
    assert!(err.contains("AZURE_STORAGE_KEY"), "{err}");

    // Errors about something else still hide every query value.
    for url in [
        // A pasted Azure SAS URL.
        "https://account.blob.core.windows.net/c?sv=2024&sig=SIGSECRET&se=QUERYSECRET",
        "azblob://c?sv=2024&sig=SIGSECRET&se=QUERYSECRET",
        "s3://bucket?region=REGIONSECRET&sig=SIGSECRET",
        "mem://?token=QUERYSECRET",
        "file:///surely/not/here?x=QUERYSECRET",
        // URLs that do not even parse.
        "s3://AKIAUSERSECRET:PASS WORDSECRET@bu cket?k=QUERYSECRET",
        "s3://AKIAUSERSECRET:PASSWORDSECRET@bucket:port?k=QUERYSECRET",
    ] {
        let err = url_error(url);
        assert_no_secret(&err);
        assert!(err.contains("REDACTED"), "{err}");
    }
}

/// A bad value of a parameter is refused naming the parameter, never repeating the
/// value: the URL beside it is redacted, and a value in the wrong place may be a secret.
#[test]
fn a_bad_parameter_value_is_not_repeated() {
    for (url, names) in [
        ("s3://bucket?use_path_style=QUERYSECRET", "use_path_style"),
        ("s3://bucket?disableSSL=QUERYSECRET", "disable_https"),
        ("s3://bucket?ssetype=QUERYSECRET", "ssetype"),
        ("s3://bucket?awssdk=QUERYSECRET", "awssdk"),
        ("gs://bucket?anonymous=QUERYSECRET", "anonymous"),
        ("azblob://c?localemu=QUERYSECRET", "localemu"),
        ("azblob://c?protocol=QUERYSECRET", "protocol"),
        ("file:///tmp?create_dir=QUERYSECRET", "create_dir"),
    ] {
        let err = url_error(url);
        assert_no_secret(&err);
        assert!(
            err.contains(names) && err.contains("REDACTED"),
            "{url}: {err}"
        );
    }
}

#[test]
fn the_cli_shows_no_credentials() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
        .args([
            "--render-store-url",
            "s3://AKIAUSERSECRET:PASSWORDSECRET@bucket?region=REGIONSECRET&x=QUERYSECRET",
            "ls",
        ])
        .env_remove("RENDER_STORE_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_secret(&stderr);
    assert!(stderr.contains("credentials do not belong"), "{stderr}");
}

#[test]
fn a_bad_connection_string_does_not_show_its_key() {
    for connection in [
        "AccountName=dev;AccountKey=QUERYSECRET;Colour=red",
        "AccountName=dev;QUERYSECRET",
        "AccountName=dev;AccountKey=QUERYSECRET;SharedAccessSignature=sv=1&sig=SIGSECRET;Bad",
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_render-store-under-test"))
            .args(["--render-store-url", "azblob://container", "ls"])
            .env("AZURE_STORAGE_CONNECTION_STRING", connection)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{connection}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_no_secret(&stderr);
        assert!(
            stderr.contains("AZURE_STORAGE_CONNECTION_STRING"),
            "{stderr}"
        );
    }
}
