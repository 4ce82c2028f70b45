//! Progress on standard error for store operations that take long on a cloud store:
//! `delete-release` and `gc` (keys deleted, of how many), `put` of a large render
//! (bytes). An operation is one call into the component, so the host counts the bucket
//! calls it serves during that call: a [`ProgressBucket`] between the component and the
//! store's bucket. Shown only when standard error is a terminal, and not with `--quiet`.

use async_trait::async_trait;
use render_store::{Bucket, BucketError, ObjectMeta};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A render at least this large (its objects' bytes as read) shows progress on `put`:
/// smaller ones are stored before anyone could read a progress line.
pub const LARGE_RENDER_BYTES: usize = 1 << 20;

/// Redraws at most this often: a terminal drawing every delete of a 100,000-key
/// release would slow the command it reports on.
const REDRAW: Duration = Duration::from_millis(100);

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

#[derive(Debug, Default)]
struct Counts {
    listed: usize,
    /// Prefixes listed so far: GC lists the history twice, and a key counts once.
    prefixes: Vec<String>,
    deleted: usize,
    written: u64,
    phase: &'static str,
    drawn: Option<Instant>,
}

/// Where progress lines go, and how they are drawn.
pub struct Progress {
    task: Task,
    counts: Mutex<Counts>,
    out: Mutex<Box<dyn Write + Send>>,
}

impl Progress {
    /// Progress for `task` on standard error, if it is a terminal and `quiet` is off.
    pub fn to_terminal(task: Task, quiet: bool) -> Option<Arc<Progress>> {
        use std::io::IsTerminal;
        (!quiet && std::io::stderr().is_terminal())
            .then(|| Progress::to_writer(task, Box::new(std::io::stderr())))
    }

    /// Progress for `task` written to `out` (a terminal: lines are redrawn in place).
    pub fn to_writer(task: Task, out: Box<dyn Write + Send>) -> Arc<Progress> {
        let progress = Arc::new(Progress {
            task,
            counts: Mutex::new(Counts::default()),
            out: Mutex::new(out),
        });
        if let Task::Put(_) = task {
            // The component canonicalizes before its first bucket call: say so now.
            progress.update(|_| {}, true);
        }
        progress
    }

    /// The line for the counts so far.
    fn line(&self, c: &Counts) -> String {
        match self.task {
            Task::DeleteRelease => {
                format!("delete-release: deleted {} of {} keys", c.deleted, c.listed)
            }
            Task::Gc => format!(
                "gc: deleted {} key{} ({} listed)",
                c.deleted,
                if c.deleted == 1 { "" } else { "s" },
                c.listed
            ),
            Task::Put(bytes) => match c.phase {
                "written" => format!("put: stored {} of render", mib(c.written)),
                "writing" => format!("put: writing {}…", mib(c.written)),
                "checking" => "put: checking the store…".to_string(),
                "present" => "put: already stored, nothing written".to_string(),
                _ => format!("put: canonicalizing {} of objects…", mib(bytes as u64)),
            },
        }
    }

    /// Applies `change` and redraws when due (or `now`).
    fn update(&self, change: impl FnOnce(&mut Counts), now: bool) {
        let Ok(mut c) = self.counts.lock() else {
            return;
        };
        change(&mut c);
        let due = now || c.drawn.is_none_or(|t| t.elapsed() >= REDRAW);
        if due {
            c.drawn = Some(Instant::now());
            let line = self.line(&c);
            drop(c);
            self.draw(&line, false);
        }
    }

    fn draw(&self, line: &str, last: bool) {
        if let Ok(mut out) = self.out.lock() {
            // Carriage return and erase-line: the line is redrawn in place.
            let _ = write!(out, "\r\x1b[K{line}{}", if last { "\n" } else { "" });
            let _ = out.flush();
        }
    }

    /// Draws the final counts and ends the line, so what the command prints next
    /// starts on a line of its own.
    pub fn finish(&self) {
        let line = match self.counts.lock() {
            Ok(mut c) => {
                // A put that checked and wrote nothing found the render stored.
                if c.phase == "checking" {
                    c.phase = "present";
                }
                self.line(&c)
            }
            Err(_) => return,
        };
        self.draw(&line, true);
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
        self.progress.update(
            |c| {
                c.phase = "writing";
                c.written = len;
            },
            true,
        );
        let result = self.inner.put(key, value).await;
        if result.is_ok() {
            self.progress.update(|c| c.phase = "written", true);
        }
        result
    }

    async fn exists(&self, key: &str) -> Result<Option<u64>, BucketError> {
        self.progress.update(|c| c.phase = "checking", true);
        self.inner.exists(key).await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        let listed = self.inner.list(prefix).await?;
        let n = listed.len();
        self.progress.update(
            |c| {
                if !c.prefixes.iter().any(|p| p == prefix) {
                    c.prefixes.push(prefix.to_string());
                    c.listed += n;
                }
            },
            true,
        );
        Ok(listed)
    }

    async fn delete(&self, key: &str) -> Result<(), BucketError> {
        let result = self.inner.delete(key).await;
        if result.is_ok() {
            self.progress.update(|c| c.deleted += 1, false);
        }
        result
    }

    async fn delete_many(
        &self,
        keys: &[String],
    ) -> Result<Vec<Result<(), BucketError>>, BucketError> {
        let answers = self.inner.delete_many(keys).await?;
        let done = answers.iter().filter(|a| a.is_ok()).count();
        self.progress.update(|c| c.deleted += done, false);
        Ok(answers)
    }

    async fn list_folders(&self, prefix: &str) -> Result<Vec<String>, BucketError> {
        self.inner.list_folders(prefix).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer tests can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn deletes_are_counted_against_the_listing() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        for k in ["ns/a/x", "ns/a/y", "ns/a/z"] {
            inner.put(k, b"v".to_vec()).await.unwrap();
        }
        let out = Shared::default();
        let progress = Progress::to_writer(Task::DeleteRelease, Box::new(out.clone()));
        let bucket = ProgressBucket::new(inner.clone(), progress.clone());
        for meta in bucket.list("ns/a/").await.unwrap() {
            bucket.delete(&meta.key).await.unwrap();
        }
        progress.finish();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("deleted 0 of 3 keys"), "{text:?}");
        assert!(
            text.ends_with("\r\x1b[Kdelete-release: deleted 3 of 3 keys\n"),
            "{text:?}"
        );
        assert!(inner.list("ns/a/").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn batch_deletes_count_every_key_they_deleted() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        for k in ["ns/a/x", "ns/a/y", "ns/a/z"] {
            inner.put(k, b"v".to_vec()).await.unwrap();
        }
        let out = Shared::default();
        let progress = Progress::to_writer(Task::DeleteRelease, Box::new(out.clone()));
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
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.ends_with("\r\x1b[Kdelete-release: deleted 3 of 3 keys\n"),
            "{text:?}"
        );
    }

    #[tokio::test]
    async fn a_put_shows_its_bytes() {
        let inner = render_store::open_bucket("mem://").unwrap().unwrap();
        let out = Shared::default();
        let progress = Progress::to_writer(Task::Put(3 << 20), Box::new(out.clone()));
        let bucket = ProgressBucket::new(inner, progress.clone());
        assert_eq!(bucket.exists("ns/a/renders/r").await.unwrap(), None);
        bucket
            .put("ns/a/renders/r", vec![0; 2 << 20])
            .await
            .unwrap();
        progress.finish();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        for step in [
            "canonicalizing 3.0 MiB",
            "checking the store",
            "writing 2.0 MiB",
            "stored 2.0 MiB of render\n",
        ] {
            assert!(text.contains(step), "{step}: {text:?}");
        }
    }
}
