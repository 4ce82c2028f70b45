//! The one JSON encoding of WIT values, written down in docs/json.md: what every JSON
//! a host gives from a WIT value is. The encoding of each type the WIT declares is
//! generated from the WIT (`wit_json.rs`, by render-store-bindgen); these are the parts
//! every type's encoding is made of.

use base64::Engine as _;
use serde_json::{Map, Value};
use std::fmt;

/// A WIT value that has a JSON form: every record, variant and enum the WIT declares
/// (`render_store_guest::wit`), in the encoding of docs/json.md.
pub trait WitJson: Sized {
    /// The value's JSON.
    fn to_json(&self) -> Value;
    /// The value a JSON encodes; `at` names where it is, for the error.
    fn from_json(value: &Value, at: &str) -> Result<Self, JsonError>;
}

/// Why a JSON value is not the WIT value it should encode: where, and what was expected
/// there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// The path of the value (`blame-object argument release.namespace`).
    pub at: String,
    /// What the encoding wants there.
    pub expected: String,
}

impl JsonError {
    /// An error at `at`, which wanted `expected`.
    pub fn new(at: &str, expected: impl Into<String>) -> JsonError {
        JsonError {
            at: at.to_string(),
            expected: expected.into(),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {} (docs/json.md gives the JSON of each WIT type)",
            self.at, self.expected
        )
    }
}

impl std::error::Error for JsonError {}

impl From<JsonError> for crate::Error {
    fn from(e: JsonError) -> Self {
        crate::Error::InvalidInput(e.to_string())
    }
}

/// `null`, for a missing value.
pub(crate) static NULL: Value = Value::Null;

/// `{"tag": tag}` or `{"tag": tag, "val": val}`: a variant's case or a result's side.
pub(crate) fn tagged(tag: &str, val: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("tag".into(), Value::String(tag.into()));
    if let Some(val) = val {
        m.insert("val".into(), val);
    }
    Value::Object(m)
}

/// The tag and the value of `{"tag", "val"}`; nothing else may be in it.
pub(crate) fn tag_of<'a>(
    value: &'a Value,
    at: &str,
) -> Result<(&'a str, Option<&'a Value>), JsonError> {
    let o = object(value, at, &["tag", "val"])?;
    let tag = o
        .get("tag")
        .and_then(Value::as_str)
        .ok_or_else(|| JsonError::new(at, "an object with a string \"tag\""))?;
    Ok((tag, o.get("val")))
}

/// An object whose keys are all among `keys`.
pub(crate) fn object<'a>(
    value: &'a Value,
    at: &str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, JsonError> {
    let o = value
        .as_object()
        .ok_or_else(|| JsonError::new(at, "an object"))?;
    if let Some(unknown) = o.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(JsonError::new(
            &format!("{at}.{unknown}"),
            format!("no such field; the fields are {}", keys.join(", ")),
        ));
    }
    Ok(o)
}

/// A field of an object; `null` when it is missing (an option's `none`, and for other
/// types an error naming the field).
pub(crate) fn field<'a>(o: &'a Map<String, Value>, key: &str) -> &'a Value {
    o.get(key).unwrap_or(&NULL)
}

/// An array.
pub(crate) fn array<'a>(value: &'a Value, at: &str) -> Result<&'a Vec<Value>, JsonError> {
    value
        .as_array()
        .ok_or_else(|| JsonError::new(at, "an array"))
}

/// A string.
pub(crate) fn string(value: &Value, at: &str) -> Result<String, JsonError> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| JsonError::new(at, "a string"))
}

/// An integer that fits the WIT's type.
pub(crate) fn integer<T: TryFrom<i64> + TryFrom<u64>>(
    value: &Value,
    at: &str,
) -> Result<T, JsonError> {
    let fitted = match (value.as_u64(), value.as_i64()) {
        (Some(u), _) => T::try_from(u).ok(),
        (None, Some(i)) => T::try_from(i).ok(),
        _ => None,
    };
    fitted.ok_or_else(|| {
        JsonError::new(
            at,
            format!("an integer within {}", std::any::type_name::<T>()),
        )
    })
}

/// Bytes as standard base64 with padding.
pub(crate) fn bytes_json(bytes: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Bytes from standard base64 with padding.
pub(crate) fn bytes_from_json(value: &Value, at: &str) -> Result<Vec<u8>, JsonError> {
    let text = value
        .as_str()
        .ok_or_else(|| JsonError::new(at, "a base64 string of bytes"))?;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| JsonError::new(at, format!("standard base64 with padding ({e})")))
}

/// The arguments of a call given as a JSON object, taken one by one where they are (a
/// render's bytes are not copied to be read); a key left over names no parameter and
/// is refused.
pub(crate) struct JsonArgs<'a> {
    function: &'a str,
    args: Option<&'a Map<String, Value>>,
    taken: Vec<&'a str>,
}

impl<'a> JsonArgs<'a> {
    /// The arguments of `function`: an object (or `null` for none).
    pub(crate) fn new(function: &'a str, args: &'a Value) -> Result<JsonArgs<'a>, JsonError> {
        let args = match args {
            Value::Null => None,
            Value::Object(o) => Some(o),
            _ => {
                return Err(JsonError::new(
                    &format!("{function}'s arguments"),
                    "an object of the parameters by their camelCase names",
                ));
            }
        };
        Ok(JsonArgs {
            function,
            args,
            taken: Vec::new(),
        })
    }

    /// The argument `key` (`null` when not given) and where it is, for errors.
    pub(crate) fn take(&mut self, key: &'a str) -> (&'a Value, String) {
        self.taken.push(key);
        (
            self.args.and_then(|a| a.get(key)).unwrap_or(&NULL),
            format!("{} argument {key}", self.function),
        )
    }

    /// Refuses what is left: no parameter has that name.
    pub(crate) fn finish(self) -> Result<(), JsonError> {
        match self
            .args
            .and_then(|a| a.keys().find(|k| !self.taken.contains(&k.as_str())))
        {
            None => Ok(()),
            Some(k) => Err(JsonError::new(
                &format!("{} argument {k}", self.function),
                "no such parameter",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WitJson;
    use crate::{EntryTrust, GcPlan, HistoryEntry, SyncTime};
    use render_store_guest::wit::types::{JoinedObjects, ObjectForm};
    use serde_json::json;

    #[test]
    fn values_round_trip_in_the_documented_shapes() {
        let entry = HistoryEntry {
            key: "ns/app/history/k".into(),
            render_ref: "sha256:0".into(),
            synced_at: SyncTime {
                seconds: -1,
                nanoseconds: 7,
            },
            summary: "s".into(),
            trust: EntryTrust::Authenticated("k1".into()),
        };
        let encoded = entry.to_json();
        assert_eq!(
            encoded,
            json!({"key": "ns/app/history/k", "renderRef": "sha256:0",
                   "syncedAt": {"seconds": -1, "nanoseconds": 7}, "summary": "s",
                   "trust": {"tag": "authenticated", "val": "k1"}})
        );
        assert_eq!(HistoryEntry::from_json(&encoded, "entry").unwrap(), entry);
        let objects = JoinedObjects {
            bytes: b"{}\n".to_vec(),
            ends: vec![3],
        };
        assert_eq!(objects.to_json(), json!({"bytes": "e30K", "ends": [3]}));
        assert_eq!(
            JoinedObjects::from_json(&objects.to_json(), "o").unwrap(),
            objects
        );
        assert_eq!(ObjectForm::Json.to_json(), json!("json"));
        let plan = GcPlan::default();
        assert_eq!(GcPlan::from_json(&plan.to_json(), "p").unwrap(), plan);
    }

    #[test]
    fn a_value_of_the_wrong_shape_is_refused_where_it_is() {
        let bad = json!({"key": "k", "renderRef": "r", "syncedAt": {"seconds": 1, "nanoseconds": -1},
                         "summary": "", "trust": {"tag": "unchecked"}});
        let e = HistoryEntry::from_json(&bad, "entry").unwrap_err();
        assert_eq!(e.at, "entry.syncedAt.nanoseconds");
        let e = EntryTrust::from_json(&json!({"tag": "trusted"}), "t").unwrap_err();
        assert!(e.expected.contains("unchecked"), "{e}");
        let e = ObjectForm::from_json(&json!("xml"), "form").unwrap_err();
        assert!(e.expected.contains("yaml"), "{e}");
        let e = JoinedObjects::from_json(&json!({"bytes": "", "ends": [], "more": 1}), "o")
            .unwrap_err();
        assert_eq!(e.at, "o.more");
    }

    #[tokio::test]
    async fn an_unknown_function_names_the_ones_there_are() {
        let rt = crate::Runtime::shared().unwrap();
        let e = rt.call_json("logic.nothing", &json!({})).await.unwrap_err();
        assert!(e.to_string().contains("logic.canonical"), "{e}");
        let answer = rt
            .call_json("logic.sha256-hex", &json!({"bytes": "YQ=="}))
            .await
            .unwrap();
        assert_eq!(
            answer,
            json!("ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb")
        );
    }
}
