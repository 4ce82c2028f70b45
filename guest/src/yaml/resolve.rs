//! go-yaml v2's resolution of scalars (tests/vectors/YAML-RULES.md, Y5 and Y12): YAML
//! 1.1 booleans and nulls, Go's integer syntax, floats only in YAML's decimal form, and
//! the tag checks. YAML 1.2 libraries resolve `yes`, `0777` or `1e400` differently, so
//! this is written from go-yaml's `resolve.go`, not taken from a YAML library.

use std::borrow::Cow;

/// A decoded scalar, as Go holds it in an `interface{}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    /// Only for integers from 2^63 to 2^64-1.
    Uint(u64),
    Float(f64),
    Str(String),
    /// A `!!binary` string whose bytes are not UTF-8: Go's json.Marshal writes each
    /// invalid byte as the escape `\ufffd`, unlike a U+FFFD in the text.
    Binary(Vec<u8>),
}

const LONG_PREFIX: &str = "tag:yaml.org,2002:";

/// The tag of a merge key spelled out (`!!merge <<`).
pub(crate) const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

/// What go-yaml's `d.scalar` stores for a scalar node decoded into an `interface{}`:
/// `tag` as the parser resolved its handle, `plain` when the scalar is plain and untagged.
pub(crate) fn decode_scalar(tag: Option<&str>, value: &str, plain: bool) -> Result<Scalar, String> {
    let Some(tag) = tag.filter(|t| !t.is_empty()) else {
        if !plain {
            return Ok(Scalar::Str(value.to_owned()));
        }
        return Ok(resolve_plain(value, None).0);
    };
    let short = tag.strip_prefix(LONG_PREFIX);
    match short {
        Some("binary") => {
            let bytes = base64_std(value).ok_or("!!binary value contains invalid base64 data")?;
            Ok(match String::from_utf8(bytes) {
                Ok(text) => Scalar::Str(text),
                Err(e) => Scalar::Binary(e.into_bytes()),
            })
        }
        Some("str") => Ok(Scalar::Str(value.to_owned())),
        Some(kind @ ("bool" | "int" | "float" | "null" | "timestamp")) => {
            let (resolved, rkind) = resolve_plain(value, Some(kind));
            match (kind, rkind, resolved) {
                (_, "timestamp", _) if kind == "timestamp" => Ok(Scalar::Str(value.to_owned())),
                (k, r, resolved) if k == r => Ok(resolved),
                ("float", "int", Scalar::Int(i)) => Ok(Scalar::Float(i as f64)),
                (k, r, _) => Err(format!("cannot decode !!{r} `{value}` as a !!{k}")),
            }
        }
        // Every other tag (`!foo`, `!!map` on a scalar, `!`) is kept without resolving.
        _ => Ok(Scalar::Str(value.to_owned())),
    }
}

/// go-yaml's `resolve` for an untagged plain scalar, or for the checked tags (`kind`
/// is the short tag without `!!`). Returns the value and its resolved kind.
fn resolve_plain(s: &str, kind: Option<&str>) -> (Scalar, &'static str) {
    let string = || Scalar::Str(s.to_owned());
    if kind == Some("str") {
        return (string(), "str");
    }
    // go-yaml tries the timestamp form only untagged or for `!!timestamp`.
    match resolve(s, matches!(kind, None | Some("timestamp"))) {
        Resolved::Null => (Scalar::Null, "null"),
        Resolved::Bool(b) => (Scalar::Bool(b), "bool"),
        Resolved::Int(i) => (Scalar::Int(i), "int"),
        Resolved::Uint(u) => (Scalar::Uint(u), "int"),
        Resolved::Float(f) => (Scalar::Float(f), "float"),
        Resolved::Str => (string(), "str"),
        Resolved::Timestamp => (string(), "timestamp"),
    }
}

/// What a plain scalar resolves to, its text left where it is: the fast path writes
/// JSON straight from the document's bytes, so most scalars are never copied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    /// Only for integers from 2^63 to 2^64-1.
    Uint(u64),
    Float(f64),
    /// The text itself.
    Str,
    /// A timestamp, which an `interface{}` holds as the text written.
    Timestamp,
}

/// go-yaml's `resolve` of a plain scalar; `timestamps` when the timestamp form counts
/// (untagged, or tagged `!!timestamp`).
pub(crate) fn resolve(s: &str, timestamps: bool) -> Resolved {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Resolved::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Resolved::Bool(false);
        }
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match s.as_bytes()[0] {
        b'.' => match go_parse_float(s) {
            Some(f) => Resolved::Float(f),
            None => Resolved::Str,
        },
        b'0'..=b'9' | b'+' | b'-' => {
            if timestamps && is_timestamp(s) {
                return Resolved::Timestamp;
            }
            let plain: Cow<'_, str> = if s.contains('_') {
                Cow::Owned(s.chars().filter(|&c| c != '_').collect())
            } else {
                Cow::Borrowed(s)
            };
            if let Some(i) = parse_int(&plain) {
                return Resolved::Int(i);
            }
            if let Some(u) = parse_uint(&plain) {
                return Resolved::Uint(u);
            }
            if yaml_style_float(&plain)
                && let Some(f) = finite(&plain)
            {
                return Resolved::Float(f);
            }
            Resolved::Str
        }
        _ => Resolved::Str,
    }
}

/// `f` parsed, unless it overflows (Go's `ErrRange`); underflow gives ±0 as in Go.
fn finite(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, go-yaml's `yamlStyleFloat`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for a scalar starting with `.`: decimal digits with
/// `_` allowed between digits, an optional exponent; `None` on a syntax error or
/// overflow.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut mantissa_digits = 0;
    let mut dot = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => mantissa_digits += 1,
            b'_' => {}
            b'.' if !dot => dot = true,
            _ => break,
        }
        i += 1;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
        if !b[start..i].iter().any(u8::is_ascii_digit) {
            return None;
        }
    }
    if i != b.len() || (s.contains('_') && !underscores_ok(s)) {
        return None;
    }
    finite(&s.replace('_', ""))
}

/// Go's `underscoreOK`: each `_` stands between two digits (no base prefix here).
fn underscores_ok(s: &str) -> bool {
    let mut saw = b'^';
    for &c in s.trim_start_matches(['+', '-']).as_bytes() {
        if c.is_ascii_digit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's `strconv.ParseUint(s, 0, 64)` (no sign; `0x`, `0o`, `0b` or a leading `0` for
/// octal).
fn parse_uint(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let (base, digits) = match b {
        [] => return None,
        [b'0', p, rest @ ..] if !rest.is_empty() && matches!(p, b'x' | b'X') => (16, rest),
        [b'0', p, rest @ ..] if !rest.is_empty() && matches!(p, b'o' | b'O') => (8, rest),
        [b'0', p, rest @ ..] if !rest.is_empty() && matches!(p, b'b' | b'B') => (2, rest),
        [b'0', rest @ ..] => (8, rest),
        _ => (10, b),
    };
    let mut n: u64 = 0;
    for &c in digits {
        let d = (c as char).to_digit(16)?;
        if d >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn parse_int(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_uint(body)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Whether go-yaml's `parseTimestamp` accepts `s`: `YYYY-M-D`, optionally followed by
/// `T`, `t` or a space and `h:m:s[.frac]`, with a `Z` or `±hh:mm` zone except after a
/// space.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let mut i = 5;
    let number = |i: &mut usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && *i - start < 2 && b[*i].is_ascii_digit() {
            *i += 1;
        }
        s.get(start..*i).filter(|d| !d.is_empty())?.parse().ok()
    };
    let Some(month) = number(&mut i).filter(|m| (1..=12).contains(m)) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if number(&mut i).filter(|d| (1..=days).contains(d)).is_none() {
        return false;
    }
    let zoned = match b.get(i) {
        None => return true,
        Some(b'T' | b't') => true,
        Some(b' ') => false,
        _ => return false,
    };
    i += 1;
    for (limit, last) in [(23, false), (59, false), (59, true)] {
        if number(&mut i).filter(|n| *n <= limit).is_none() {
            return false;
        }
        if !last {
            if b.get(i) != Some(&b':') {
                return false;
            }
            i += 1;
        }
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if !zoned {
        return i == b.len();
    }
    match &b[i..] {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// Go's `base64.StdEncoding.DecodeString`: padded, CR and LF ignored.
fn base64_std(text: &str) -> Option<Vec<u8>> {
    let symbols: Vec<u8> = text.bytes().filter(|&c| c != b'\r' && c != b'\n').collect();
    if !symbols.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(symbols.len() / 4 * 3);
    let last = symbols.len() / 4;
    for (n, quad) in symbols.chunks(4).enumerate() {
        let mut acc = 0u32;
        let mut padding = 0;
        for (k, &c) in quad.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                // Padding only at the end of the last quantum, and at most two.
                b'=' if n + 1 == last && k >= 2 => {
                    padding += 1;
                    0
                }
                _ => return None,
            };
            if padding > 0 && c != b'=' {
                return None;
            }
            acc = acc << 6 | u32::from(v);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - padding]);
    }
    Some(out)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)` as sigs.k8s.io/yaml turns a float key
/// into a JSON key, with its `.inf`, `-.inf` and `.nan` spellings.
pub(crate) fn float_key(f: f64) -> String {
    let g = f as f32;
    if g.is_nan() {
        return ".nan".into();
    }
    if g.is_infinite() {
        return if g > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let sign = if g.is_sign_negative() { "-" } else { "" };
    if g == 0.0 {
        return format!("{sign}0");
    }
    // `{:e}` is the shortest float32 round-trip form: `d[.ddd]eN`.
    let sci = format!("{:e}", g.abs());
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("decimal exponent");
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}{rest}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    let n = digits.len() as i32;
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point >= n {
        format!("{sign}{digits}{}", "0".repeat((point - n) as usize))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Scalar {
        decode_scalar(None, s, true).unwrap()
    }

    #[test]
    fn go_integer_syntax() {
        assert_eq!(plain("0777"), Scalar::Int(511));
        assert_eq!(plain("0o17"), Scalar::Int(15));
        assert_eq!(plain("0x_ff"), Scalar::Int(255));
        assert_eq!(plain("-0b101"), Scalar::Int(-5));
        assert_eq!(plain("08"), Scalar::Float(8.0));
        assert_eq!(plain("18446744073709551615"), Scalar::Uint(u64::MAX));
        assert_eq!(
            plain("+9223372036854775808"),
            Scalar::Float(9223372036854775808.0)
        );
        assert_eq!(plain("1e400"), Scalar::Str("1e400".into()));
        assert_eq!(plain("0x"), Scalar::Str("0x".into()));
        assert_eq!(plain("1.10"), Scalar::Float(1.1));
        assert_eq!(plain(".5_5"), Scalar::Float(0.55));
        assert_eq!(plain("2001-12-14"), Scalar::Str("2001-12-14".into()));
    }

    #[test]
    fn float_keys_are_float32() {
        assert_eq!(float_key(1.23456789), "1.2345679");
        assert_eq!(float_key(123456789.0), "1.2345679e+08");
        assert_eq!(float_key(1e3), "1000");
        assert_eq!(float_key(1e6), "1e+06");
        assert_eq!(float_key(0.0001), "0.0001");
        assert_eq!(float_key(0.00001), "1e-05");
        assert_eq!(float_key(1e39), ".inf");
        assert_eq!(float_key(-0.0), "-0");
    }

    #[test]
    fn binary() {
        assert_eq!(base64_std("aGk=\n").unwrap(), b"hi");
        assert_eq!(base64_std("/w==").unwrap(), [0xff]);
        assert!(base64_std("aGk").is_none());
    }
}
