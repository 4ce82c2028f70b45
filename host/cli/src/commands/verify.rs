//! `verify`: every blob and entry of a store (or of one release) read and checked, with
//! what to do about each problem; and the history of a release read entry by entry when
//! one entry is bad, so the others still show.

use super::{Context, Finish};
use crate::names;
use crate::output::{count, print_json};
use crate::terminal::escape_for_terminal as esc;
use anyhow::Result;
use render_store::{EntryTrust, Error, HistoryEntry, ObjectMeta, ParsedKey, Release, RenderStore};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// `verify` of the release `release` names (every release when `None`): prints each
/// problem with what to do; [`Finish::Differs`] when there is one.
pub async fn run(ctx: &Context<'_>, release: Option<&str>) -> Result<Finish> {
    let store = ctx.open().await?;
    let release = match release {
        Some(r) => Some(ctx.release(r)?),
        None => None,
    };
    let report = verify(&store, release.as_ref()).await?;
    if ctx.as_json() {
        let problems: Vec<_> = report
            .problems
            .iter()
            .map(|p| json!({"kind": p.kind, "key": p.key, "message": p.message, "fix": p.fix}))
            .collect();
        print_json(&json!({
            "releases": report.releases,
            "renders": report.renders,
            "entries": report.entries,
            "indexes": report.indexes,
            "problems": problems,
        }))?;
    } else {
        for p in &report.problems {
            println!("{} {}: {}", p.kind, esc(&p.key), esc(&p.message));
            println!("    what to do: {}", p.fix);
        }
        println!(
            "read {} and {} of {}: {}",
            count(report.renders, "render", "renders"),
            count(report.entries, "history entry", "history entries"),
            count(report.releases, "release", "releases"),
            if report.problems.is_empty() {
                "no problem".to_string()
            } else {
                count(report.problems.len(), "problem", "problems")
            }
        );
    }
    if !report.problems.is_empty() {
        return Ok(Finish::Differs);
    }
    Ok(Finish::Done)
}

/// One problem `verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// `corrupt` (a blob or entry that does not read, a plaintext blob where
    /// encryption is required, a sealed blob copied from another release),
    /// `encryption-key` (a blob sealed, by its header, under a key the keyring lacks or
    /// holds as another key: it cannot be authenticated), `unauthenticated` (an entry
    /// whose MAC does not verify under the keyring, or whose body disagrees with its
    /// key), `index` (a release index that cannot be used or disagrees with the
    /// renders), `dangling` (an entry whose render is not stored) or `foreign` (a key the
    /// render store did not make).
    pub kind: &'static str,
    /// The key.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub fix: String,
}

/// What `verify` read and found.
#[derive(Debug, Default)]
pub struct Report {
    /// Releases checked.
    pub releases: usize,
    /// Render blobs read.
    pub renders: usize,
    /// History entries read.
    pub entries: usize,
    /// gocloud metadata files (`<key>.attrs`) of keys checked: not foreign.
    pub metadata: usize,
    /// Release indexes found (CONTRACT.md §3): not foreign, and each checked against
    /// the renders it names.
    pub indexes: usize,
    /// Renders read again to check the indexes.
    pub renders_for_index: usize,
    /// Every problem, in key order.
    pub problems: Vec<Problem>,
}

/// Checks every key of `release`, or of the whole store when `None`. A blob that cannot
/// be authenticated is reported, whatever the reason, and the next one checked. A read
/// that fails for another reason than a bad blob or entry (the bucket, the sandbox)
/// stops it with that error: what could not be read is never reported as fine.
///
/// The whole store is walked release by release: its releases found with delimiter
/// listings (`render_store::fleet`), each release then listed and read alone, so what
/// is held at once is one release's listing, not the store's. Keys outside any release
/// (directly in the root or a namespace folder, or under a folder whose name is no
/// valid namespace or release name) are foreign.
pub async fn verify(store: &RenderStore, release: Option<&Release>) -> Result<Report> {
    let mut report = Report::default();
    match release {
        Some(r) => {
            let keys = names::release_keys(store, r).await?;
            report.releases = 1;
            check_release(store, r, keys, &mut report).await?;
        }
        None => {
            let found = render_store::fleet::all_releases(store, None).await?;
            if let Some(u) = found.unlisted.first() {
                // Fail closed: a namespace that cannot be listed is not a clean one.
                anyhow::bail!(
                    "listing {} failed, so what it holds cannot be verified: {}",
                    u.folder,
                    u.error
                );
            }
            for other in found.others {
                if other.ends_with('/') {
                    for object in store.bucket().list(&other).await? {
                        report.problems.push(foreign(object.key));
                    }
                } else {
                    report.problems.push(foreign(other));
                }
            }
            for r in &found.releases {
                let prefix = store.runtime().release_prefix(r).await?;
                let keys = store.bucket().list(&prefix).await?;
                if keys.is_empty() {
                    // A folder left empty (file://) holds nothing to check.
                    continue;
                }
                report.releases += 1;
                check_release(store, r, keys, &mut report).await?;
            }
        }
    }
    report.problems.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(report)
}

fn foreign(key: String) -> Problem {
    Problem {
        kind: "foreign",
        key,
        message: "not a key the render store makes (not a render blob, a history entry or a \
                  release index)"
            .into(),
        fix: "GC and delete-release of other releases leave it; remove it with the \
              storage's own tools if nothing else uses it"
            .into(),
    }
}

/// Checks the keys of one release, as one listing gave them.
async fn check_release(
    store: &RenderStore,
    release: &Release,
    keys: Vec<ObjectMeta>,
    report: &mut Report,
) -> Result<()> {
    let rt = store.runtime();
    let mut renders = BTreeSet::new();
    let mut entries = Vec::new();
    // Each entry's time, from its key: the exact `record` that puts a deleted entry back.
    let mut times = BTreeMap::new();
    let names: Vec<String> = keys.iter().map(|o| o.key.clone()).collect();
    let parsed = rt.parse_keys(release, &names).await?;
    // The keys the store made, for telling a gocloud metadata file from a foreign one.
    let index_key = rt.index_key(release).await?;
    let store_keys: BTreeSet<String> = names
        .into_iter()
        .zip(&parsed)
        .filter(|(k, p)| p.is_some() || *k == index_key)
        .map(|(k, _)| k)
        .collect();
    let mut indexed = false;
    for (object, parsed) in keys.into_iter().zip(parsed) {
        if object.key == index_key {
            report.indexes += 1;
            indexed = true;
            continue;
        }
        match parsed {
            Some(ParsedKey::Render(r)) => {
                report.renders += 1;
                match store.get_render(release, &r).await {
                    Ok(_) => {}
                    Err(Error::Corrupt(m)) => {
                        let fix = if m.contains("format v1") {
                            "bind it to its release: after checking the release with verify, \
                             run render-store rekey --all without --encryption-required"
                                .to_string()
                        } else if m.contains("another release") {
                            format!(
                                "a sealed blob that does not open here may have been copied \
                                 from another release: delete it with the storage's own \
                                 tools, then put the render again (render-store put {release} \
                                 FILE) if you have it; if no entry names it, GC removes it"
                            )
                        } else {
                            format!(
                                "put the render again (render-store put {release} FILE \
                                 rewrites a damaged blob); if no entry names it, GC removes it"
                            )
                        };
                        report.problems.push(Problem {
                            kind: "corrupt",
                            key: object.key.clone(),
                            message: m,
                            fix,
                        })
                    }
                    // A forged header of a key no keyring held reads exactly like a
                    // genuine blob of a key this host lacks: both are reported.
                    Err(Error::EncryptionKey(m)) => report.problems.push(Problem {
                        kind: "encryption-key",
                        key: object.key.clone(),
                        message: m,
                        fix: format!(
                            "give the keyring that holds the key named (--encryption-keys). \
                             If no keyring of this store ever held it, the blob was written \
                             outside the render store: put the render again with the store's \
                             keyring (render-store put {release} FILE rewrites it sealed), or, \
                             on a store without encryption, delete the blob with the \
                             storage's own tools first"
                        ),
                    }),
                    // Deleted since the listing: nothing to check.
                    Err(Error::NotFound(_)) => continue,
                    Err(e) => return Err(e.into()),
                }
                renders.insert(r);
            }
            Some(ParsedKey::History(h)) => {
                times.insert(object.key.clone(), h.synced_at);
                entries.push((object.key, h.render_ref));
            }
            None => {
                // gocloud's fileblob keeps a key's metadata in `<key>.attrs` beside it: part
                // of that key (CONTRACT.md §3), GC and delete-release delete it with the key.
                // One whose key is gone is reported as foreign.
                if let Some(of) = object.key.strip_suffix(render_store::METADATA_SUFFIX)
                    && store_keys.contains(of)
                {
                    report.metadata += 1;
                    continue;
                }
                report.problems.push(foreign(object.key))
            }
        }
    }
    let refs: BTreeMap<&str, &str> = entries
        .iter()
        .map(|(k, r)| (k.as_str(), r.as_str()))
        .collect();
    let keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
    for (key, entry) in names::read_entries(store, release, &keys).await? {
        report.entries += 1;
        if let Ok(HistoryEntry {
            trust: EntryTrust::Unauthenticated(why),
            ..
        }) = &entry
        {
            report.problems.push(unauthenticated(release, &key, why));
        }
        if let Err(m) = entry {
            let time = match times.get(&key) {
                Some(t) => rt.format_synced_at(*t).await?,
                None => "TIME".into(),
            };
            let render_ref = refs.get(key.as_str()).copied().unwrap_or("RENDER");
            // A record of a render the history holds adds nothing, so the entry must go
            // before the same render, time and summary can be recorded again.
            let fix = format!(
                "the entry's body does not read: delete it (render-store delete-entry \
                 {release} {key}), then, if its render is still stored, record it again \
                 with the entry's time (render-store record {release} {render_ref} \
                 --synced-at {time} --summary SUMMARY: the summary was in the body)"
            );
            report.problems.push(Problem {
                kind: "corrupt",
                key,
                message: m,
                fix,
            });
        }
    }
    if indexed {
        check_index(store, release, &index_key, report).await?;
    }
    for (key, render_ref) in &entries {
        if !renders.contains(render_ref) {
            report.problems.push(Problem {
                kind: "dangling",
                key: key.clone(),
                message: format!("its render {render_ref} is not stored"),
                fix: format!(
                    "put the render again if you have it (render-store put {release} FILE), \
                     or delete the entry (render-store delete-entry {release} {key})"
                ),
            });
        }
    }
    Ok(())
}

/// The problem of an entry that does not authenticate (or whose body disagrees with its
/// key): a writer of the bucket may have planted or edited it.
fn unauthenticated(release: &Release, key: &str, why: &str) -> Problem {
    let disagrees = why.starts_with("its body");
    Problem {
        kind: "unauthenticated",
        key: key.to_string(),
        message: why.to_string(),
        fix: if disagrees {
            format!(
                "nothing the render store writes looks like this: delete the entry \
                 (render-store delete-entry {release} {key}) and record the render again if \
                 it was applied"
            )
        } else {
            format!(
                "if nobody you trust wrote it, delete it (render-store delete-entry {release} \
                 {key}); if it is genuine (recorded before the store had a keyring, or by a \
                 controller without it), vouch for the history after checking it: \
                 render-store authenticate {release}"
            )
        },
    }
}

/// The problems of the release index: one that cannot be used (oversized, unreadable,
/// plaintext on a store with a keyring, another format), and entries that disagree
/// with their renders (on a plaintext store, the only check an index gets).
async fn check_index(
    store: &RenderStore,
    release: &Release,
    index_key: &str,
    report: &mut Report,
) -> Result<()> {
    let check = store.check_index(release).await?;
    report.renders_for_index += check.read as usize;
    if let Some(why) = check.unusable {
        report.problems.push(Problem {
            kind: "index",
            key: index_key.to_string(),
            message: why,
            fix: format!(
                "queries read every render instead, so answers stay right but cost more: \
                 render-store reindex {release} replaces it"
            ),
        });
    }
    for why in check.disagreeing {
        report.problems.push(Problem {
            kind: "index",
            key: index_key.to_string(),
            message: format!(
                "an entry disagrees with its render, so images and export would answer \
                 from what the bucket's writer put there: {why}"
            ),
            fix: format!("rebuild it from the renders: render-store reindex --force {release}"),
        });
    }
    Ok(())
}

/// The history of `release`, oldest first, each entry read alone: for `history` when
/// the whole read fails on a bad entry, so the good ones still show.
pub async fn history_entry_by_entry(
    store: &RenderStore,
    release: &Release,
) -> Result<Vec<(String, Result<HistoryEntry, String>)>> {
    let keys: Vec<String> = names::listed_history(store, release)
        .await?
        .into_iter()
        .map(|e| e.key)
        .collect();
    Ok(names::read_entries(store, release, &keys)
        .await?
        .into_iter()
        .collect())
}
