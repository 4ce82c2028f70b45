//! The pure logic of the component, called without a bucket: every answer comes from
//! the component, so Rust, JavaScript and Python hosts agree by construction.

use crate::error::Result;
use crate::runtime::Runtime;
use crate::types::{GcPlan, ParsedKey, Release, RenderDiff, SyncTime};

impl Runtime {
    /// The canonical bytes of a render given as its objects' JSON bytes.
    pub async fn canonical(&self, objects: &[Vec<u8>]) -> Result<Vec<u8>> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_canonical(&mut store, objects)
            .await;
        self.finish(store, result)
    }

    /// The renderRef of a render: `sha256:` and the hex SHA-256 of its canonical bytes.
    pub async fn render_ref(&self, objects: &[Vec<u8>]) -> Result<String> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_render_ref(&mut store, objects)
            .await;
        self.finish(store, result)
    }

    /// Checks a renderRef (`sha256:` and 64 lowercase hex digits) in the component.
    pub async fn validate_render_ref(&self, render_ref: &str) -> Result<()> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_validate_render_ref(&mut store, render_ref)
            .await;
        self.finish(store, result)
    }

    /// The hex SHA-256 of `bytes`, computed in the component.
    pub async fn sha256_hex(&self, bytes: &[u8]) -> Result<String> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_sha256_hex(&mut store, bytes)
            .await;
        self.finish(store, result.map(Ok))
    }

    /// The key of a render blob of `release`.
    pub async fn render_key(&self, release: &Release, render_ref: &str) -> Result<String> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_render_key(&mut store, release, render_ref)
            .await;
        self.finish(store, result)
    }

    /// The key of a history entry of `release`.
    pub async fn history_key(
        &self,
        release: &Release,
        synced_at: SyncTime,
        render_ref: &str,
    ) -> Result<String> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_history_key(&mut store, release, synced_at, render_ref)
            .await;
        self.finish(store, result)
    }

    /// Parses a key of `release`; `None` for a key that is not one of its renders or
    /// history entries.
    pub async fn parse_key(&self, release: &Release, key: &str) -> Result<Option<ParsedKey>> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_parse_key(&mut store, release, key)
            .await;
        self.finish(store, result.map(Ok))
    }

    /// Parses RFC 3339 to a UTC [`SyncTime`].
    pub async fn parse_synced_at(&self, text: &str) -> Result<SyncTime> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_parse_synced_at(&mut store, text)
            .await;
        self.finish(store, result)
    }

    /// RFC 3339 in UTC with nanoseconds, trailing zeros trimmed.
    pub async fn format_synced_at(&self, t: SyncTime) -> Result<String> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_format_synced_at(&mut store, t)
            .await;
        self.finish(store, result)
    }

    /// The GC decision from listings alone (see [`crate::RenderStore::gc`]).
    pub async fn plan_gc(
        &self,
        release: &Release,
        keep: i64,
        history_keys: &[String],
        render_keys: &[String],
        protected: &[String],
    ) -> Result<GcPlan> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_plan_gc(
                &mut store,
                release,
                keep,
                history_keys,
                render_keys,
                protected,
            )
            .await;
        self.finish(store, result)
    }

    /// The difference between two canonical renders.
    pub async fn diff_renders(&self, old: &[u8], new: &[u8]) -> Result<RenderDiff> {
        let (mut store, instance) = self.instantiate(None).await?;
        let result = instance
            .convoy_render_store_logic()
            .call_diff_renders(&mut store, old, new)
            .await;
        self.finish(store, result)
    }
}
