// The Node.js entry of the render-store package: everything of core.mjs (the component,
// MemoryBucket, traces), and FolderBucket, the file:// layout on a local folder, which
// needs node:fs.

import { closeSync, constants as fsConstants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, realpathSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BucketError, checkKey, compareKeys, messages, parseKeyring } from './core.mjs';

export * from './core.mjs';

/** The largest keyring file read, as the Rust host reads it. */
const MAX_KEYRING_FILE = 1 << 20;

/**
 * The keyring in the keyring file at `path` (CONTRACT.md, Encryption at rest), with the
 * Rust host's checks: a regular file (links followed, as a Kubernetes Secret volume
 * needs), owned by this user or root, readable by its owner alone (0600 or 0400), at
 * most 1 MiB; parsed by the component (parseKeyring). Throws an Error naming the file.
 */
export function readKeyringFile(path) {
  const fd = openSync(path, O.O_RDONLY | (O.O_NONBLOCK ?? 0) | (O.O_NOCTTY ?? 0));
  try {
    const st = fstatSync(fd);
    const refuse = (why) => new Error(`the keyring file ${path} ${why}`);
    if (!st.isFile()) throw refuse('is not a regular file');
    const me = typeof process.geteuid === 'function' ? process.geteuid() : st.uid;
    if (st.uid !== me && st.uid !== 0) throw refuse(`is owned by user ${st.uid}, not by this user (${me}) or root: whoever owns it chooses what it holds`);
    if ((st.mode & 0o077) !== 0) {
      throw refuse(`has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}: others can read or write it; make it readable by its owner alone (chmod 600; in Kubernetes, defaultMode: 0400)`);
    }
    if (st.size > MAX_KEYRING_FILE) throw refuse(`is ${st.size} bytes, over the ${MAX_KEYRING_FILE} it may hold`);
    return parseKeyring(readFileSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** An integer as JSON holds it: a number when it is safe, else a bigint. */
const jsInteger = (big) => (Number.isSafeInteger(Number(big)) ? Number(big) : big);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }); // a name's leading U+FEFF is part of it
const O = fsConstants;
const DIR_FLAGS = O.O_RDONLY | (O.O_DIRECTORY ?? 0) | (O.O_NOFOLLOW ?? 0);
/** Where a descriptor's folder can be named as a path (Linux): `/proc/self/fd/N/name`
 *  then resolves `name` inside that very folder, as openat(2) does. Elsewhere each
 *  folder is reached by its path, every component checked on the way. */
const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : null;
/** A name that is not part of a key: Unicode control characters (Rust's char::is_control). */
const CONTROL_CHAR = /\p{Cc}/u;
/** Separates a key's file name from the staging suffix of its writer. */
const STAGING_MARK = '#';

/** A key's components, or `denied` naming the key (the rule of every bucket). */
const components = checkKey;

function crossesLink(key, component) {
  return new BucketError('denied', messages.crossesLink(key, component));
}

function notPlainFile(key) {
  return new BucketError('denied', messages.notPlainFile(key));
}

function io(call, key, e) {
  return new BucketError('failed', messages.backend(call, key, e?.message ?? String(e)));
}

/** A file's modification time (stat with bigint: true) as {seconds, nanoseconds}. */
function mtimeOf(st) {
  const billion = 1_000_000_000n;
  let seconds = st.mtimeNs / billion;
  let nanoseconds = st.mtimeNs % billion;
  if (nanoseconds < 0n) {
    nanoseconds += billion;
    seconds -= 1n;
  }
  return { seconds: jsInteger(seconds), nanoseconds: Number(nanoseconds) };
}

/**
 * A bucket in a folder, with the layout and rules of the Rust host's file:// store
 * (host/render-store/src/bucket/folder.rs): key `a/b/c` is the file ROOT/a/b/c. Nothing beneath the
 * root is reached through a symbolic link: every folder is opened one component at a
 * time with O_NOFOLLOW | O_DIRECTORY from its parent's descriptor (through
 * /proc/self/fd on Linux), and files with O_NOFOLLOW; a key that crosses a link is
 * denied, naming the key. Folders are created 0700 and files 0600. A put writes the
 * staging file `<name>#<pid>.<n>` (created exclusively) and renames it over the key;
 * staging files are listed like any other file (GC leaves them alone, delete-release
 * removes them), and a key holding `#` cannot be put. A listing reports each object's
 * size and modification time, and leaves out (with a warning, once per entry) files that
 * cannot be keys: FIFOs, sockets and devices, and names that are not UTF-8 or hold
 * control characters. Inside the prefix it lists, a symbolic link, a file or FIFO where
 * the prefix needs a folder, or a folder this user cannot read fails the listing with
 * `denied` naming it (fail closed: GC and delete-release decide from listings); a folder
 * that does not exist lists as empty. A delete removes the folders it leaves empty.
 */
export class FolderBucket {
  #root;
  #staging = 0;
  #reported = new Set();

  /** `folder`: a path or a file:// URL; it must exist unless `createDir` (then it is
   *  made, 0700). `warn(message)`: where left-out entries are reported (console.warn). */
  constructor(folder, { createDir = false, warn = (m) => console.warn(m) } = {}) {
    let dir = folder instanceof URL || /^file:/i.test(String(folder)) ? fileURLToPath(folder) : String(folder);
    if (!isAbsolute(dir)) dir = resolve(dir);
    if (createDir) mkdirSync(dir, { recursive: true, mode: 0o700 });
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      // reported below
    }
    if (!isDir) throw new Error(`directory ${dir} does not exist; create it or pass {createDir: true}`);
    /** The root is the operator's choice and may be reached through links; nothing beneath it is. */
    this.root = realpathSync(dir);
    this.#root = openSync(this.root, O.O_RDONLY | (O.O_DIRECTORY ?? 0));
    this.warn = warn;
  }

  /** Closes the root's descriptor; the bucket cannot be used after. */
  close() {
    if (this.#root !== null) closeSync(this.#root);
    this.#root = null;
  }

  /** The path of `name` inside the opened folder `dir` ({fd, path}). */
  #at(dir, name) {
    return PROC_FD ? `${PROC_FD}/${dir.fd}/${name}` : join(dir.path, name);
  }

  #close(chain) {
    for (const dir of chain.slice(1)) closeSync(dir.fd);
  }

  /**
   * Opens the folders `dirs` one by one from the root, never following a link; with
   * `create`, makes the missing ones (0700). Returns {chain} (every folder opened, the
   * root first: close it with #close), {missing: true}, {link: component, at, isLink}
   * (`dirs[at]` is a link, or not a folder) or {unreadable: component, at, error} (this
   * user may not open it); throws any other I/O error as is.
   */
  #walk(dirs, create) {
    if (this.#root === null) throw new Error('the FolderBucket was closed');
    const chain = [{ fd: this.#root, path: this.root }];
    try {
      for (const name of dirs) {
        const here = chain.at(-1);
        const target = this.#at(here, name);
        let fd;
        try {
          fd = openSync(target, DIR_FLAGS);
        } catch (e) {
          if (e.code !== 'ENOENT' || !create) throw e;
          try {
            mkdirSync(target, { mode: 0o700 });
          } catch (m) {
            if (m.code !== 'EEXIST') throw m;
          }
          fd = openSync(target, DIR_FLAGS);
        }
        chain.push({ fd, path: join(here.path, name) });
      }
      return { chain };
    } catch (e) {
      const at = chain.length - 1;
      try {
        if (e.code === 'ENOENT') return { missing: true };
        if (e.code === 'ELOOP' || e.code === 'ENOTDIR') {
          return { link: dirs[at], at, isLink: e.code === 'ELOOP' || this.#isLink(chain.at(-1), dirs[at]) };
        }
        if (e.code === 'EACCES' || e.code === 'EPERM') return { unreadable: dirs[at], at, error: e };
        throw e;
      } finally {
        this.#close(chain);
      }
    }
  }

  /** Whether `name` in the opened folder `dir` is a symbolic link (not followed). */
  #isLink(dir, name) {
    try {
      return lstatSync(this.#at(dir, name), { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
    } catch {
      return false;
    }
  }

  /** The opened folders down to a key's folder and the key's file name; null when a
   *  folder on the way is missing. */
  #parent(call, key, create) {
    const parts = components(key);
    const name = parts.pop();
    let walked;
    try {
      walked = this.#walk(parts, create);
    } catch (e) {
      throw io(call, key, e);
    }
    if (walked.missing) return null;
    if (walked.link !== undefined) throw crossesLink(key, walked.link);
    if (walked.unreadable !== undefined) throw io(call, key, walked.error);
    return { chain: walked.chain, name };
  }

  get(key) {
    const parent = this.#parent('get', key, false);
    if (parent === null) throw new BucketError('not-found', `${key} does not exist`);
    const { chain, name } = parent;
    try {
      let fd;
      try {
        // NONBLOCK: opening a FIFO planted at a key must not hang the call.
        fd = openSync(this.#at(chain.at(-1), name), O.O_RDONLY | (O.O_NOFOLLOW ?? 0) | (O.O_NONBLOCK ?? 0));
      } catch (e) {
        if (e.code === 'ENOENT') throw new BucketError('not-found', `${key} does not exist`);
        if (e.code === 'ELOOP') throw crossesLink(key, name);
        throw io('get', key, e);
      }
      try {
        if (!fstatSync(fd).isFile()) throw notPlainFile(key);
        return readFileSync(fd);
      } catch (e) {
        throw e instanceof BucketError ? e : io('get', key, e);
      } finally {
        closeSync(fd);
      }
    } finally {
      this.#close(chain);
    }
  }

  put(key, value) {
    if (key.includes(STAGING_MARK)) {
      throw new BucketError('denied', messages.stagingMark(key));
    }
    // A concurrent delete may remove a folder this walk opened (it removes the folders
    // it leaves empty): then the staging file cannot be created, and the walk is made again.
    for (let attempt = 1; ; attempt += 1) {
      const parent = this.#parent('put', key, true);
      if (parent === null) throw io('put', key, new Error('a folder on the way disappeared'));
      const { chain, name } = parent;
      try {
        const dir = chain.at(-1);
        const staging = this.#at(dir, `${name}${STAGING_MARK}${process.pid}.${this.#staging++}`);
        let fd;
        try {
          fd = openSync(staging, O.O_WRONLY | O.O_CREAT | O.O_EXCL | (O.O_NOFOLLOW ?? 0), 0o600);
        } catch (e) {
          if (e.code === 'ENOENT' && attempt < 3) continue;
          throw io('put', key, e);
        }
        try {
          try {
            for (let off = 0; off < value.length; ) off += writeSync(fd, value, off);
          } finally {
            closeSync(fd);
          }
          // rename replaces a link at the key itself, never what it points to.
          renameSync(staging, this.#at(dir, name));
        } catch (e) {
          try {
            unlinkSync(staging);
          } catch {
            // already renamed, or gone
          }
          throw io('put', key, e);
        }
        return;
      } finally {
        this.#close(chain);
      }
    }
  }

  exists(key) {
    const parent = this.#parent('exists', key, false);
    if (parent === null) return null;
    const { chain, name } = parent;
    try {
      let st;
      try {
        st = lstatSync(this.#at(chain.at(-1), name), { bigint: true, throwIfNoEntry: false });
      } catch (e) {
        throw io('exists', key, e);
      }
      if (st === undefined) return null;
      if (st.isFile()) return jsInteger(st.size);
      if (st.isSymbolicLink()) throw crossesLink(key, name);
      // A folder made by a deeper key is not a key (as in the Rust FolderBucket and
      // every object store).
      if (st.isDirectory()) return null;
      throw notPlainFile(key);
    } finally {
      this.#close(chain);
    }
  }

  delete(key) {
    const dirs = components(key);
    const name = dirs.pop();
    let walked;
    try {
      walked = this.#walk(dirs, false);
    } catch (e) {
      throw io('delete', key, e);
    }
    if (walked.missing) return;
    if (walked.link !== undefined) throw crossesLink(key, walked.link);
    if (walked.unreadable !== undefined) throw io('delete', key, walked.error);
    const { chain } = walked;
    try {
      // unlink removes a link itself, never its target; a folder is refused.
      try {
        unlinkSync(this.#at(chain.at(-1), name));
      } catch (e) {
        if (e.code === 'EISDIR' || (e.code === 'EPERM' && lstatSync(this.#at(chain.at(-1), name), { throwIfNoEntry: false })?.isDirectory())) {
          throw new BucketError('denied', messages.folderNotBlob(key));
        }
        if (e.code !== 'ENOENT') throw io('delete', key, e);
      }
      // Folders left empty go too, deepest first, so a deleted release leaves no trace;
      // a folder that is not empty (or already gone) ends the climb.
      for (let i = dirs.length - 1; i >= 0; i -= 1) {
        try {
          rmdirSync(this.#at(chain[i], dirs[i]));
        } catch {
          break;
        }
      }
    } finally {
      this.#close(chain);
    }
  }

  list(prefix) {
    // Walk to the deepest folder the prefix names whole; filter by the string prefix.
    // What the walk will not enter inside the prefix (a link, a non-folder where a folder
    // must be, a folder this user cannot read) fails the whole listing: an answer without
    // what lies beyond it would read as "not there" to GC and delete-release, which would
    // then delete what it still refers to.
    const slash = prefix.lastIndexOf('/');
    const dirPart = slash < 0 ? '' : prefix.slice(0, slash);
    const dirs = dirPart === '' ? [] : components(dirPart);
    const refused = (path, why) => new BucketError('denied', messages.unwalkable(prefix, path, messages.UNWALKABLE[why]));
    let walked;
    try {
      walked = this.#walk(dirs, false);
    } catch (e) {
      throw io('list', prefix, e);
    }
    if (walked.missing) return [];
    if (walked.link !== undefined) throw refused(dirs.slice(0, walked.at + 1).join('/'), walked.isLink ? 'link' : 'notFolder');
    if (walked.unreadable !== undefined) throw refused(dirs.slice(0, walked.at + 1).join('/'), 'unreadable');
    const start = walked.chain.pop();
    this.#close(walked.chain);
    const listed = [];
    // An explicit stack: depth is bounded by the file system, not by the JS stack.
    const pending = [{ dir: start, folder: dirPart, owned: start.fd !== this.#root }];
    try {
      while (pending.length > 0) {
        const { dir, folder, owned } = pending.pop();
        const base = folder === '' ? '' : `${folder}/`;
        try {
          let names;
          try {
            names = readdirSync(PROC_FD ? `${PROC_FD}/${dir.fd}` : dir.path, { encoding: 'buffer' });
          } catch (e) {
            if (e.code === 'EACCES' || e.code === 'EPERM') throw refused(folder, 'unreadable');
            throw io('list', prefix, e);
          }
          for (const raw of names) {
            let name;
            try {
              name = utf8.decode(raw);
            } catch {
              name = null;
            }
            if (name === null || CONTROL_CHAR.test(name)) {
              this.#report(Buffer.concat([Buffer.from(base), raw]), messages.LEFT_OUT.oddName);
              continue;
            }
            const key = `${base}${name}`;
            if (!key.startsWith(prefix) && !prefix.startsWith(`${key}/`)) continue;
            let st;
            try {
              // Deleted since the folder was read: left out.
              st = lstatSync(this.#at(dir, name), { bigint: true, throwIfNoEntry: false });
            } catch (e) {
              // A folder that can be read but not searched.
              if (e.code === 'EACCES' || e.code === 'EPERM') throw refused(folder, 'unreadable');
              throw io('list', key, e);
            }
            if (st === undefined) continue;
            if (st.isFile()) {
              if (key.startsWith(prefix)) listed.push({ key, size: jsInteger(st.size), modified: mtimeOf(st) });
            } else if (st.isDirectory()) {
              let fd;
              try {
                fd = openSync(this.#at(dir, name), DIR_FLAGS);
              } catch (e) {
                if (e.code === 'ENOENT') continue;
                // Swapped for a link or a file since the stat: never followed.
                if (e.code === 'ELOOP' || e.code === 'ENOTDIR') throw refused(key, e.code === 'ELOOP' || this.#isLink(dir, name) ? 'link' : 'notFolder');
                if (e.code === 'EACCES' || e.code === 'EPERM') throw refused(key, 'unreadable');
                throw io('list', key, e);
              }
              pending.push({ dir: { fd, path: join(dir.path, name) }, folder: key, owned: true });
            } else if (st.isSymbolicLink()) {
              // Whatever it points to: a link named like an entry may be that entry, moved.
              throw refused(key, 'link');
            } else {
              this.#report(key, messages.LEFT_OUT.notPlainFile);
            }
          }
        } finally {
          if (owned) closeSync(dir.fd);
        }
      }
    } finally {
      for (const { dir, owned } of pending) if (owned) closeSync(dir.fd);
    }
    return listed.sort((a, b) => compareKeys(a.key, b.key));
  }

  /** Reports, once per bucket, an entry a listing left out (its path, a string or
   *  bytes, quoted in the line, so a name cannot forge a line). */
  #report(path, why) {
    const line = messages.leftOut(path, why);
    if (this.#reported.has(line)) return;
    this.#reported.add(line);
    this.warn(`render-store FolderBucket ${this.root}: ${line}`);
  }
}

