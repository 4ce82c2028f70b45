//! Progress on standard error for store operations that take long on a cloud store:
//! `delete-release` and `gc` (keys deleted, of how many), `put` of a large render
//! (bytes). An operation is one call into the component, so the host counts the bucket
//! calls it serves during that call: a [`ProgressBucket`] between the component and the
//! store's bucket. Shown only when standard error is a terminal, and not with `--quiet`;
//! indicatif draws the line in place.

use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressState, ProgressStyle};
use render_store::{Bucket, BucketError, Delimited, ObjectMeta};
use std::sync::{Arc, Mutex};

/// A render at least this large (its objects' bytes as read) shows progress on `put`:
/// smaller ones are stored before anyone could read a progress line.
pub const LARGE_RENDER_BYTES: usize = 1 << 20;

/// Redraws per second, past indicatif's short bursts: a terminal drawing every delete of
/// a large release would slow the command it reports on.
const REDRAWS_PER_SECOND: u8 = 10;

/// What is being shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `delete-release`: one listing, then a delete of each key.
    DeleteRelease,
    /// `gc`: listings, then deletes of old entries and unneeded renders.
    Gc,
    /// `put` of a render of this many bytes (as read).
    Put(usize),
}

/// Where a `put` is; its line is the bar's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PutPhase {
    Canonicalizing(usize),
    Checking,
    Writing(u64),
    Written(u64),
}

impl PutPhase {
    fn line(self) -> String {
        match self {
            PutPhase::Canonicalizing(bytes) => {
                format!("put: canonicalizing {} of objects…", mib(bytes as u64))
            }
            PutPhase::Checking => "put: checking the store…".to_string(),
            PutPhase::Writing(bytes) => format!("put: writing {}…", mib(bytes)),
            PutPhase::Written(bytes) => format!("put: stored {} of render", mib(bytes)),
        }
    }
}

/// A task's progress line: the bar's position counts the keys deleted, its length the
/// keys listed; a put's line is its phase.
pub struct Progress {
    bar: ProgressBar,
    /// Prefixes listed so far: GC lists the history twice, and a key counts once.
    prefixes: Mutex<Vec<String>>,
    put: Mutex<Option<PutPhase>>,
}

impl Progress {
    /// Progress for `task` on standard error, if it is a terminal and `quiet` is off.
    pub fn to_terminal(task: Task, quiet: bool) -> Option<Arc<Progress>> {
        use std::io::IsTerminal;
        // A terminal-like target rather than indicatif's stderr target, which also draws
        // nothing when TERM is unset (as under `kubectl exec -it`), where a terminal still
        // shows the line.
        (!quiet && std::io::stderr().is_terminal()).then(|| {
            Progress::to_target(
                task,
                ProgressDrawTarget::term_like_with_hz(
                    Box::new(console::Term::buffered_stderr()),
                    REDRAWS_PER_SECOND,
                ),
            )
        })
    }

    /// Progress for `task` drawn to `target`.
    pub fn to_target(task: Task, target: ProgressDrawTarget) -> Arc<Progress> {
        let template = match task {
            Task::DeleteRelease => "delete-release: deleted {pos} of {len} keys",
            Task::Gc => "gc: deleted {pos} key{plural} ({len} listed)",
            Task::Put(_) => "{msg}",
        };
        let style = ProgressStyle::with_template(template)
            .expect("the templates above are valid")
            .with_key(
                "plural",
                |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let _ = out.write_str(if state.pos() == 1 { "" } else { "s" });
                },
            );
        // Abandoned, not finished: finishing would set the count to the length, and a
        // GC deletes fewer keys than it lists.
        let mut bar = ProgressBar::with_draw_target(Some(0), target)
            .with_style(style)
            .with_finish(ProgressFinish::Abandon);
        let put = match task {
            Task::Put(bytes) => Some(PutPhase::Canonicalizing(bytes)),
            _ => None,
        };
        if let Some(phase) = put {
            bar = bar.with_message(phase.line());
            // The component canonicalizes before its first bucket call: say so now.
            bar.force_draw();
        }
        Arc::new(Progress {
            bar,
            prefixes: Mutex::new(Vec::new()),
            put: Mutex::new(put),
        })
    }

    fn set_put(&self, phase: PutPhase) {
        if let Ok(mut put) = self.put.lock()
            && put.is_some()
        {
            *put = Some(phase);
            self.bar.set_message(phase.line());
        }
    }

    /// Draws the final counts and leaves them on the terminal.
    pub fn finish(&self) {
        let put = self.put.lock().ok().and_then(|p| *p);
        match put {
            // A put that checked and wrote nothing found the render stored.
            Some(PutPhase::Checking) => self
                .bar
                .abandon_with_message("put: already stored, nothing written"),
            _ => self.bar.abandon(),
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// A bucket that passes every call on and counts them for a [`Progress`].
pub struct ProgressBucket {
    inner: Arc<dyn Bucket>,
    progress: Arc<Progress>,
}

impl ProgressBucket {
    /// Counts the calls made to `inner`.
    pub fn new(inner: Arc<dyn Bucket>, progress: Arc<Progress>) -> Self {
        ProgressBucket { inner, progress }
    }
}

#[async_trait]
impl Bucket for ProgressBucket {
    async fn get(&self, key: &str, limit: u64) -> Result<Vec<u8>, BucketError> {
        self.inner.get(key, limit).await
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), BucketError> {
        let len = value.len() as u64;
        self.progress.set_put(PutPhase::Writing(len));
        let result = self.inner.put(key, value).await;
        if result.is_ok() {
            self.progress.set_put(PutPhase::Written(len));
        }
        result
    }

    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.progress.set_put(PutPhase::Checking);
        self.inner.exists(key).await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let listed = self.inner.list(prefix).await?;
        let first_time = match self.progress.prefixes.lock() {
            Ok(mut prefixes) if !prefixes.iter().any(|p| p == prefix) => {
                prefixes.push(prefix.to_string());
                true
            }
            _ => false,
        };
        if first_time {
            self.progress.bar.inc_length(listed.len() as u64);
        }
        Ok(listed)
    }

    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        let result = self.inner.delete(key).await;
        if result.is_ok() {
            self.progress.bar.inc(1);
        }
        result
    }

    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let answers = self.inner.delete_many(keys).await?;
        let done = answers.iter().filter(|a| a.is_ok()).count();
        self.progress.bar.inc(done as u64);
        Ok(answers)
    }

    async fn list_delimited(&self, prefix: &str) -> Result<Delimited, BucketError> {
        self.inner.list_delimited(prefix).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A terminal that keeps each line drawn, for the tests to read back.
    #[derive(Debug, Clone, Default)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl Screen {
        fn target(&self) -> ProgressDrawTarget {
            ProgressDrawTarget::term_like_with_hz(Box::new(self.clone()), REDRAWS_PER_SECOND)
        }

        /// Every line drawn, oldest first, without the padding to the terminal's width.
        fn drawn(&self) -> Vec<String> {
            self.0
                .lock()
                .unwrap()
                .iter()
                .map(|l| l.trim_end().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)?;
            self.clear_line()
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            let mut lines = self.0.lock().unwrap();
            match lines.last_mut() {
                Some(line) => line.push_str(s),
                None => lines.push(s.to_string()),
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.0.lock().unwrap().push(String::new());
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn deletes_are_counted_against_the_listing() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        for k in ["ns/a/x", "ns/a/y", "ns/a/z"] {
            inner.put(k, b"v".to_vec()).await.unwrap();
        }
        let screen = Screen::default();
        let progress = Progress::to_target(Task::DeleteRelease, screen.target());
        let bucket = ProgressBucket::new(inner.clone(), progress.clone());
        for meta in bucket.list("ns/a/").await.unwrap() {
            bucket.delete(&meta.key).await.unwrap();
        }
        progress.finish();
        let drawn = screen.drawn();
        assert!(
            drawn.contains(&"delete-release: deleted 0 of 3 keys".to_string()),
            "{drawn:?}"
        );
        assert_eq!(
            drawn.last().unwrap(),
            "delete-release: deleted 3 of 3 keys",
            "{drawn:?}"
        );
        assert!(inner.list("ns/a/").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn batch_deletes_count_every_key_they_deleted() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        for k in ["ns/a/x", "ns/a/y", "ns/a/z"] {
            inner.put(k, b"v".to_vec()).await.unwrap();
        }
        let screen = Screen::default();
        let progress = Progress::to_target(Task::DeleteRelease, screen.target());
        let bucket = ProgressBucket::new(inner.clone(), progress.clone());
        let keys: Vec<String> = bucket
            .list("ns/a/")
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.key)
            .collect();
        // A key the bucket refuses is not counted.
        let mut asked = keys.clone();
        asked.insert(1, "ns/a//bad".into());
        let answers = bucket.delete_many(&asked).await.unwrap();
        assert_eq!(answers.iter().filter(|a| a.is_err()).count(), 1);
        progress.finish();
        let drawn = screen.drawn();
        assert_eq!(
            drawn.last().unwrap(),
            "delete-release: deleted 3 of 3 keys",
            "{drawn:?}"
        );
    }

    #[tokio::test]
    async fn gc_counts_a_prefix_listed_twice_once_and_keeps_its_count_at_the_end() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        for k in ["ns/a/history/1", "ns/a/history/2", "ns/a/renders/r"] {
            inner.put(k, b"v".to_vec()).await.unwrap();
        }
        let screen = Screen::default();
        let progress = Progress::to_target(Task::Gc, screen.target());
        let bucket = ProgressBucket::new(inner, progress.clone());
        bucket.list("ns/a/history/").await.unwrap();
        bucket.list("ns/a/renders/").await.unwrap();
        bucket.list("ns/a/history/").await.unwrap();
        bucket.delete("ns/a/history/1").await.unwrap();
        progress.finish();
        let drawn = screen.drawn();
        // Finishing does not count the listed keys as deleted.
        assert_eq!(
            drawn.last().unwrap(),
            "gc: deleted 1 key (3 listed)",
            "{drawn:?}"
        );
        assert!(
            drawn.contains(&"gc: deleted 0 keys (2 listed)".to_string()),
            "{drawn:?}"
        );
    }

    #[tokio::test]
    async fn a_put_shows_its_bytes() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        let screen = Screen::default();
        let progress = Progress::to_target(Task::Put(3 << 20), screen.target());
        let bucket = ProgressBucket::new(inner.clone(), progress.clone());
        assert_eq!(bucket.exists("ns/a/renders/r").await.unwrap(), None);
        bucket
            .put("ns/a/renders/r", vec![0; 2 << 20])
            .await
            .unwrap();
        progress.finish();
        let mut drawn = screen.drawn();
        // Finishing draws the last line once more.
        drawn.dedup();
        assert_eq!(
            drawn,
            [
                "put: canonicalizing 3.0 MiB of objects…",
                "put: checking the store…",
                "put: writing 2.0 MiB…",
                "put: stored 2.0 MiB of render",
            ]
        );

        // Stored already: checked, nothing written.
        let screen = Screen::default();
        let progress = Progress::to_target(Task::Put(3 << 20), screen.target());
        let bucket = ProgressBucket::new(inner, progress.clone());
        assert!(bucket.exists("ns/a/renders/r").await.unwrap().is_some());
        progress.finish();
        assert_eq!(
            screen.drawn().last().unwrap(),
            "put: already stored, nothing written"
        );
    }

    #[test]
    fn deletes_past_the_redraw_rate_are_not_all_drawn() {
        let screen = Screen::default();
        let progress = Progress::to_target(Task::DeleteRelease, screen.target());
        progress.bar.inc_length(100_000);
        for _ in 0..100_000 {
            progress.bar.inc(1);
        }
        progress.finish();
        let drawn = screen.drawn();
        assert!(drawn.len() < 100, "{} lines drawn", drawn.len());
        assert_eq!(
            drawn.last().unwrap(),
            "delete-release: deleted 100000 of 100000 keys"
        );
    }
}
