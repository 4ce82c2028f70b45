//! Traces (TRACES.md). Only the host sees the component's bucket calls at the WIT
//! boundary, so the host records them (its call log); the component writes the trace,
//! reads it back, replays it and words the report (the WIT `trace` interface), so every
//! host writes the same bytes and prints the same report.

use crate::error::{Error, Result};
use crate::keyring::Keyring;
use crate::operation::{Operation, Output, operation_to_wit, output_to_wit};
use crate::runtime::{Runtime, error_to_wit, wit_trace};
use crate::store::RenderStore;
use std::sync::Arc;

use crate::runtime::{CallLog, RecordedCall};

/// Runs `operation` on `store` and records it: the operation's own result and the trace
/// text (TRACES.md, Format), which holds that result too. The trace is `Err` only when
/// the component could not write it.
pub async fn record(
    store: &RenderStore,
    operation: &Operation,
) -> (Result<Output>, Result<String>) {
    let log = Arc::new(CallLog::default());
    let output = store.with_call_log(log.clone()).run(operation).await;
    let trace = store
        .runtime()
        .write_trace(
            operation,
            &store.keyring().ids(),
            store.encryption_required(),
            log.take(),
            &output,
        )
        .await;
    (output, trace)
}

/// What a replay found, as the component reported it: the WIT's `replay-report`
/// (`matches`; `text`, what `render-store replay` prints; `json`, what it prints with
/// `--json`).
pub use render_store_guest::wit::trace::ReplayReport;

/// Why a trace was not replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace does not follow TRACES.md.
    #[error("trace line {line}: {message}")]
    Trace {
        /// The first bad line, from 1.
        line: u32,
        /// What is wrong with it.
        message: String,
    },
    /// The replay itself was stopped by the sandbox (memory cap, CPU budget), so the
    /// component could not report: the trace is too large for the limits, or its
    /// operation is.
    #[error("replay stopped: {0}")]
    Stopped(Error),
}

/// The WIT outcome of an operation's result: errors of the component's `error`
/// variant as they were returned, anything else (the host stopped the call) a `trap`.
fn wit_outcome(operation: &Operation, output: &Result<Output>) -> wit_trace::Outcome {
    use wit_trace::Outcome as O;
    let error = match output {
        Ok(output) => return output_to_wit(output),
        Err(e) => match error_to_wit(e) {
            Some(error) => error,
            None => return O::Trap(e.to_string()),
        },
    };
    match operation {
        Operation::PutRender { .. } => O::PutRender(Err(error)),
        Operation::GetRender { .. } => O::GetRender(Err(error)),
        Operation::HasHistoryRef { .. } => O::HasHistoryRef(Err(error)),
        Operation::RecordHistory { .. } => O::RecordHistory(Err(error)),
        Operation::ListHistory { .. } => O::ListHistory(Err(error)),
        Operation::Gc { .. } => O::Gc(Err(error)),
        Operation::DeleteRelease { .. } => O::DeleteRelease(Err(error)),
    }
}

impl Runtime {
    /// The trace of `operation`, which made `calls` and came to `output` (TRACES.md),
    /// written by the component; `key_ids` and `encryption_required` are the store's
    /// keyring ids and rule (the header's `keyIds` and `encryptionRequired`).
    pub(crate) async fn write_trace(
        &self,
        operation: &Operation,
        key_ids: &[String],
        encryption_required: bool,
        calls: Vec<RecordedCall>,
        output: &Result<Output>,
    ) -> Result<String> {
        self.trace()
            .write_trace(
                &operation_to_wit(operation),
                key_ids,
                encryption_required,
                &calls,
                &wit_outcome(operation, output),
            )
            .await
    }

    /// An operation's output as JSON, written by the component: `{"ok": …}` with the
    /// value a trace's result line holds, which is what `--json` prints.
    pub async fn output_json(&self, output: &Output) -> Result<String> {
        self.trace().outcome_json(&output_to_wit(output)).await
    }

    /// Replays a trace in the component (TRACES.md, Replay): it answers the operation's
    /// bucket calls from the trace alone and compares. `keyring` must be the one the
    /// trace was recorded with (empty for a plaintext store's trace).
    pub async fn replay(
        &self,
        trace: &str,
        keyring: &Keyring,
    ) -> Result<ReplayReport, ReplayError> {
        let (mut call, instance) = self.instantiate(None).await.map_err(ReplayError::Stopped)?;
        let result = instance
            .trace()
            .replay(&mut call.store, trace, keyring.wit())
            .await;
        let report = self
            .finish(call, result.map(Ok))
            .map_err(ReplayError::Stopped)?;
        match report {
            Ok(r) => Ok(r),
            Err(e) => Err(ReplayError::Trace {
                line: e.line,
                message: e.message,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use crate::types::Release;

    /// A trace records a put's bytes alone (TRACES.md: base64), so bytes that are not
    /// UTF-8 are recorded exactly.
    #[tokio::test]
    async fn a_put_is_traced_as_its_bytes() {
        let rt = Runtime::new(Limits::default()).unwrap();
        let op = Operation::PutRender {
            release: Release {
                namespace: "ns".into(),
                name: "app".into(),
            },
            objects: vec![b"{}".to_vec()],
        };
        let output = Ok(Output::RenderRef("sha256:0".into()));
        let trace = |value| {
            let put = RecordedCall::Put(wit_trace::PutCall {
                key: "ns/app/renders/x".into(),
                value,
                answer: Ok(()),
            });
            rt.write_trace(&op, &[], false, vec![put], &output)
        };
        let text = trace("é".as_bytes().to_vec()).await.unwrap();
        assert!(text.contains(r#""value":"w6k=""#), "{text}");
        let odd = trace(vec![0xff, 0]).await.unwrap();
        assert!(odd.contains(r#""value":"/wA=""#), "{odd}");
    }
}
