//! A store operation as data: what a trace records and a replay re-runs, mapped onto
//! the store function that does it.

use super::call::{Call, Recorder, Scoped};
use crate::bucket::{Bucket, BucketError, ObjectMeta};
use crate::encryption::Keyring;
use crate::error::{Error, Result};
use crate::gc::{GcPlan, Grace, Rules};
use crate::history::{HistoryEntry, NewEntry};
use crate::keys::Release;

/// One operation of the WIT `store` interface with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `put-render`: the objects' JSON bytes, in render order.
    PutRender {
        /// The release.
        release: Release,
        /// The objects.
        objects: Vec<Vec<u8>>,
    },
    /// `get-render`.
    GetRender {
        /// The release.
        release: Release,
        /// The render asked for.
        render_ref: String,
    },
    /// `has-history-ref`.
    HasHistoryRef {
        /// The release.
        release: Release,
        /// The render looked for.
        render_ref: String,
    },
    /// `record-history`.
    RecordHistory {
        /// The release.
        release: Release,
        /// The entry to record.
        entry: NewEntry,
    },
    /// `list-history`.
    ListHistory {
        /// The release.
        release: Release,
    },
    /// `gc`.
    Gc {
        /// The release.
        release: Release,
        /// Entries to keep; 0 or less: no GC.
        keep: i64,
        /// Renders kept whatever the history says.
        protected: Vec<String>,
        /// Only plan.
        dry_run: bool,
        /// The grace period and the time it is judged against.
        grace: Grace,
    },
    /// `delete-release`.
    DeleteRelease {
        /// The release.
        release: Release,
    },
}

/// What an operation returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// `put-render`: the renderRef.
    RenderRef(String),
    /// `get-render`: the canonical bytes.
    Render(Vec<u8>),
    /// `has-history-ref`.
    Recorded(bool),
    /// `record-history`: whether an entry was added.
    Added(bool),
    /// `list-history`: the entries, oldest first.
    Entries(Vec<HistoryEntry>),
    /// `gc`: the plan carried out (or, in a dry run, that would be).
    Plan(GcPlan),
    /// `delete-release`: how many keys were deleted.
    Deleted(u32),
}

/// Why a traced operation returned no output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The operation's own error (the WIT `error`).
    Error(Error),
    /// The host stopped the call (memory cap, CPU budget, a trap), in the host's words.
    Trap(String),
}

/// What a traced operation came to.
pub type Outcome = std::result::Result<Output, Failure>;

impl Operation {
    /// The WIT name of the operation (`put-render`, `gc`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Operation::PutRender { .. } => "put-render",
            Operation::GetRender { .. } => "get-render",
            Operation::HasHistoryRef { .. } => "has-history-ref",
            Operation::RecordHistory { .. } => "record-history",
            Operation::ListHistory { .. } => "list-history",
            Operation::Gc { .. } => "gc",
            Operation::DeleteRelease { .. } => "delete-release",
        }
    }

    /// The release the operation serves.
    pub fn release(&self) -> &Release {
        match self {
            Operation::PutRender { release, .. }
            | Operation::GetRender { release, .. }
            | Operation::HasHistoryRef { release, .. }
            | Operation::RecordHistory { release, .. }
            | Operation::ListHistory { release }
            | Operation::Gc { release, .. }
            | Operation::DeleteRelease { release } => release,
        }
    }

    /// Runs the operation on `bucket`, render blobs sealed and opened under `keyring`.
    pub fn run<B: Bucket>(&self, bucket: &mut B, keyring: &Keyring) -> Result<Output> {
        self.run_by(bucket, keyring, Rules::Current)
    }

    /// [`Operation::run`], a GC deciding by `rules`.
    fn run_by<B: Bucket>(&self, bucket: &mut B, keyring: &Keyring, rules: Rules) -> Result<Output> {
        Ok(match self {
            Operation::PutRender { release, objects } => {
                Output::RenderRef(crate::put_render(bucket, release, objects, keyring)?)
            }
            Operation::GetRender {
                release,
                render_ref,
            } => Output::Render(crate::get_render(bucket, release, render_ref, keyring)?),
            Operation::HasHistoryRef {
                release,
                render_ref,
            } => Output::Recorded(crate::has_history_ref(bucket, release, render_ref)?),
            Operation::RecordHistory { release, entry } => {
                Output::Added(crate::record_history(bucket, release, entry, keyring)?)
            }
            Operation::ListHistory { release } => {
                Output::Entries(crate::list_history(bucket, release, keyring)?)
            }
            Operation::Gc {
                release,
                keep,
                protected,
                dry_run,
                grace,
            } => Output::Plan(crate::gc::gc_by(
                bucket, release, *keep, protected, *dry_run, *grace, rules, keyring,
            )?),
            Operation::DeleteRelease { release } => {
                Output::Deleted(crate::delete_release(bucket, release)?)
            }
        })
    }
}

/// Runs `operation` on `bucket` as a host runs it for a trace: every call checked
/// against the release's prefix, then recorded with the answer the logic was given.
/// Returns the outcome and the calls.
pub fn record<B: Bucket>(
    bucket: B,
    operation: &Operation,
    keyring: &Keyring,
) -> (Outcome, Vec<Call>) {
    record_as(bucket, operation, super::VERSION, keyring)
}

/// [`record`] as the build that wrote trace `version` ran: before version 3 with one
/// `delete` a key, stopping at the first that fails; before version 4 with GC counting
/// every entry, in that version's call order; before version 5 with GC leaving
/// metadata files alone; before version 6 with no history entry authenticated.
pub(crate) fn record_as<B: Bucket>(
    bucket: B,
    operation: &Operation,
    version: u64,
    keyring: &Keyring,
) -> (Outcome, Vec<Call>) {
    let release = operation.release();
    let mut recorder = Recorder::new(Scoped {
        inner: bucket,
        prefix: format!("{}/{}/", release.namespace, release.name),
    });
    let legacy;
    let keyring = if version >= super::AUTHENTICATED_ENTRIES {
        keyring
    } else {
        legacy = keyring.clone().without_entry_authentication();
        &legacy
    };
    let rules = if version >= super::METADATA_GC {
        Rules::Current
    } else if version >= super::SKIPPING_GC {
        Rules::SkipsEntries
    } else {
        Rules::EveryEntryCounts
    };
    let outcome = if version >= 3 {
        operation.run_by(&mut recorder, keyring, rules)
    } else {
        operation.run_by(&mut OneByOne(&mut recorder), keyring, rules)
    }
    .map_err(Failure::Error);
    (outcome, recorder.into_calls())
}

/// A bucket that asks the logic for one `delete` a key ([`Bucket::batches`]), as the
/// logic deleted before it had batches.
struct OneByOne<B>(B);

impl<B: Bucket> Bucket for OneByOne<B> {
    fn get(&mut self, key: &str) -> std::result::Result<Vec<u8>, BucketError> {
        self.0.get(key)
    }
    fn put(&mut self, key: &str, value: &[u8]) -> std::result::Result<(), BucketError> {
        self.0.put(key, value)
    }
    fn exists(&mut self, key: &str) -> std::result::Result<Option<u64>, BucketError> {
        self.0.exists(key)
    }
    fn list(&mut self, prefix: &str) -> std::result::Result<Vec<ObjectMeta>, BucketError> {
        self.0.list(prefix)
    }
    fn delete(&mut self, key: &str) -> std::result::Result<(), BucketError> {
        self.0.delete(key)
    }
    fn batches(&self) -> bool {
        false
    }
}
