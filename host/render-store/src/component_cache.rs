//! A cache of the compiled component, so a process that starts loads compiled code
//! instead of running cranelift over the whole component again.
//!
//! Loading compiled code runs it, so a cached file is only used when nobody else can
//! have written it or swapped it in. Checking paths and then opening them races (a
//! rename in between wins), so every check is made on an open descriptor instead:
//!
//! - the folder is reached one component at a time with `openat` and `O_NOFOLLOW`;
//!   every folder on the way must belong to root or this user and be writable by
//!   nobody else, unless it has the sticky bit (like `/tmp`), where others cannot
//!   rename what is ours. A folder others can write without the sticky bit lets them
//!   rename ours away and put their own in its place.
//! - the cache folder itself, opened without following a link, must belong to this
//!   user and be writable by nobody else; a missing one is made with mode 0700.
//! - a cached file is opened inside it without following a link, must be a regular
//!   file of this user that nobody else can read or write, and its bytes are read from
//!   that descriptor before wasmtime sees them.
//! - new files are created under a temporary name with `O_EXCL`, `O_NOFOLLOW` and mode
//!   0600, then renamed into place, so a reader never sees half a file; temporary
//!   files a killed writer left behind are removed after [`STALE_AFTER`].
//!
//! A cache that fails these checks is not used: the component is compiled in memory
//! and a warning is logged. The cache never makes a command fail.

use sha2::{Digest, Sha256};
use std::fs::{File, Metadata};
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Component as PathPart, Path, PathBuf};
use std::time::Duration;
use wasmtime::Engine;
use wasmtime::component::Component;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// The variable naming the cache folder; set and empty, it turns the cache off.
pub const CACHE_DIR_VAR: &str = "RENDER_STORE_CACHE_DIR";

/// The variable that, set to `off`, keeps a `precompiled` build from loading the code
/// built into it.
#[cfg_attr(not(feature = "precompiled"), allow(dead_code))]
pub const PRECOMPILED_VAR: &str = "RENDER_STORE_PRECOMPILED";

/// Temporary files older than this were left by a writer that was killed: no write of
/// a compiled component takes minutes.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// Every temporary file of the cache starts with this; nothing else does. Earlier
/// versions wrote `.tmpXXXXXX` (tempfile's names), which it covers too.
const TEMP_PREFIX: &str = ".tmp";

/// Where compiled components are kept: `$RENDER_STORE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/render-store`, else `$HOME/.cache/render-store`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_VAR) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("render-store")),
    }
}

/// Which component to compile: the embedded one, whose digest is known when the library
/// is built, or another build a caller gives.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// [`crate::COMPONENT`]: a cache hit never reads its bytes, so a process that
    /// starts does not page them in.
    Embedded,
    /// Another build of the component.
    Given(&'a [u8]),
}

impl<'a> Source<'a> {
    /// The component's bytes.
    fn wasm(self) -> &'a [u8] {
        match self {
            Source::Embedded => crate::embedded::COMPONENT,
            Source::Given(wasm) => wasm,
        }
    }
}

/// The component compiled for `engine`, from the cache when a trusted entry exists.
pub fn load_or_compile(engine: &Engine, source: Source<'_>) -> wasmtime::Result<Component> {
    match cache_dir() {
        None => {
            let turned_off = std::env::var_os(CACHE_DIR_VAR).is_some_and(|v| v.is_empty());
            compile_in_memory(engine, source, !turned_off)
        }
        Some(dir) => load_or_compile_in(engine, source, &dir).map(|(component, _)| component),
    }
}

/// The precompiled component built into this binary (the `precompiled` feature), if
/// `source` is that component and `engine` can run its code: wasmtime checks its
/// version, target, CPU features and settings, and refuses code made otherwise. Its
/// serialized bytes come along, for the cache.
#[cfg(feature = "precompiled")]
fn precompiled(engine: &Engine, source: Source<'_>) -> Option<(Component, &'static [u8])> {
    // `off` compiles as a build without the feature would: to measure what it saves, or
    // to rule it out.
    let off = std::env::var_os(PRECOMPILED_VAR).is_some_and(|v| v == "off");
    if !matches!(source, Source::Embedded) || off {
        return None;
    }
    let bytes = crate::embedded::PRECOMPILED;
    // SAFETY: build.rs wrote these bytes with `Engine::precompile_component` of the
    // embedded component, into this binary, where nothing else can change them.
    match unsafe { Component::deserialize(engine, bytes) } {
        Ok(component) => Some((component, bytes)),
        Err(e) => {
            tracing::debug!("the precompiled component does not fit this engine: {e:#}");
            None
        }
    }
}

#[cfg(not(feature = "precompiled"))]
fn precompiled(_engine: &Engine, _source: Source<'_>) -> Option<(Component, &'static [u8])> {
    None
}

/// Whether `engine` loads the precompiled component (for tests).
#[cfg(all(test, feature = "precompiled"))]
pub(crate) fn precompiled_fits(engine: &Engine) -> bool {
    precompiled(engine, Source::Embedded).is_some()
}

/// The component without the cache: precompiled, or compiled now. Compiling takes
/// seconds, so it is said (`warn`) unless the user turned the cache off.
fn compile_in_memory(
    engine: &Engine,
    source: Source<'_>,
    say: bool,
) -> wasmtime::Result<Component> {
    if let Some((component, _)) = precompiled(engine, source) {
        return Ok(component);
    }
    if say && matches!(source, Source::Embedded) {
        tracing::warn!(
            "compiling the render-store component (a second or more) because no cache \
             folder can be used: set {CACHE_DIR_VAR} to a folder only this user can write, \
             or build with the `precompiled` feature (containers with a read-only file \
             system)"
        );
    }
    Component::new(engine, source.wasm())
}

/// What the cache did for one load.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// The cached file was used.
    Hit,
    /// The component was compiled (no usable entry) and, if possible, cached.
    Compiled,
    /// The cache folder is not safe to use; the component was compiled in memory.
    Refused(String),
}

/// Why the cache cannot be used.
#[derive(Debug)]
enum CacheError {
    /// Someone else could have written it: using it could run their code.
    Unsafe(String),
    /// It could not be read or written (a read-only home, a full disk).
    Io(std::io::Error),
}

impl From<Errno> for CacheError {
    fn from(e: Errno) -> Self {
        CacheError::Io(e.into())
    }
}

impl From<std::io::Error> for CacheError {
    fn from(e: std::io::Error) -> Self {
        CacheError::Io(e)
    }
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheError::Unsafe(why) => f.write_str(why),
            CacheError::Io(e) => e.fmt(f),
        }
    }
}

fn load_or_compile_in(
    engine: &Engine,
    source: Source<'_>,
    dir: &Path,
) -> wasmtime::Result<(Component, Outcome)> {
    let name = entry_name(engine, source);
    let folder = match open_cache_dir(dir) {
        Ok(folder) => folder,
        Err(CacheError::Unsafe(why)) => {
            tracing::warn!(
                folder = %dir.display(),
                "not using the compiled-component cache: {why}; compiling in memory \
                 (set {CACHE_DIR_VAR} to a private folder, or empty to turn the cache off)"
            );
            return Ok((
                compile_in_memory(engine, source, false)?,
                Outcome::Refused(why),
            ));
        }
        Err(CacheError::Io(e)) => {
            tracing::debug!(error = %e, folder = %dir.display(), "no compiled-component cache");
            return Ok((compile_in_memory(engine, source, true)?, Outcome::Compiled));
        }
    };
    match read_entry(&folder, &name) {
        Ok(Some(file)) => {
            // SAFETY: the file is a descriptor of a regular file that belongs to this
            // user, that nobody else can read or write, in a folder only this user can
            // write (checked on the open descriptors). Such a file was written from
            // `Engine::precompile_component` of the same component and engine
            // configuration (both are in its name); wasmtime itself refuses a file
            // made by another version or configuration, and then it is compiled again.
            if let Ok(component) = unsafe { deserialize_entry(engine, file) } {
                return Ok((component, Outcome::Hit));
            }
        }
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(folder = %dir.display(), file = %name, "not using a cached component: {e}")
        }
    }
    // Only a writer leaves temporaries behind (when killed mid-write), so they are swept
    // before writing, not on every start: a hit reads no more of the folder than its entry.
    remove_stale_temporaries(&folder);
    if let Some((component, bytes)) = precompiled(engine, source) {
        // Written so the next start maps the file (faster than copying these bytes).
        if let Err(e) = write_entry(&folder, &name, bytes) {
            tracing::debug!(error = %e, folder = %dir.display(), "not caching the compiled component");
        }
        return Ok((component, Outcome::Compiled));
    }
    let compiled = engine.precompile_component(source.wasm())?;
    // The cache is an optimisation: failing to write it changes nothing else.
    if let Err(e) = write_entry(&folder, &name, &compiled) {
        tracing::debug!(error = %e, folder = %dir.display(), "not caching the compiled component");
    }
    // SAFETY: these bytes were produced by `precompile_component` just above.
    let component = unsafe { Component::deserialize(engine, &compiled) }?;
    Ok((component, Outcome::Compiled))
}

/// The cache file of `wasm` compiled by `engine`: SHA-256 of the component and of the
/// engine's compatibility hash. Both are stable across Rust releases (std's
/// `DefaultHasher` is not), so a toolchain update never makes a stale entry look current.
fn entry_name(engine: &Engine, source: Source<'_>) -> String {
    let mut engine_hash = Sha256Hasher(Sha256::new());
    engine
        .precompile_compatibility_hash()
        .hash(&mut engine_hash);
    let engine_digest = engine_hash.0.finalize();
    let mut name = String::from("component-");
    match source {
        Source::Embedded => name.push_str(&crate::embedded::COMPONENT_SHA256[..32]),
        Source::Given(wasm) => {
            for b in &Sha256::digest(wasm)[..16] {
                name.push_str(&format!("{b:02x}"));
            }
        }
    }
    name.push('-');
    for b in &engine_digest[..8] {
        name.push_str(&format!("{b:02x}"));
    }
    name + ".cwasm"
}

/// Feeds what a `Hash` implementation writes into SHA-256.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        u64::from_be_bytes(digest[..8].try_into().expect("SHA-256 has 32 bytes"))
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The metadata of an open descriptor (fstat), not of whatever a path names now.
fn metadata(fd: &OwnedFd) -> std::io::Result<Metadata> {
    File::from(fd.try_clone()?).metadata()
}

/// Flags to walk through a folder: `O_PATH` needs no read permission on it (a home
/// folder may be 0711).
#[cfg(target_os = "linux")]
fn walk_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

#[cfg(not(target_os = "linux"))]
fn walk_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens `name` in `parent` as a folder without following a link, making it (mode
/// 0700) when it is missing.
fn open_or_make_dir(parent: &OwnedFd, name: &Path, flags: OFlags) -> Result<OwnedFd, CacheError> {
    let open = || rustix::fs::openat(parent, name, flags, Mode::empty());
    let fd = match open() {
        Err(Errno::NOENT) => {
            match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            open()
        }
        other => other,
    };
    fd.map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => CacheError::Unsafe(format!(
            "{} is a symbolic link or not a folder",
            name.display()
        )),
        other => other.into(),
    })
}

/// A folder on the way to the cache: others must not be able to rename what is in it.
fn check_ancestor(meta: &Metadata, path: &Path) -> Result<(), CacheError> {
    let uid = meta.uid();
    if uid != 0 && uid != euid() {
        return Err(CacheError::Unsafe(format!(
            "{} belongs to another user (uid {uid})",
            path.display()
        )));
    }
    let sticky = meta.mode() & 0o1000 != 0;
    if meta.mode() & 0o022 != 0 && !sticky {
        return Err(CacheError::Unsafe(format!(
            "others can write {} (mode {:o}), so they could replace the cache folder",
            path.display(),
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// Opens the cache folder, checking every folder on the way on its descriptor.
fn open_cache_dir(dir: &Path) -> Result<OwnedFd, CacheError> {
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(CacheError::Unsafe(format!(
            "{} cannot be a cache folder",
            dir.display()
        )));
    };
    // Links above the cache folder are resolved once, here (such as a /tmp that is a
    // link); the walk below then follows none, so a link swapped in later is refused,
    // and the folders it passes are checked on their descriptors.
    let (existing, missing) = split_existing(parent)?;
    let mut path = existing.canonicalize()?;
    path.extend(&missing);
    let mut fd = rustix::fs::openat(rustix::fs::CWD, "/", walk_flags(), Mode::empty())?;
    let mut walked = PathBuf::from("/");
    for part in path.components() {
        match part {
            PathPart::RootDir => continue,
            PathPart::Normal(part) => {
                check_ancestor(&metadata(&fd)?, &walked)?;
                walked.push(part);
                fd = open_or_make_dir(&fd, Path::new(part), walk_flags())?;
            }
            _ => {
                return Err(CacheError::Unsafe(format!(
                    "{} is not a plain path",
                    dir.display()
                )));
            }
        }
    }
    check_ancestor(&metadata(&fd)?, &walked)?;
    let folder = open_or_make_dir(
        &fd,
        Path::new(name),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
    )?;
    let meta = metadata(&folder)?;
    if meta.uid() != euid() {
        return Err(CacheError::Unsafe(format!(
            "{} belongs to another user (uid {})",
            dir.display(),
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(CacheError::Unsafe(format!(
            "others can write {} (mode {:o})",
            dir.display(),
            meta.mode() & 0o7777
        )));
    }
    Ok(folder)
}

/// The longest part of `path` that exists, and the names below it that do not (yet).
fn split_existing(path: &Path) -> Result<(PathBuf, Vec<PathBuf>), CacheError> {
    let mut missing = Vec::new();
    let mut existing = path;
    while std::fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(PathBuf::from(name));
                existing = parent;
            }
            _ => break,
        }
    }
    missing.reverse();
    Ok((existing.to_path_buf(), missing))
}

/// Loads a checked cache entry. On Linux wasmtime maps it rather than copying 2 MB
/// twice (a read, then into code memory), which is most of a short command's start:
/// the path `/proc/self/fd/N` names the very file the descriptor holds, so no other
/// file can be put in its place after the checks. Elsewhere it is read.
///
/// # Safety
///
/// `file` must hold what `Engine::precompile_component` wrote, as for
/// [`Component::deserialize`], and nobody else may be able to change it.
unsafe fn deserialize_entry(engine: &Engine, mut file: File) -> wasmtime::Result<Component> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let by_descriptor = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        if by_descriptor.exists() {
            // SAFETY: as the caller promised for `file`, which this path names.
            return unsafe { Component::deserialize_file(engine, &by_descriptor) };
        }
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    // SAFETY: as the caller promised for `file`.
    unsafe { Component::deserialize(engine, &bytes) }
}

/// A cached entry, checked, open for reading; `None` when there is none.
fn read_entry(folder: &OwnedFd, name: &str) -> Result<Option<File>, CacheError> {
    let fd = match rustix::fs::openat(
        folder,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => {
            return Err(CacheError::Unsafe(
                "the cached file is a symbolic link".into(),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let file = File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(CacheError::Unsafe(
            "the cached file is not a regular file".into(),
        ));
    }
    if meta.uid() != euid() {
        return Err(CacheError::Unsafe(format!(
            "the cached file belongs to another user (uid {})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(CacheError::Unsafe(format!(
            "others can read or write the cached file (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    Ok(Some(file))
}

/// A name no other writer uses at the same time: the process and a counter, plus the
/// time for processes whose ids are reused.
fn temp_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{TEMP_PREFIX}-{}-{}-{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn write_entry(folder: &OwnedFd, name: &str, compiled: &[u8]) -> Result<(), CacheError> {
    let tmp = temp_name();
    let fd = rustix::fs::openat(
        folder,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut file = File::from(fd);
    let written = file
        .write_all(compiled)
        .and_then(|()| file.sync_all())
        .map_err(CacheError::from)
        .and_then(|()| Ok(rustix::fs::renameat(folder, tmp.as_str(), folder, name)?));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(folder, tmp.as_str(), AtFlags::empty());
    }
    written
}

/// Removes temporary files older than [`STALE_AFTER`]; younger ones may be a write in
/// progress.
fn remove_stale_temporaries(folder: &OwnedFd) {
    let Ok(dir) = rustix::fs::Dir::read_from(folder) else {
        return;
    };
    for entry in dir.flatten() {
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if !name.starts_with(TEMP_PREFIX) {
            continue;
        }
        let Ok(fd) = rustix::fs::openat(
            folder,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let stale = File::from(fd)
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if stale {
            let _ = rustix::fs::unlinkat(folder, name, AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn the_embedded_components_digest_is_its_sha256() {
        let digest: String = Sha256::digest(crate::embedded::COMPONENT)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(crate::embedded::COMPONENT_SHA256, digest);
        let name = entry_name(&Engine::default(), Source::Embedded);
        assert!(
            name.starts_with(&format!("component-{}-", &digest[..32])),
            "{name}"
        );
        // The same bytes given as another build name the same entry.
        let given = entry_name(
            &Engine::default(),
            Source::Given(crate::embedded::COMPONENT),
        );
        assert_eq!(name, given);
    }

    /// A small component: compiling the real one in every test is slow.
    fn wasm() -> Vec<u8> {
        wat::parse_str("(component (core module (func (export \"f\"))))").unwrap()
    }

    fn load(dir: &Path) -> Outcome {
        load_or_compile_in(&Engine::default(), Source::Given(&wasm()), dir)
            .unwrap()
            .1
    }

    fn entry(dir: &Path) -> PathBuf {
        dir.join(entry_name(&Engine::default(), Source::Given(&wasm())))
    }

    /// A private folder for the test, in a folder only root and this user can write.
    fn root() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        chmod(root.path(), 0o700);
        root
    }

    #[test]
    fn a_good_cache_round_trips() {
        let root = root();
        let cache = root.path().join("a/b/cache");
        assert_eq!(load(&cache), Outcome::Compiled);
        let meta = std::fs::symlink_metadata(entry(&cache)).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::metadata(&cache).unwrap().mode() & 0o777,
            0o700,
            "a missing cache folder is made private"
        );
        assert_eq!(load(&cache), Outcome::Hit);
    }

    #[test]
    fn a_symlinked_cache_folder_is_not_followed() {
        let root = root();
        let real = root.path().join("real");
        assert_eq!(load(&real), Outcome::Compiled);
        let link = root.path().join("link");
        symlink(&real, &link).unwrap();
        assert!(matches!(load(&link), Outcome::Refused(why) if why.contains("symbolic link")));
        // A link above the cache folder that is fixed before the walk is resolved, then
        // its target checked like any other folder.
        let above = root.path().join("above");
        symlink(root.path(), &above).unwrap();
        assert_eq!(load(&above.join("real")), Outcome::Hit);
    }

    #[test]
    fn a_symlinked_cache_file_is_not_followed() {
        let root = root();
        let elsewhere = root.path().join("elsewhere");
        assert_eq!(load(&elsewhere), Outcome::Compiled);
        let cache = root.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        chmod(&cache, 0o700);
        symlink(entry(&elsewhere), entry(&cache)).unwrap();
        assert_eq!(load(&cache), Outcome::Compiled, "the link is not read");
        // The new entry replaced the link, not the file it pointed at.
        let meta = std::fs::symlink_metadata(entry(&cache)).unwrap();
        assert!(meta.is_file());
        assert_eq!(load(&cache), Outcome::Hit);
    }

    #[test]
    fn a_folder_others_can_write_is_refused() {
        let root = root();
        let cache = root.path().join("cache");
        assert_eq!(load(&cache), Outcome::Compiled);
        chmod(&cache, 0o770);
        assert!(matches!(load(&cache), Outcome::Refused(why) if why.contains("mode 770")));
        chmod(&cache, 0o700);
        assert_eq!(load(&cache), Outcome::Hit);

        // A parent others can write lets them rename the cache folder away...
        chmod(root.path(), 0o777);
        assert!(matches!(load(&cache), Outcome::Refused(why) if why.contains("replace")));
        // ...unless it is sticky, like /tmp.
        chmod(root.path(), 0o1777);
        assert_eq!(load(&cache), Outcome::Hit);
        chmod(root.path(), 0o700);
    }

    #[test]
    fn entries_of_other_users_are_refused() {
        let root = root();
        let cache = root.path().join("cache");
        assert_eq!(load(&cache), Outcome::Compiled);
        if euid() != 0 {
            // Only root can give files away; the check itself is the same.
            return;
        }
        let nobody = Some(rustix::fs::Uid::from_raw(65534));
        let file = File::open(entry(&cache)).unwrap();
        rustix::fs::fchown(&file, nobody, None).unwrap();
        assert_eq!(
            load(&cache),
            Outcome::Compiled,
            "another user's file is not read"
        );
        assert_eq!(std::fs::metadata(entry(&cache)).unwrap().uid(), 0);
        assert_eq!(load(&cache), Outcome::Hit);

        let folder = File::open(&cache).unwrap();
        rustix::fs::fchown(&folder, nobody, None).unwrap();
        assert!(matches!(load(&cache), Outcome::Refused(why) if why.contains("uid 65534")));
        let parent = File::open(root.path()).unwrap();
        rustix::fs::fchown(&folder, Some(rustix::fs::Uid::ROOT), None).unwrap();
        rustix::fs::fchown(&parent, nobody, None).unwrap();
        assert!(matches!(load(&cache), Outcome::Refused(why) if why.contains("uid 65534")));
    }

    #[test]
    fn a_readable_entry_is_not_trusted() {
        let root = root();
        let cache = root.path().join("cache");
        assert_eq!(load(&cache), Outcome::Compiled);
        chmod(&entry(&cache), 0o666);
        assert_eq!(load(&cache), Outcome::Compiled);
        assert_eq!(load(&cache), Outcome::Hit);
    }

    #[test]
    fn stale_temporary_files_are_removed() {
        let root = root();
        let cache = root.path().join("cache");
        assert_eq!(load(&cache), Outcome::Compiled);
        let stale = cache.join(format!("{TEMP_PREFIX}-1-0-0"));
        let fresh = cache.join(format!("{TEMP_PREFIX}-2-0-0"));
        let other = cache.join("notes");
        for path in [&stale, &fresh, &other] {
            std::fs::write(path, b"x").unwrap();
        }
        let old = std::time::SystemTime::now() - STALE_AFTER - Duration::from_secs(60);
        for path in [&stale, &other] {
            File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        // A hit reads only its entry; the next write sweeps.
        assert_eq!(load(&cache), Outcome::Hit);
        assert!(stale.exists(), "a hit leaves the folder alone");
        std::fs::remove_file(entry(&cache)).unwrap();
        assert_eq!(load(&cache), Outcome::Compiled);
        assert!(!stale.exists(), "a killed writer's file is removed");
        assert!(fresh.exists(), "a write in progress is left alone");
        assert!(other.exists(), "only temporary files are removed");
    }

    #[test]
    fn a_damaged_entry_is_compiled_again() {
        let root = root();
        let cache = root.path().join("cache");
        assert_eq!(load(&cache), Outcome::Compiled);
        std::fs::write(entry(&cache), b"not a compiled component").unwrap();
        assert_eq!(load(&cache), Outcome::Compiled);
        assert_eq!(load(&cache), Outcome::Hit);
    }
}
