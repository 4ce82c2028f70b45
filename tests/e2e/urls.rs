//! The README's table of render-store URLs matches what the code accepts.

use render_store::{Error, SCHEMES, accepted_params, open_bucket};
use std::collections::{BTreeMap, BTreeSet};

/// Parameter names per scheme, read from the README's URL table.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let readme = include_str!("../../README.md");
    let table = readme
        .split("| scheme | parameter | what it does |")
        .nth(1)
        .expect("the README has the URL table");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut scheme = String::new();
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let Some(s) = cells[1]
            .strip_prefix('`')
            .and_then(|c| c.split("://").next())
        {
            scheme = s.to_string();
        }
        let names = out.entry(scheme.clone()).or_default();
        for (i, part) in cells[2].split('`').enumerate() {
            if i % 2 == 1 {
                names.insert(part.to_string());
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
                "{scheme}: {accepted} is not in the README"
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
