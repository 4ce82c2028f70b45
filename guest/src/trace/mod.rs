//! Traces (TRACES.md): one store operation, every bucket call it made with the answer
//! it was given, and its result, as JSON lines; and replay, which re-runs the operation
//! against the recorded answers alone and compares.
//!
//! Only a host sees the calls at the WIT boundary, so a host records them ([`Call`]) and
//! hands them here to be written ([`write_trace`]); reading, replaying and reporting
//! happen here, so every host writes and reads the same bytes and prints the same
//! report.

mod call;
mod format;
mod operation;
mod replay;
mod shape;

pub use call::{Answer, Call, CallKind, Recorder, Reply};
pub use format::{RecordedResult, Trace, TraceError, parse_trace, write_trace};
pub use operation::{Failure, Operation, Outcome, Output, record};
pub use replay::{Difference, Report, replay, replay_text};
pub use shape::{call_json, outcome_json};

/// The `format` of a trace's header line.
pub const FORMAT: &str = "render-store-trace";

/// The version of the format written. Version 2: `exists` answers a size or `null`,
/// `list` answers objects with their size and modification time, and `gc` records the
/// `now` and grace period it ran with. Version 3: `delete-many` calls, which GC and
/// delete-release make instead of one `delete` per key. Version 4: GC skips future-dated
/// and dangling history entries, lists `renders/` before it deletes entries, and its
/// plan has `futureHistory` and `danglingHistory`. Version 5: GC deletes gocloud's
/// metadata file of each entry and blob it deletes (`<key>.attrs`) with it. Version 6:
/// with a keyring, history entries carry a MAC and are judged by it (a listed entry's
/// `trust`); where encryption is required, `record-history` reads the bodies of the
/// entries naming its renderRef and GC the bodies it counts, and a GC plan has
/// `unauthenticatedHistory`.
pub const VERSION: u64 = 6;

/// The oldest version read. An older trace replays as the build that wrote it ran: a
/// version 2 trace with one `delete` per key where this build would batch them, and a
/// GC of version 2 or 3 counting every entry, in that version's call order, its plan
/// without the two lists of skipped entries.
pub const OLDEST_VERSION: u64 = 2;

/// The first version whose GC skips future-dated and dangling entries.
pub(crate) const SKIPPING_GC: u64 = 4;

/// The first version whose GC deletes a key's metadata file with the key.
pub(crate) const METADATA_GC: u64 = 5;

/// The first version whose history entries are authenticated under a keyring.
pub(crate) const AUTHENTICATED_ENTRIES: u64 = 6;
