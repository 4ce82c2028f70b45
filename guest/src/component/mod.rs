//! The wit-bindgen glue: the imported bucket as a [`Bucket`], and the exports. The
//! bindings (`bindings.rs`, generated from the WIT) take and give the WIT's types as the
//! logic declares them (`crate::wit`), so no record is converted here; what remains
//! turns the trace interface's records into the trace module's model. No logic lives
//! here.

use crate::bucket::{Bucket, BucketError, ObjectMeta};
use crate::{Error, GcPlan, Grace, Keyring, SealingKey, policy};

mod bindings;

use crate::wit::{bucket as wit_bucket, logic as wit_logic, trace as wit_trace, types};
use bindings::convoy::render_store::bucket as imported;
use bindings::exports::convoy::render_store::{logic, store, trace};

struct Component;

bindings::export!(Component with_types_in bindings);

/// The imported bucket, for one export call.
struct Host;

/// `exists`'s `not-found` as the absence it means.
fn absent_as_none(
    answer: Result<u64, wit_bucket::BucketError>,
) -> Result<Option<u64>, BucketError> {
    match answer {
        Ok(size) => Ok(Some(size)),
        Err(wit_bucket::BucketError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One slice an object of a render as the host sent it (one buffer and where each object
/// ends in it); `invalid-input` for ends that do not fit.
fn slices(objects: &types::ObjectList) -> Result<Vec<&[u8]>, Error> {
    crate::render::joined_objects(&objects.bytes, &objects.ends)
}

/// Bytes the component made as text (canonical JSON, YAML's JSON objects, entry
/// bodies): UTF-8 by construction, so a failure here is a bug in the component, and
/// trapping is the honest answer.
fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("the component writes only UTF-8 here")
}

impl Bucket for Host {
    fn get(&mut self, key: &str) -> Result<Vec<u8>, BucketError> {
        imported::get(key)
    }
    fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BucketError> {
        imported::put(key, value)
    }
    fn exists(&mut self, key: &str) -> Result<Option<u64>, BucketError> {
        absent_as_none(imported::exists(key))
    }
    fn list(&mut self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        imported::list(prefix)
    }
    fn delete(&mut self, key: &str) -> Result<(), BucketError> {
        imported::delete(key)
    }
    fn delete_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        imported::delete_many(keys)
    }
}

/// The keyring a call was given, its keys checked.
fn keyring(keys: Vec<types::EncryptionKey>) -> Result<Keyring, Error> {
    Keyring::new(
        keys.iter()
            .map(|k| SealingKey::new(&k.id, &k.secret))
            .collect::<Result<_, _>>()?,
    )
}

/// The keyring of a store call and its rule, checked before any bucket call.
fn encryption(e: types::Encryption) -> Result<Keyring, Error> {
    keyring(e.keyring)?.require(e.required)
}

type WitResult<T> = Result<T, types::Error>;

impl logic::Guest for Component {
    fn canonical(objects: types::ObjectList) -> WitResult<wit_bucket::Data> {
        crate::canonical(&slices(&objects)?)
    }

    fn render_ref(objects: types::ObjectList) -> WitResult<String> {
        crate::render_ref(&slices(&objects)?)
    }

    fn parse_keyring(text: wit_bucket::Data) -> WitResult<types::Keyring> {
        Ok(Keyring::parse(&text)?
            .keys()
            .iter()
            .map(|k| types::EncryptionKey {
                id: k.id().to_string(),
                secret: k.secret().to_vec(),
            })
            .collect())
    }

    fn yaml_objects(yaml: wit_bucket::Data) -> WitResult<Vec<String>> {
        match crate::yaml_objects(&yaml) {
            Ok(objects) => Ok(objects.into_iter().map(text).collect()),
            Err(e) => Err(Error::from(e)),
        }
    }

    fn json_objects(json: wit_bucket::Data) -> WitResult<Vec<wit_bucket::Data>> {
        crate::json_objects(&json)
    }

    fn json_object_ends(json: Vec<u8>) -> WitResult<Vec<u32>> {
        crate::json_object_ends(&json)
    }

    fn check_objects(objects: types::ObjectList) -> WitResult<()> {
        crate::check_objects(&slices(&objects)?)
    }

    fn yaml_canonical(yaml: wit_bucket::Data) -> WitResult<wit_bucket::Data> {
        let canonical = crate::yaml_canonical(&yaml).map_err(Error::from)?;
        crate::check_render_size(&canonical)?;
        Ok(canonical)
    }

    fn yaml_render_ref(yaml: wit_bucket::Data) -> WitResult<String> {
        // Through the canonical bytes, so a render over the largest size is refused here
        // as everywhere: the stream is within the call's memory cap, and so are they.
        let canonical = crate::yaml_canonical(&yaml).map_err(Error::from)?;
        crate::check_render_size(&canonical)?;
        Ok(crate::render_ref_of_canonical(&canonical))
    }

    fn validate_render_ref(render_ref: String) -> WitResult<()> {
        crate::validate_render_ref(&render_ref)
    }

    fn sha256_hex(data: wit_bucket::Data) -> String {
        crate::sha256_hex(&data)
    }

    fn release_prefix(r: types::Release) -> WitResult<String> {
        Ok(crate::ReleasePrefix::new(&r)?.as_str().to_string())
    }

    fn render_key(r: types::Release, render_ref: String) -> WitResult<String> {
        crate::ReleasePrefix::new(&r)?.render_key(&render_ref)
    }

    fn index_key(r: types::Release) -> WitResult<String> {
        Ok(crate::ReleasePrefix::new(&r)?.index_key())
    }

    fn history_key(
        r: types::Release,
        synced_at: types::SyncTime,
        render_ref: String,
    ) -> WitResult<String> {
        crate::ReleasePrefix::new(&r)?.history_key(synced_at, &render_ref)
    }

    fn parse_key(r: types::Release, key: String) -> Option<types::ParsedKey> {
        let prefix = crate::ReleasePrefix::new(&r).ok()?;
        Some(match prefix.parse(&key)? {
            crate::ParsedKey::Render(render_ref) => types::ParsedKey::Render(render_ref),
            crate::ParsedKey::History(h) => types::ParsedKey::History(types::HistoryKey {
                synced_at: h.synced_at,
                render_ref: h.render_ref,
            }),
        })
    }

    fn parse_keys(r: types::Release, keys: Vec<String>) -> Vec<Option<types::ParsedKey>> {
        keys.into_iter()
            .map(|key| Self::parse_key(r.clone(), key))
            .collect()
    }

    fn format_key_time(t: types::SyncTime) -> WitResult<String> {
        crate::format_key_time(t)
    }

    fn parse_key_time(text: String) -> WitResult<types::SyncTime> {
        crate::parse_key_time(&text)
    }

    fn format_synced_at(t: types::SyncTime) -> WitResult<String> {
        crate::format_synced_at(t)
    }

    fn format_synced_at_all(times: Vec<types::SyncTime>) -> WitResult<Vec<String>> {
        times.into_iter().map(crate::format_synced_at).collect()
    }

    fn parse_synced_at(text: String) -> WitResult<types::SyncTime> {
        crate::parse_synced_at(&text)
    }

    fn plan_gc(
        r: types::Release,
        keep: i64,
        history_keys: Vec<String>,
        render_keys: Vec<String>,
        protected: Vec<String>,
        now: types::SyncTime,
    ) -> WitResult<types::GcPlan> {
        crate::plan_gc(&r, keep, history_keys, render_keys, &protected, now)
    }

    fn diff_renders(
        old: wit_bucket::Data,
        new: wit_bucket::Data,
        form: types::ObjectForm,
        secrets: types::SecretValues,
        context: u32,
    ) -> WitResult<types::RenderDiff> {
        let d = crate::diff_canonical(&old, &new, form, secrets, context)?;
        Ok(d)
    }

    fn index_objects(canonical: wit_bucket::Data) -> WitResult<Vec<types::IndexedObject>> {
        Ok(crate::index_objects(&canonical)?.into_iter().collect())
    }

    fn check_image_pattern(pattern: String) -> WitResult<()> {
        crate::ImagePattern::parse(&pattern)?;
        Ok(())
    }

    fn render_images(canonical: wit_bucket::Data) -> WitResult<Vec<types::ImageUse>> {
        Ok(crate::render_images(&canonical)?
            .into_iter()
            .map(|u| types::ImageUse {
                image: u.image,
                object: u.object,
                container: u.container,
            })
            .collect())
    }

    fn show_objects(
        canonical: wit_bucket::Data,
        form: types::ObjectForm,
        secrets: types::SecretValues,
    ) -> WitResult<Vec<types::ShownObject>> {
        Ok(crate::show_objects(&canonical, form, secrets)?
            .into_iter()
            .collect())
    }

    fn summarize_changes(
        old: wit_bucket::Data,
        new: wit_bucket::Data,
    ) -> WitResult<types::RenderChanges> {
        crate::render_changes(&old, &new)
    }

    fn summarize_history(
        r: types::Release,
        history_keys: Vec<String>,
    ) -> WitResult<types::HistorySummary> {
        let s = crate::summarize_history(&r, history_keys)?;
        Ok(types::HistorySummary {
            entries: s.entries,
            newest: s.newest.map(|h| types::HistoryKey {
                synced_at: h.synced_at,
                render_ref: h.render_ref,
            }),
        })
    }

    fn running_entry(
        entries: Vec<types::HistoryEntry>,
        running: String,
        encryption_required: bool,
    ) -> Option<u32> {
        crate::history::running_entry(&entries, &running, encryption_required)
    }

    fn defaults() -> wit_logic::PolicyDefaults {
        wit_logic::PolicyDefaults {
            keep_history: policy::DEFAULT_KEEP_HISTORY,
            gc_grace_seconds: policy::DEFAULT_GC_GRACE_SECONDS,
            gc_future_tolerance_seconds: policy::GC_FUTURE_TOLERANCE_SECONDS,
        }
    }

    fn effective_keep_history(keep_history: Option<i64>) -> i64 {
        policy::effective_keep_history(keep_history).keep()
    }

    fn history_count(has_store: bool, keep_history: Option<i64>) -> i64 {
        policy::history_count(has_store, keep_history)
    }

    fn protected_refs(applied: Option<String>, refs: wit_logic::ReleaseRefs) -> Vec<String> {
        policy::protected_refs(applied.as_deref(), &refs)
    }

    fn pin_decision(
        pin: Option<String>,
        current_ref: String,
        has_store: bool,
    ) -> Result<Option<String>, String> {
        Ok(
            match policy::pin_decision(pin.as_deref(), &current_ref, has_store)? {
                policy::PinDecision::ApplyCurrent => None,
                policy::PinDecision::ApplyPinned(r) => Some(r),
            },
        )
    }

    fn word_bucket_message(message: wit_logic::BucketMessage) -> String {
        use crate::bucket::messages;
        use wit_logic::BucketMessage as M;
        match message {
            M::NoBucket => messages::NO_BUCKET.to_string(),
            M::OutsidePrefix(m) => messages::outside_prefix(&m.key, &m.prefix),
            M::InvalidKey(key) => messages::invalid_key(&key),
            M::ReadOnly(m) => messages::read_only(&m.call, &m.key),
            M::TooLarge(m) => messages::too_large(&m.key, m.size, m.limit),
            M::Backend(m) => messages::backend(&m.call, &m.key, &m.description),
            M::Miscounted(m) => {
                messages::miscounted(&m.first, m.answered as usize, m.asked as usize)
            }
            M::CrossesLink(m) => messages::crosses_link(&m.key, &m.component),
            M::NotPlainFile(key) => messages::not_plain_file(&key),
            M::StagingMark(key) => messages::staging_mark(&key),
            M::FolderNotBlob(key) => messages::folder_not_blob(&key),
            M::Unwalkable(m) => messages::unwalkable(&m.prefix, &m.path, m.why),
            M::LeftOut(m) => {
                let entry = match m.at {
                    Some(component) => {
                        messages::entry_at(&String::from_utf8_lossy(&m.path), &component)
                    }
                    None => messages::entry(&m.path),
                };
                messages::left_out(&entry, m.why)
            }
        }
    }
}

impl store::Guest for Component {
    fn put_render(
        r: types::Release,
        objects: types::ObjectList,
        e: types::Encryption,
    ) -> WitResult<String> {
        let keyring = encryption(e)?;
        // The objects arrive in a buffer of the component's own: the blob is made in it.
        crate::store::put_render_joined(&mut Host, &r, objects.bytes, &objects.ends, &keyring)
    }

    fn get_render(
        r: types::Release,
        render_ref: String,
        e: types::Encryption,
    ) -> WitResult<wit_bucket::Data> {
        crate::get_render(&mut Host, &r, &render_ref, &encryption(e)?)
    }

    fn rekey_release(r: types::Release, e: types::Encryption) -> WitResult<(u32, u32)> {
        crate::store::rekey_release(&mut Host, &r, &encryption(e)?)
    }

    fn diff_renders(
        r: types::Release,
        old_ref: String,
        new_ref: String,
        form: types::ObjectForm,
        secrets: types::SecretValues,
        context: u32,
        e: types::Encryption,
    ) -> WitResult<types::RenderDiff> {
        let d = crate::diff_stored(
            &mut Host,
            &r,
            &old_ref,
            &new_ref,
            crate::DiffView {
                form,
                secrets,
                context,
            },
            &encryption(e)?,
        )?;
        Ok(d)
    }

    fn release_images(
        r: types::Release,
        pattern: Option<String>,
        since: Option<types::SyncTime>,
        until: Option<types::SyncTime>,
        e: types::Encryption,
    ) -> WitResult<Vec<types::ImageInterval>> {
        // Every input is checked before the first call.
        let pattern = pattern
            .as_deref()
            .map(crate::ImagePattern::parse)
            .transpose()?;
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let intervals = crate::release_images(
            &mut Host,
            &release,
            pattern.as_ref(),
            (since, until),
            &keyring,
        )?;
        Ok(intervals
            .into_iter()
            .map(|i| types::ImageInterval {
                image: i.image,
                from: i.from,
                until: i.until,
                render_refs: i.render_refs,
            })
            .collect())
    }

    fn index_release(
        r: types::Release,
        read_missing: bool,
        e: types::Encryption,
    ) -> WitResult<types::IndexReport> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let report =
            crate::render_index::index_release(&mut Host, &release, &keyring, read_missing, false)?;
        Ok(report)
    }

    fn rebuild_index(r: types::Release, e: types::Encryption) -> WitResult<types::IndexReport> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let report = crate::render_index::index_release(&mut Host, &release, &keyring, true, true)?;
        Ok(report)
    }

    fn stored_changes(
        r: types::Release,
        pairs: Vec<(Option<String>, String)>,
        e: types::Encryption,
    ) -> WitResult<Vec<types::RenderChanges>> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let changes = crate::store::stored_changes(&mut Host, &release, &pairs, &keyring)?;
        Ok(changes.into_iter().collect())
    }

    fn check_index(r: types::Release, e: types::Encryption) -> WitResult<types::IndexCheck> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let check = crate::render_index::check_index(&mut Host, &release, &keyring)?;
        Ok(types::IndexCheck {
            present: check.present,
            unusable: check.unusable,
            disagreeing: check.disagreeing,
            read: check.read,
        })
    }

    fn authenticate_history(
        r: types::Release,
        vouch: bool,
        e: types::Encryption,
    ) -> WitResult<types::AuthenticateReport> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let report = crate::authenticate_history(&mut Host, &release, &keyring, vouch)?;
        Ok(types::AuthenticateReport {
            rewritten: report.rewritten,
            kept: report.kept,
            left: report.left,
        })
    }

    fn render_objects(
        r: types::Release,
        refs: Vec<String>,
        e: types::Encryption,
    ) -> WitResult<Vec<types::ObjectsOfRender>> {
        // Every input is checked before the first call.
        let release = r;
        let prefix = crate::keys::ReleasePrefix::new(&release)?;
        for r in &refs {
            crate::keys::validate_render_ref(r)?;
        }
        let keyring = encryption(e)?;
        let wanted: std::collections::BTreeSet<&str> = refs.iter().map(String::as_str).collect();
        let mut found = crate::render_index::objects_by_render(
            &mut Host, &prefix, &release, &wanted, &keyring,
        )?;
        let mut out = Vec::with_capacity(wanted.len());
        let mut seen = std::collections::BTreeSet::new();
        for r in refs {
            if !seen.insert(r.clone()) {
                continue;
            }
            let objects = found.remove(&r).unwrap_or_default();
            out.push(types::ObjectsOfRender {
                render_ref: r,
                objects: objects.into_iter().collect(),
            });
        }
        Ok(out)
    }

    fn blame_object(
        r: types::Release,
        object: String,
        field: Option<String>,
        secrets: types::SecretValues,
        e: types::Encryption,
    ) -> WitResult<types::ObjectBlame> {
        // Every input is checked before the first call.
        let name = crate::blame::ObjectName::parse(&object)?;
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let b = crate::blame::blame_object(
            &mut Host,
            &release,
            &name,
            field.as_deref(),
            secrets,
            &keyring,
        )?;
        Ok(types::ObjectBlame {
            object: b.object,
            entries: b
                .entries
                .into_iter()
                .map(|k| types::HistoryKey {
                    synced_at: k.synced_at,
                    render_ref: k.render_ref,
                })
                .collect(),
            newest: b.newest,
            fields: b
                .fields
                .into_iter()
                .map(|f| types::FieldBlame {
                    path: f.path,
                    value: f.value,
                    entry: f.entry,
                })
                .collect(),
        })
    }

    fn show_render_page(
        r: types::Release,
        render_ref: String,
        form: types::ObjectForm,
        secrets: types::SecretValues,
        page_bytes: u64,
        page: u32,
        e: types::Encryption,
    ) -> WitResult<types::RenderPage> {
        let p = crate::show_render_page(
            &mut Host,
            &r,
            &render_ref,
            form,
            secrets,
            page_bytes,
            page,
            &encryption(e)?,
        )?;
        Ok(types::RenderPage {
            objects: p.objects,
            size: p.size,
            pages: p.pages,
            start: p.start,
            shown: p
                .shown
                .into_iter()
                .map(|o| types::PageObject {
                    index: o.index,
                    id: o.id,
                    text: o.text,
                    full_len: o.full_len,
                })
                .collect(),
        })
    }

    fn has_history_ref(r: types::Release, render_ref: String) -> WitResult<bool> {
        crate::has_history_ref(&mut Host, &r, &render_ref)
    }

    fn record_history(
        r: types::Release,
        entry: types::NewEntry,
        e: types::Encryption,
    ) -> WitResult<bool> {
        let entry = crate::NewEntry {
            render_ref: entry.render_ref,
            synced_at: entry.synced_at,
            summary: entry.summary,
        };
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        crate::record_history(&mut Host, &release, &entry, &keyring)
    }

    fn list_history(
        r: types::Release,
        e: types::Encryption,
    ) -> WitResult<Vec<types::HistoryEntry>> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let entries = crate::list_history(&mut Host, &release, &keyring)?;
        Ok(entries.into_iter().collect())
    }

    fn list_history_page(
        r: types::Release,
        limit: u32,
        before: Option<String>,
        e: types::Encryption,
    ) -> WitResult<types::HistoryPage> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let page =
            crate::list_history_page(&mut Host, &release, limit, before.as_deref(), &keyring)?;
        Ok(types::HistoryPage {
            entries: page.entries.into_iter().collect(),
            next_before: page.next_before,
        })
    }

    fn read_history_entries(
        r: types::Release,
        keys: Vec<String>,
        e: types::Encryption,
    ) -> WitResult<Vec<types::EntryRead>> {
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        let read = crate::read_history_entries(&mut Host, &release, &keys, &keyring)?;
        Ok(read
            .into_iter()
            .map(|e| match e {
                crate::EntryRead::Entry(e) => types::EntryRead::Entry(e),
                crate::EntryRead::Gone => types::EntryRead::Gone,
                crate::EntryRead::Corrupt(m) => types::EntryRead::Corrupt(m),
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
        e: types::Encryption,
    ) -> WitResult<types::GcPlan> {
        let grace = Grace {
            now,
            seconds: grace_seconds,
        };
        let release = r;
        crate::keys::ReleasePrefix::new(&release)?;
        let keyring = encryption(e)?;
        crate::gc(
            &mut Host, &release, keep, &protected, dry_run, grace, &keyring,
        )
    }

    fn delete_release(r: types::Release) -> WitResult<u32> {
        crate::delete_release(&mut Host, &r)
    }
}

fn recorded_call(c: wit_trace::RecordedCall) -> crate::trace::Call {
    use crate::trace::{Call, CallKind, Reply};
    let (kind, key, value, answer) = match c {
        wit_trace::RecordedCall::Get(c) => (CallKind::Get, c.key, None, c.answer.map(Reply::Bytes)),
        wit_trace::RecordedCall::Put(c) => (
            CallKind::Put,
            c.key,
            Some(c.value),
            c.answer.map(|()| Reply::Done),
        ),
        wit_trace::RecordedCall::Exists(c) => (
            CallKind::Exists,
            c.key,
            None,
            // Back to the absence the trace format records (`exists` answered none).
            match c.answer {
                Err(wit_bucket::BucketError::NotFound) => Ok(Reply::Size(None)),
                other => other.map(|size| Reply::Size(Some(size))),
            },
        ),
        wit_trace::RecordedCall::List(c) => {
            (CallKind::List, c.prefix, None, c.answer.map(Reply::Listing))
        }
        wit_trace::RecordedCall::Delete(c) => (
            CallKind::Delete,
            c.key,
            None,
            c.answer.map(|()| Reply::Done),
        ),
        wit_trace::RecordedCall::DeleteMany(c) => {
            return Call {
                kind: CallKind::DeleteMany,
                key: String::new(),
                keys: c.keys,
                value: None,
                answer: c.answer.map(Reply::Each),
            };
        }
    };
    Call {
        kind,
        key,
        keys: Vec::new(),
        value,
        answer,
    }
}

fn operation(op: wit_trace::Operation) -> crate::trace::Operation {
    use crate::trace::Operation;
    match op {
        wit_trace::Operation::PutRender(a) => Operation::PutRender {
            release: a.release,
            // A host records the objects it sent to put-render, which checked them
            // first; joined objects that do not fit here are a broken host.
            objects: slices(&a.objects)
                .unwrap_or_else(|e| panic!("the traced put-render's objects: {e}"))
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect(),
        },
        wit_trace::Operation::GetRender(a) => Operation::GetRender {
            release: a.release,
            render_ref: a.render_ref,
        },
        wit_trace::Operation::HasHistoryRef(a) => Operation::HasHistoryRef {
            release: a.release,
            render_ref: a.render_ref,
        },
        wit_trace::Operation::RecordHistory(a) => Operation::RecordHistory {
            release: a.release,
            entry: crate::NewEntry {
                render_ref: a.entry.render_ref,
                synced_at: a.entry.synced_at,
                summary: a.entry.summary,
            },
        },
        wit_trace::Operation::ListHistory(r) => Operation::ListHistory { release: r },
        wit_trace::Operation::Gc(a) => Operation::Gc {
            release: a.release,
            keep: a.keep,
            protected: a.protected,
            dry_run: a.dry_run,
            grace: Grace {
                now: a.now,
                seconds: a.grace_seconds,
            },
        },
        wit_trace::Operation::DeleteRelease(r) => Operation::DeleteRelease { release: r },
    }
}

fn outcome(o: wit_trace::Outcome) -> crate::trace::Outcome {
    use crate::trace::{Failure, Output};
    fn lift<T>(
        r: Result<T, types::Error>,
        output: impl FnOnce(T) -> Output,
    ) -> crate::trace::Outcome {
        r.map(output).map_err(Failure::Error)
    }
    match o {
        wit_trace::Outcome::PutRender(r) => lift(r, Output::RenderRef),
        wit_trace::Outcome::GetRender(r) => lift(r, Output::Render),
        wit_trace::Outcome::HasHistoryRef(r) => lift(r, Output::Recorded),
        wit_trace::Outcome::RecordHistory(r) => lift(r, Output::Added),
        wit_trace::Outcome::ListHistory(r) => lift(r, |entries| {
            Output::Entries(
                entries
                    .into_iter()
                    .map(|e| crate::HistoryEntry {
                        key: e.key,
                        render_ref: e.render_ref,
                        synced_at: e.synced_at,
                        summary: e.summary,
                        trust: e.trust,
                    })
                    .collect(),
            )
        }),
        wit_trace::Outcome::Gc(r) => lift(r, |p| {
            Output::Plan(GcPlan {
                delete_history: p.delete_history,
                keep_history: p.keep_history,
                delete_renders: p.delete_renders,
                keep_renders: p.keep_renders,
                ignored: p.ignored,
                recent_renders: p.recent_renders,
                future_history: p.future_history,
                dangling_history: p.dangling_history,
                unauthenticated_history: p.unauthenticated_history,
            })
        }),
        wit_trace::Outcome::DeleteRelease(r) => lift(r, Output::Deleted),
        wit_trace::Outcome::Trap(m) => Err(Failure::Trap(m)),
    }
}

impl trace::Guest for Component {
    fn write_trace(
        op: wit_trace::Operation,
        key_ids: Vec<String>,
        encryption_required: bool,
        calls: Vec<wit_trace::RecordedCall>,
        o: wit_trace::Outcome,
    ) -> String {
        let calls: Vec<_> = calls.into_iter().map(recorded_call).collect();
        crate::trace::write_trace(
            &operation(op),
            &key_ids,
            encryption_required,
            &calls,
            &outcome(o),
        )
    }

    fn outcome_json(o: wit_trace::Outcome) -> String {
        crate::trace::outcome_json(&outcome(o))
    }

    fn replay(
        text: String,
        keys: types::Keyring,
    ) -> Result<wit_trace::ReplayReport, wit_trace::TraceError> {
        let keys = keyring(keys).map_err(|e| wit_trace::TraceError {
            line: 1,
            message: format!("the keyring given for the replay: {e}"),
        })?;
        let report = crate::trace::replay_text(&text, &keys)?;
        Ok(wit_trace::ReplayReport {
            matches: report.matches(),
            text: report.to_text(),
            json: report.to_json(),
        })
    }
}
