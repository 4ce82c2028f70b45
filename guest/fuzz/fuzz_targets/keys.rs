//! Key layout, names, renderRefs and times on arbitrary input.
//!
//! The input is read as text (invalid UTF-8 replaced) and checked as a whole, and its
//! lines are used as namespace, name and key; its first 12 bytes are also read as a
//! `SyncTime` (seconds, nanoseconds). Invariants:
//! - validate_namespace / validate_name / validate_render_ref agree with the rules of
//!   CONTRACT.md §3 and §4 written out again here;
//! - ReleasePrefix::new succeeds exactly when both names validate, and is `ns/name/`;
//! - a key time that parses formats back to the same text; an RFC 3339 time that parses
//!   is within years 0000-9999, formats to a time that parses back to it, and formats
//!   to the same text when it was already in that form; every SyncTime that formats
//!   parses back to itself, and formats exactly when its year is within 0000-9999;
//!   key times sort as their times do;
//! - a key that parses under a prefix is made again, byte for byte, by render_key or
//!   history_key from what was parsed, and what was parsed validates; parse,
//!   parse_render_key and parse_history_key agree; a key made for one Release never
//!   parses under another.

#![no_main]

use libfuzzer_sys::fuzz_target;
use render_store_guest::time::KEY_TIME_LEN;
use render_store_guest::{
    HistoryKey, ParsedKey, Release, ReleasePrefix, SyncTime, format_key_time, format_synced_at,
    parse_key_time, parse_synced_at, sha256_hex, validate_name, validate_namespace,
    validate_render_ref,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check_string(&text);
    let lines: Vec<&str> = text.split('\n').collect();
    for line in &lines {
        check_string(line);
    }
    let time = sync_time(data);
    check_sync_time(time);
    if let [a, b, ..] = lines[..] {
        if let (Ok(t1), Ok(t2)) = (parse_key_time(a), parse_key_time(b)) {
            assert_eq!(a.cmp(b), t1.cmp(&t2), "key time order {a} {b}");
        }
        if let (Ok(t1), Ok(t2)) = (parse_synced_at(a), parse_synced_at(b)) {
            let (k1, k2) = (format_key_time(t1).unwrap(), format_key_time(t2).unwrap());
            assert_eq!(k1.cmp(&k2), t1.cmp(&t2), "key time order {k1} {k2}");
        }
    }
    let (namespace, name, rest) = match lines[..] {
        [namespace, name, ref rest @ ..] => (namespace, name, rest),
        _ => ("ns", "app", &lines[..]),
    };
    check_keys(namespace, name, rest, time, data);
});

fn sync_time(data: &[u8]) -> SyncTime {
    let mut bytes = [0u8; 12];
    let n = data.len().min(12);
    bytes[..n].copy_from_slice(&data[..n]);
    SyncTime {
        seconds: i64::from_le_bytes(bytes[..8].try_into().unwrap()),
        nanoseconds: u32::from_le_bytes(bytes[8..].try_into().unwrap()),
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, written with chars rather than bytes.
fn is_label(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.chars().next().is_some_and(alnum)
        && s.chars().last().is_some_and(alnum)
        && s.chars().all(|c| alnum(c) || c == '-')
}

fn namespace_ok(s: &str) -> bool {
    s.chars().count() <= 63 && is_label(s)
}

fn name_ok(s: &str) -> bool {
    s.chars().count() <= 253 && s.split('.').all(is_label)
}

fn render_ref_ok(s: &str) -> bool {
    let Some(hex) = s.strip_prefix("sha256:") else {
        return false;
    };
    hex.chars().count() == 64
        && hex
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

fn check_string(s: &str) {
    assert_eq!(
        validate_namespace(s).is_ok(),
        namespace_ok(s),
        "namespace {s:?}"
    );
    assert_eq!(validate_name(s).is_ok(), name_ok(s), "name {s:?}");
    assert_eq!(
        validate_render_ref(s).is_ok(),
        render_ref_ok(s),
        "renderRef {s:?}"
    );

    if let Ok(t) = parse_key_time(s) {
        assert_eq!(s.len(), KEY_TIME_LEN);
        assert_eq!(format_key_time(t).unwrap(), s, "key time round trip");
        t.validate().expect("a parsed key time is valid");
        let rfc = format_synced_at(t).unwrap();
        assert_eq!(
            parse_synced_at(&rfc).unwrap(),
            t,
            "key time as RFC 3339 {rfc}"
        );
    }

    if let Ok(t) = parse_synced_at(s) {
        t.validate()
            .expect("a parsed RFC 3339 time is in years 0000-9999");
        let formatted = format_synced_at(t).unwrap();
        assert_eq!(
            parse_synced_at(&formatted).unwrap(),
            t,
            "{s} -> {formatted}"
        );
        let key = format_key_time(t).unwrap();
        assert_eq!(parse_key_time(&key).unwrap(), t, "{s} -> {key}");
        if in_synced_at_form(s) {
            assert_eq!(formatted, s, "an RFC 3339 time in canonical form");
        }
    }
}

/// Ends in `Z`, and a fraction, if any, does not end in `0`: the form
/// format_synced_at writes.
fn in_synced_at_form(s: &str) -> bool {
    let Some(body) = s.strip_suffix('Z') else {
        return false;
    };
    match body.split_once('.') {
        Some((_, fraction)) => !fraction.ends_with('0'),
        None => true,
    }
}

fn check_sync_time(t: SyncTime) {
    // 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z.
    let in_range =
        t.nanoseconds < 1_000_000_000 && (-62_167_219_200..=253_402_300_799).contains(&t.seconds);
    assert_eq!(t.validate().is_ok(), in_range, "{t:?}");
    match format_key_time(t) {
        Ok(key) => {
            assert!(in_range, "{t:?} formatted as {key}");
            assert_eq!(key.len(), KEY_TIME_LEN);
            assert_eq!(parse_key_time(&key).unwrap(), t, "{key}");
            let rfc = format_synced_at(t).unwrap();
            assert!(in_synced_at_form(&rfc), "{rfc}");
            assert_eq!(parse_synced_at(&rfc).unwrap(), t, "{rfc}");
        }
        Err(_) => {
            assert!(!in_range, "{t:?} did not format");
            assert!(format_synced_at(t).is_err());
        }
    }
}

fn check_keys(namespace: &str, name: &str, keys: &[&str], time: SyncTime, data: &[u8]) {
    let release = Release::new(namespace, name);
    let prefix = match ReleasePrefix::new(&release) {
        Ok(prefix) => {
            assert!(namespace_ok(namespace) && name_ok(name));
            assert_eq!(prefix.as_str(), format!("{namespace}/{name}/"));
            prefix
        }
        Err(_) => {
            assert!(!namespace_ok(namespace) || !name_ok(name));
            ReleasePrefix::new(&Release::new("ns", "app")).unwrap()
        }
    };
    let other = if prefix.as_str() == "ns/app/" {
        ReleasePrefix::new(&Release::new("ns", "app.v2")).unwrap()
    } else {
        ReleasePrefix::new(&Release::new("ns", "app")).unwrap()
    };

    for key in keys {
        check_key(&prefix, key);
        check_key(&other, key);
        // The same rest under this release's prefix.
        check_key(&prefix, &format!("{}{key}", prefix.as_str()));
    }

    // Keys made from the input's time and a renderRef parse back to them.
    let refs = [
        format!("sha256:{}", sha256_hex(data)),
        keys.first().copied().unwrap_or_default().to_string(),
    ];
    for render_ref in &refs {
        match prefix.render_key(render_ref) {
            Ok(key) => {
                assert!(render_ref_ok(render_ref));
                assert_eq!(
                    prefix.parse(&key),
                    Some(ParsedKey::Render(render_ref.clone()))
                );
                assert_eq!(other.parse(&key), None, "{key} under {}", other.as_str());
            }
            Err(_) => assert!(!render_ref_ok(render_ref)),
        }
        match prefix.history_key(time, render_ref) {
            Ok(key) => {
                assert!(render_ref_ok(render_ref) && time.validate().is_ok());
                assert_eq!(
                    prefix.parse_history_key(&key),
                    Some((time, render_ref.clone())),
                    "{key}"
                );
                assert_eq!(other.parse(&key), None, "{key} under {}", other.as_str());
            }
            Err(_) => assert!(!render_ref_ok(render_ref) || time.validate().is_err()),
        }
    }
}

fn check_key(prefix: &ReleasePrefix, key: &str) {
    let parsed = prefix.parse(key);
    match &parsed {
        Some(ParsedKey::Render(render_ref)) => {
            validate_render_ref(render_ref).expect("a parsed render key's renderRef");
            assert_eq!(prefix.render_key(render_ref).unwrap(), key, "render key");
            assert_eq!(prefix.parse_render_key(key).as_ref(), Some(render_ref));
            assert_eq!(prefix.parse_history_key(key), None);
        }
        Some(ParsedKey::History(HistoryKey {
            synced_at,
            render_ref,
        })) => {
            validate_render_ref(render_ref).expect("a parsed history key's renderRef");
            synced_at.validate().expect("a parsed history key's time");
            assert_eq!(
                prefix.history_key(*synced_at, render_ref).unwrap(),
                key,
                "history key"
            );
            assert_eq!(
                prefix.parse_history_key(key),
                Some((*synced_at, render_ref.clone()))
            );
            assert_eq!(prefix.parse_render_key(key), None);
        }
        None => {
            assert_eq!(prefix.parse_render_key(key), None);
            assert_eq!(prefix.parse_history_key(key), None);
            // Whatever does not parse was not made by render_key or history_key.
            if let Some(rest) = key.strip_prefix(prefix.as_str()) {
                if let Some(render_ref) = rest.strip_prefix("renders/") {
                    assert!(!render_ref_ok(render_ref), "{key} did not parse");
                }
                if let Some((time, render_ref)) = rest
                    .strip_prefix("history/")
                    .and_then(|entry| entry.split_once('-'))
                {
                    assert!(
                        !render_ref_ok(render_ref) || parse_key_time(time).is_err(),
                        "{key} did not parse"
                    );
                }
            }
        }
    }
    if parsed.is_some() {
        assert!(key.starts_with(prefix.as_str()));
    }
}
