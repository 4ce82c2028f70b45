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

/// The version of the format written and read. Version 2: `exists` answers a size or
/// `null`, `list` answers objects with their size and modification time, and `gc`
/// records the `now` and grace period it ran with.
pub const VERSION: u64 = 2;
