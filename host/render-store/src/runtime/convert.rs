//! The one place the API's own types meet bindgen's: every record crossing the WIT
//! boundary is converted here, field for field, so the public types never depend on
//! what bindgen generates.

use super::wit;
use crate::types::{
    ChangedObject, EntryRead, EntryTrust, FieldBlame, GcPlan, HistoryEntry, HistoryKey,
    HistoryPage, HistorySummary, ImageChange, ImageInterval, ImageUse, IndexReport, IndexedObject,
    NewEntry, ObjectBlame, ObjectForm, ObjectId, PageObject, ParsedKey, Release, RenderChanges,
    RenderDiff, RenderPage, SecretKeyChange, SecretValues, ShownObject, SyncTime, YamlStage,
};

impl From<SecretValues> for wit::SecretValues {
    fn from(s: SecretValues) -> Self {
        match s {
            SecretValues::Masked => wit::SecretValues::Masked,
            SecretValues::Shown => wit::SecretValues::Shown,
        }
    }
}

impl From<ObjectForm> for wit::ObjectForm {
    fn from(f: ObjectForm) -> Self {
        match f {
            ObjectForm::Yaml => wit::ObjectForm::Yaml,
            ObjectForm::Json => wit::ObjectForm::Json,
        }
    }
}

impl From<&Release> for wit::Release {
    fn from(r: &Release) -> Self {
        wit::Release {
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        }
    }
}

impl From<SyncTime> for wit::SyncTime {
    fn from(t: SyncTime) -> Self {
        wit::SyncTime {
            seconds: t.seconds,
            nanoseconds: t.nanoseconds,
        }
    }
}

impl From<wit::SyncTime> for SyncTime {
    fn from(t: wit::SyncTime) -> Self {
        SyncTime {
            seconds: t.seconds,
            nanoseconds: t.nanoseconds,
        }
    }
}

impl From<&NewEntry> for wit::NewEntry {
    fn from(e: &NewEntry) -> Self {
        wit::NewEntry {
            render_ref: e.render_ref.clone(),
            synced_at: e.synced_at.into(),
            summary: e.summary.clone(),
        }
    }
}

impl From<wit::HistoryPage> for HistoryPage {
    fn from(p: wit::HistoryPage) -> Self {
        HistoryPage {
            entries: p.entries.into_iter().map(Into::into).collect(),
            next_before: p.next_before,
        }
    }
}

impl From<wit::HistoryEntry> for HistoryEntry {
    fn from(e: wit::HistoryEntry) -> Self {
        HistoryEntry {
            key: e.key,
            render_ref: e.render_ref,
            synced_at: e.synced_at.into(),
            summary: e.summary,
            trust: e.trust.into(),
        }
    }
}

impl From<wit::EntryTrust> for EntryTrust {
    fn from(t: wit::EntryTrust) -> Self {
        match t {
            wit::EntryTrust::Unchecked => EntryTrust::Unchecked,
            wit::EntryTrust::Authenticated(id) => EntryTrust::Authenticated(id),
            wit::EntryTrust::Unauthenticated(why) => EntryTrust::Unauthenticated(why),
        }
    }
}

impl From<&EntryTrust> for wit::EntryTrust {
    fn from(t: &EntryTrust) -> Self {
        match t {
            EntryTrust::Unchecked => wit::EntryTrust::Unchecked,
            EntryTrust::Authenticated(id) => wit::EntryTrust::Authenticated(id.clone()),
            EntryTrust::Unauthenticated(why) => wit::EntryTrust::Unauthenticated(why.clone()),
        }
    }
}

impl From<wit::EntryRead> for EntryRead {
    fn from(e: wit::EntryRead) -> Self {
        match e {
            wit::EntryRead::Entry(entry) => EntryRead::Entry(entry.into()),
            wit::EntryRead::Gone => EntryRead::Gone,
            wit::EntryRead::Corrupt(m) => EntryRead::Corrupt(m),
        }
    }
}

impl From<wit::ParsedKey> for ParsedKey {
    fn from(k: wit::ParsedKey) -> Self {
        match k {
            wit::ParsedKey::Render(render_ref) => ParsedKey::Render(render_ref),
            wit::ParsedKey::History(h) => ParsedKey::History(HistoryKey {
                synced_at: h.synced_at.into(),
                render_ref: h.render_ref,
            }),
        }
    }
}

impl From<wit::GcPlan> for GcPlan {
    fn from(p: wit::GcPlan) -> Self {
        GcPlan {
            delete_history: p.delete_history,
            keep_history: p.keep_history,
            delete_renders: p.delete_renders,
            keep_renders: p.keep_renders,
            ignored: p.ignored,
            recent_renders: p.recent_renders,
            future_history: p.future_history,
            dangling_history: p.dangling_history,
            unauthenticated_history: p.unauthenticated_history,
        }
    }
}

impl From<wit::ObjectId> for ObjectId {
    fn from(i: wit::ObjectId) -> Self {
        ObjectId {
            api_version: i.api_version,
            kind: i.kind,
            namespace: i.namespace,
            name: i.name,
        }
    }
}

impl From<wit::ShownObject> for ShownObject {
    fn from(o: wit::ShownObject) -> Self {
        ShownObject {
            id: o.id.into(),
            text: o.text,
        }
    }
}

impl From<wit::ImageUse> for ImageUse {
    fn from(u: wit::ImageUse) -> Self {
        ImageUse {
            image: u.image,
            object: u.object.into(),
            container: u.container,
        }
    }
}

impl From<wit::IndexedObject> for IndexedObject {
    fn from(o: wit::IndexedObject) -> Self {
        IndexedObject {
            id: o.id.into(),
            hash: o.hash,
            images: o.images,
        }
    }
}

impl From<wit::IndexReport> for IndexReport {
    fn from(r: wit::IndexReport) -> Self {
        IndexReport {
            renders: r.renders,
            indexed: r.indexed,
            read: r.read,
            pruned: r.pruned,
            unreadable: r.unreadable,
            replaced: r.replaced,
            written: r.written,
        }
    }
}

impl From<wit::ImageInterval> for ImageInterval {
    fn from(i: wit::ImageInterval) -> Self {
        ImageInterval {
            image: i.image,
            from: i.from.into(),
            until: i.until.map(SyncTime::from),
            render_refs: i.render_refs,
        }
    }
}

impl From<wit::ObjectBlame> for ObjectBlame {
    fn from(b: wit::ObjectBlame) -> Self {
        ObjectBlame {
            object: b.object.into(),
            entries: b
                .entries
                .into_iter()
                .map(|k| (k.synced_at.into(), k.render_ref))
                .collect(),
            newest: b.newest,
            fields: b
                .fields
                .into_iter()
                .map(|f| FieldBlame {
                    path: f.path,
                    value: f.value,
                    entry: f.entry,
                })
                .collect(),
        }
    }
}

impl From<wit::HistorySummary> for HistorySummary {
    fn from(s: wit::HistorySummary) -> Self {
        HistorySummary {
            entries: s.entries,
            newest: s.newest.map(|k| HistoryKey {
                synced_at: k.synced_at.into(),
                render_ref: k.render_ref,
            }),
        }
    }
}

impl From<wit::RenderDiff> for RenderDiff {
    fn from(d: wit::RenderDiff) -> Self {
        RenderDiff {
            added: d.added.into_iter().map(Into::into).collect(),
            removed: d.removed.into_iter().map(Into::into).collect(),
            changed: d
                .changed
                .into_iter()
                .map(|c| ChangedObject {
                    id: c.id.into(),
                    lines: c.lines,
                })
                .collect(),
            unchanged: d.unchanged,
        }
    }
}

impl From<wit::RenderChanges> for RenderChanges {
    fn from(c: wit::RenderChanges) -> Self {
        let ids = |ids: Vec<wit::ObjectId>| ids.into_iter().map(ObjectId::from).collect();
        RenderChanges {
            added: ids(c.added),
            removed: ids(c.removed),
            changed: ids(c.changed),
            images: c
                .images
                .into_iter()
                .map(|i| ImageChange {
                    object: i.object.into(),
                    container: i.container,
                    old: i.old,
                    new: i.new,
                })
                .collect(),
            secret_keys: c
                .secret_keys
                .into_iter()
                .map(|k| SecretKeyChange {
                    secret: k.secret.into(),
                    key: k.key,
                })
                .collect(),
        }
    }
}

impl From<wit::RenderPage> for RenderPage {
    fn from(p: wit::RenderPage) -> Self {
        RenderPage {
            objects: p.objects,
            size: p.size,
            pages: p.pages,
            start: p.start,
            shown: p
                .shown
                .into_iter()
                .map(|o| PageObject {
                    index: o.index,
                    id: o.id.into(),
                    text: o.text,
                    full_len: o.full_len,
                })
                .collect(),
        }
    }
}

impl From<&HistoryEntry> for wit::HistoryEntry {
    fn from(e: &HistoryEntry) -> Self {
        wit::HistoryEntry {
            key: e.key.clone(),
            render_ref: e.render_ref.clone(),
            synced_at: e.synced_at.into(),
            summary: e.summary.clone(),
            trust: (&e.trust).into(),
        }
    }
}

impl From<&GcPlan> for wit::GcPlan {
    fn from(p: &GcPlan) -> Self {
        wit::GcPlan {
            delete_history: p.delete_history.clone(),
            keep_history: p.keep_history.clone(),
            delete_renders: p.delete_renders.clone(),
            keep_renders: p.keep_renders.clone(),
            ignored: p.ignored.clone(),
            recent_renders: p.recent_renders.clone(),
            future_history: p.future_history.clone(),
            dangling_history: p.dangling_history.clone(),
            unauthenticated_history: p.unauthenticated_history.clone(),
        }
    }
}

impl From<wit::YamlStage> for YamlStage {
    fn from(s: wit::YamlStage) -> Self {
        match s {
            wit::YamlStage::Split => YamlStage::Split,
            wit::YamlStage::Yaml => YamlStage::Yaml,
            wit::YamlStage::Object => YamlStage::Object,
        }
    }
}

impl From<YamlStage> for wit::YamlStage {
    fn from(s: YamlStage) -> Self {
        match s {
            YamlStage::Split => wit::YamlStage::Split,
            YamlStage::Yaml => wit::YamlStage::Yaml,
            YamlStage::Object => wit::YamlStage::Object,
        }
    }
}
