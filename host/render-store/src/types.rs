//! The data types of the API: the component's WIT records, as bindgen generated them.

pub use crate::runtime::wit::{
    ChangedObject, GcPlan, HistoryEntry, HistoryKey, NewEntry, ObjectId, ParsedKey, Release,
    RenderDiff, SyncTime,
};

impl Release {
    /// A release from its namespace and name (checked by each call).
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Release {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Parses `NAMESPACE/NAME` (split at the first `/`; the names are checked by each
    /// call).
    pub fn parse(text: &str) -> Option<Self> {
        let (namespace, name) = text.split_once('/')?;
        Some(Release::new(namespace, name))
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl SyncTime {
    /// The current time of this machine's clock.
    pub fn now() -> Self {
        std::time::SystemTime::now().into()
    }
}

impl From<std::time::SystemTime> for SyncTime {
    fn from(t: std::time::SystemTime) -> Self {
        match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => SyncTime {
                seconds: d.as_secs() as i64,
                nanoseconds: d.subsec_nanos(),
            },
            Err(e) => {
                let d = e.duration();
                let (seconds, nanoseconds) = match d.subsec_nanos() {
                    0 => (-(d.as_secs() as i64), 0),
                    n => (-(d.as_secs() as i64) - 1, 1_000_000_000 - n),
                };
                SyncTime {
                    seconds,
                    nanoseconds,
                }
            }
        }
    }
}
