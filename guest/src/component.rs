//! The wit-bindgen glue: WIT types to and from the library's, the imported bucket as a
//! [`Bucket`], and the exports. No logic lives here.

use crate::bucket::{Bucket, BucketError, ObjectMeta};
use crate::{Error, GcPlan, Grace, Release, SyncTime};

wit_bindgen::generate!({
    world: "render-store",
    path: "../wit",
});

use convoy::render_store::bucket as imported;
use exports::convoy::render_store::{logic, store, types};

struct Component;

export!(Component);

/// dlmalloc, like std's on this target, but in a version that first hands out the free
/// part of the initial memory (`__heap_base` to `__heap_end`) before growing it: a small
/// call never runs `memory.grow`, so the host never changes the memory's protection for
/// it, before or after (BENCHMARKS.md, call cost).
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The imported bucket.
struct Host;

impl From<imported::BucketError> for BucketError {
    fn from(e: imported::BucketError) -> Self {
        match e {
            imported::BucketError::NotFound => BucketError::NotFound,
            imported::BucketError::Denied(m) => BucketError::Denied(m),
            imported::BucketError::Failed(m) => BucketError::Failed(m),
        }
    }
}

impl Bucket for Host {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        imported::get(key).map_err(Into::into)
    }
    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        imported::put(key, value).map_err(Into::into)
    }
    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        imported::exists(key).map_err(Into::into)
    }
    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let listed = imported::list(prefix)?;
        Ok(listed
            .into_iter()
            .map(|o| ObjectMeta {
                key: o.key,
                size: o.size,
                modified: SyncTime {
                    seconds: o.modified.seconds,
                    nanoseconds: o.modified.nanoseconds,
                },
            })
            .collect())
    }
    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        imported::delete(key).map_err(Into::into)
    }
}

impl From<Error> for types::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidInput(m) => types::Error::InvalidInput(m),
            Error::InvalidObject { index, message } => {
                types::Error::InvalidObject(types::ObjectError {
                    index: index as u32,
                    message,
                })
            }
            Error::NotFound(m) => types::Error::NotFound(m),
            Error::Corrupt(m) => types::Error::Corrupt(m),
            Error::Bucket(m) => types::Error::Bucket(m),
            Error::InvalidYaml(e) => types::Error::InvalidYaml(types::YamlError {
                stage: match e.stage {
                    crate::Stage::Split => types::YamlStage::Split,
                    crate::Stage::Yaml => types::YamlStage::Yaml,
                    crate::Stage::Object => types::YamlStage::Object,
                },
                document: saturate(e.document),
                line: saturate(e.line),
                column: saturate(e.column),
                message: e.message,
            }),
        }
    }
}

fn release(r: types::Release) -> Release {
    Release {
        namespace: r.namespace,
        name: r.name,
    }
}

fn time(t: types::SyncTime) -> SyncTime {
    SyncTime {
        seconds: t.seconds,
        nanoseconds: t.nanoseconds,
    }
}

fn wit_time(t: SyncTime) -> types::SyncTime {
    types::SyncTime {
        seconds: t.seconds,
        nanoseconds: t.nanoseconds,
    }
}

fn wit_plan(p: GcPlan) -> types::GcPlan {
    types::GcPlan {
        delete_history: p.delete_history,
        keep_history: p.keep_history,
        delete_renders: p.delete_renders,
        keep_renders: p.keep_renders,
        ignored: p.ignored,
        recent_renders: p.recent_renders,
    }
}

fn wit_id(id: crate::ObjectId) -> types::ObjectId {
    types::ObjectId {
        api_version: id.api_version,
        kind: id.kind,
        namespace: id.namespace,
        name: id.name,
    }
}

type WitResult<T> = Result<T, types::Error>;

impl logic::Guest for Component {
    fn canonical(objects: Vec<Vec<u8>>) -> WitResult<Vec<u8>> {
        Ok(crate::canonical(&objects)?)
    }

    fn render_ref(objects: Vec<Vec<u8>>) -> WitResult<String> {
        Ok(crate::render_ref(&objects)?)
    }

    fn yaml_objects(yaml: Vec<u8>) -> WitResult<Vec<Vec<u8>>> {
        crate::yaml_objects(&yaml).map_err(|e| Error::from(e).into())
    }

    fn yaml_canonical(yaml: Vec<u8>) -> WitResult<Vec<u8>> {
        crate::yaml_canonical(&yaml).map_err(|e| Error::from(e).into())
    }

    fn yaml_render_ref(yaml: Vec<u8>) -> WitResult<String> {
        crate::yaml_render_ref(&yaml).map_err(|e| Error::from(e).into())
    }

    fn validate_render_ref(render_ref: String) -> WitResult<()> {
        Ok(crate::validate_render_ref(&render_ref)?)
    }

    fn sha256_hex(bytes: Vec<u8>) -> String {
        crate::sha256_hex(&bytes)
    }

    fn release_prefix(r: types::Release) -> WitResult<String> {
        Ok(crate::ReleasePrefix::new(&release(r))?.as_str().to_string())
    }

    fn render_key(r: types::Release, render_ref: String) -> WitResult<String> {
        Ok(crate::ReleasePrefix::new(&release(r))?.render_key(&render_ref)?)
    }

    fn history_key(
        r: types::Release,
        synced_at: types::SyncTime,
        render_ref: String,
    ) -> WitResult<String> {
        Ok(crate::ReleasePrefix::new(&release(r))?.history_key(time(synced_at), &render_ref)?)
    }

    fn parse_key(r: types::Release, key: String) -> Option<types::ParsedKey> {
        let prefix = crate::ReleasePrefix::new(&release(r)).ok()?;
        Some(match prefix.parse(&key)? {
            crate::ParsedKey::Render { render_ref } => types::ParsedKey::Render(render_ref),
            crate::ParsedKey::History {
                synced_at,
                render_ref,
            } => types::ParsedKey::History(types::HistoryKey {
                synced_at: wit_time(synced_at),
                render_ref,
            }),
        })
    }

    fn format_key_time(t: types::SyncTime) -> WitResult<String> {
        Ok(crate::format_key_time(time(t))?)
    }

    fn parse_key_time(text: String) -> WitResult<types::SyncTime> {
        Ok(wit_time(crate::parse_key_time(&text)?))
    }

    fn format_synced_at(t: types::SyncTime) -> WitResult<String> {
        Ok(crate::format_synced_at(time(t))?)
    }

    fn format_synced_at_all(times: Vec<types::SyncTime>) -> WitResult<Vec<String>> {
        times
            .into_iter()
            .map(|t| Ok(crate::format_synced_at(time(t))?))
            .collect()
    }

    fn parse_synced_at(text: String) -> WitResult<types::SyncTime> {
        Ok(wit_time(crate::parse_synced_at(&text)?))
    }

    fn plan_gc(
        r: types::Release,
        keep: i64,
        history_keys: Vec<String>,
        render_keys: Vec<String>,
        protected: Vec<String>,
    ) -> WitResult<types::GcPlan> {
        Ok(wit_plan(crate::plan_gc(
            &release(r),
            keep,
            history_keys,
            render_keys,
            &protected,
        )?))
    }

    fn diff_renders(old: Vec<u8>, new: Vec<u8>) -> WitResult<types::RenderDiff> {
        Component::diff(&old, &new)
    }
}

impl Component {
    fn diff(old: &[u8], new: &[u8]) -> WitResult<types::RenderDiff> {
        let d = crate::diff_canonical(old, new)?;
        Ok(types::RenderDiff {
            added: d.added.into_iter().map(wit_id).collect(),
            removed: d.removed.into_iter().map(wit_id).collect(),
            changed: d
                .changed
                .into_iter()
                .map(|c| types::ChangedObject {
                    id: wit_id(c.id),
                    lines: c.lines,
                })
                .collect(),
            unchanged: d.unchanged,
        })
    }
}

impl store::Guest for Component {
    fn put_render(r: types::Release, objects: Vec<Vec<u8>>) -> WitResult<String> {
        Ok(crate::put_render(&mut Host, &release(r), &objects)?)
    }

    fn get_render(r: types::Release, render_ref: String) -> WitResult<Vec<u8>> {
        Ok(crate::get_render(&mut Host, &release(r), &render_ref)?)
    }

    fn has_history_ref(r: types::Release, render_ref: String) -> WitResult<bool> {
        Ok(crate::has_history_ref(&mut Host, &release(r), &render_ref)?)
    }

    fn record_history(r: types::Release, entry: types::NewEntry) -> WitResult<bool> {
        let entry = crate::NewEntry {
            render_ref: entry.render_ref,
            synced_at: time(entry.synced_at),
            summary: entry.summary,
        };
        Ok(crate::record_history(&mut Host, &release(r), &entry)?)
    }

    fn list_history(r: types::Release) -> WitResult<Vec<types::HistoryEntry>> {
        let entries = crate::list_history(&mut Host, &release(r))?;
        Ok(entries
            .into_iter()
            .map(|e| types::HistoryEntry {
                key: e.key,
                render_ref: e.render_ref,
                synced_at: wit_time(e.synced_at),
                summary: e.summary,
            })
            .collect())
    }

    fn gc(
        r: types::Release,
        keep: i64,
        protected: Vec<String>,
        dry_run: bool,
        now: types::SyncTime,
        grace_seconds: u64,
    ) -> WitResult<types::GcPlan> {
        let grace = Grace {
            now: time(now),
            seconds: grace_seconds,
        };
        Ok(wit_plan(crate::gc(
            &mut Host,
            &release(r),
            keep,
            &protected,
            dry_run,
            grace,
        )?))
    }

    fn delete_release(r: types::Release) -> WitResult<u32> {
        Ok(crate::delete_release(&mut Host, &release(r))?)
    }
}

/// A count or position as a WIT `u32` (a stream past 4 GiB lines cannot be passed in).
fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
