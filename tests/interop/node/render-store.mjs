// The Node.js host of the render-store component (wit/render-store.wit,
// convoy:render-store@0.1.0), transpiled by jco into ./generated/js (run `node build.mjs`).
//
// Every render-store decision comes from the component: canonical JSON, hashing, keys,
// history, GC and diff. This module only gives the component a bucket, scopes it to the
// release being served (as the Rust host's CallState/Scope does), converts values, and
// replays traces (TRACES.md). Like the Rust host, it runs each call in a fresh instance
// (the compiled core modules are shared).
//
// Errors. An export's `error` variant becomes a RenderStoreError:
//
//   WIT error variant               RenderStoreError
//   invalid-input(msg)              kind 'invalid-input',  message msg
//   invalid-object({index, msg})    kind 'invalid-object', message msg, index (from 0)
//   not-found(msg)                  kind 'not-found',      message msg
//   corrupt(msg)                    kind 'corrupt',        message msg
//   bucket(msg)                     kind 'bucket',         message msg
//   (a trap: the guest failed)      kind 'trap',           message "the render-store component was stopped: …"
//
// `message` is the component's text as is (the Rust CLI prints it after a prefix such as
// "invalid input: "). Arguments of the wrong JS type throw a TypeError before any call.
//
// Buckets are synchronous objects with get/put/exists/list/delete (the component model
// call is synchronous): get returns the bytes (a Uint8Array) or throws
// BucketError('not-found') (returning undefined/null also means not found); exists
// returns a boolean; list returns every key starting with the prefix. A BucketError
// thrown by a bucket becomes the same bucket-error variant (not-found, denied(message),
// failed(message)); anything else thrown, or a wrong answer (a Promise, a non-boolean
// from exists, …), becomes failed(message). The component then reports a `bucket` error
// (or `not-found` for a missing render). MemoryBucket and FolderBucket below follow the
// contract of host/src/bucket/ (the Rust ObjectStoreBucket over object_store's InMemory
// and LocalFileSystem).

import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readdirSync, realpathSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

let instantiate;
try {
  ({ instantiate } = await import('./generated/js/render-store.js'));
} catch (e) {
  throw new Error(`render-store.mjs: the transpiled component is missing; run \`node build.mjs\` (or run.sh) first (${e.message})`);
}

const BUCKET_INTERFACE = 'convoy:render-store/bucket@0.1.0';
const ERROR_KINDS = new Set(['invalid-input', 'invalid-object', 'not-found', 'corrupt', 'bucket']);
const BUCKET_ERROR_KINDS = new Set(['not-found', 'denied', 'failed']);
const CALLS = ['get', 'put', 'exists', 'list', 'delete'];

// ---------------------------------------------------------------------------------------
// Errors

/** An error of a render-store call: the component's `error` variant, or a trap. */
export class RenderStoreError extends Error {
  constructor(kind, message, { index, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RenderStoreError';
    /** 'invalid-input' | 'invalid-object' | 'not-found' | 'corrupt' | 'bucket' | 'trap' */
    this.kind = kind;
    /** For 'invalid-object': the position of the bad object, from 0. */
    if (index !== undefined) this.index = index;
  }
}

/** What a bucket throws to answer a WIT bucket-error: 'not-found', 'denied' or 'failed'. */
export class BucketError extends Error {
  constructor(kind, message = kind) {
    if (!BUCKET_ERROR_KINDS.has(kind)) throw new TypeError(`bucket error kind ${JSON.stringify(kind)}: expected not-found, denied or failed`);
    super(message);
    this.name = 'BucketError';
    this.kind = kind;
  }
}

function fromWitError(e) {
  const payload = e !== null && typeof e === 'object' ? e.payload : undefined;
  if (payload && ERROR_KINDS.has(payload.tag)) {
    if (payload.tag === 'invalid-object') {
      return new RenderStoreError('invalid-object', payload.val.message, { index: payload.val.index });
    }
    return new RenderStoreError(payload.tag, payload.val);
  }
  return new RenderStoreError('trap', `the render-store component was stopped: ${e?.message ?? String(e)}`, { cause: e });
}

// ---------------------------------------------------------------------------------------
// Instances

const coreModules = new Map();
function getCoreModule(path) {
  let module = coreModules.get(path);
  if (!module) {
    module = new WebAssembly.Module(readFileSync(new URL(`./generated/js/${path}`, import.meta.url)));
    coreModules.set(path, module);
  }
  return module;
}

/** Rust's `{:?}` of a string, for messages that must read as the Rust host's do. */
export function rustDebug(text) {
  let out = '"';
  for (const ch of text) {
    switch (ch) {
      case '\0': out += '\\0'; break;
      case '\t': out += '\\t'; break;
      case '\r': out += '\\r'; break;
      case '\n': out += '\\n'; break;
      case '\\': out += '\\\\'; break;
      case '"': out += '\\"'; break;
      default:
        // char::escape_debug: grapheme extenders and what Rust deems unprintable
        // (categories Zs but ' ', Zl, Zp, Cc, Cf, Cs, Co, Cn) become \u{…}.
        out += ch !== ' ' && /[\p{Zs}\p{Zl}\p{Zp}\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Grapheme_Extend}]/u.test(ch)
          ? `\\u{${ch.codePointAt(0).toString(16)}}`
          : ch;
    }
  }
  return `${out}"`;
}

/** The answer a bucket call gets, before it is given to the component:
 *  {ok: value} or {error: {kind, message?}} (the TRACES.md shape, with bytes unencoded). */
function denied(message) {
  return { error: { kind: 'denied', message } };
}

/**
 * The import object of one call: the bucket functions, scoped to `prefix` (null: no
 * bucket). `answer(call, key, value)` gives the answer of a call inside the scope;
 * `record(call, key, value, answer)`, if given, sees every call with the answer the
 * component gets.
 */
function bucketImports(prefix, answer, record) {
  const fn = (call) => (key, value) => {
    let ans;
    if (prefix === null) ans = denied('this call has no bucket');
    else if (!key.startsWith(prefix)) {
      ans = denied(`key ${rustDebug(key)} lies outside ${rustDebug(prefix)}, the prefix of the release being served`);
    } else ans = answer(call, key, value);
    if (record) record(call, key, value, ans);
    if (ans.error) {
      const { kind, message } = ans.error;
      throw { payload: kind === 'not-found' ? { tag: kind } : { tag: kind, val: message } };
    }
    return call === 'put' || call === 'delete' ? undefined : ans.ok;
  };
  const functions = Object.fromEntries(CALLS.map((call) => [call, fn(call)]));
  // jco 1.35 reads the unversioned name; its .d.ts documents the versioned one.
  return { [BUCKET_INTERFACE]: functions, [BUCKET_INTERFACE.replace(/@.*$/, '')]: functions };
}

/** Asks a JS bucket, turning whatever it does into an answer. */
function askBucket(bucket, call, key, value) {
  const failed = (message) => ({ error: { kind: 'failed', message } });
  let got;
  try {
    if (typeof bucket?.[call] !== 'function') return failed(`the bucket has no ${call} method`);
    got = call === 'put' ? bucket.put(key, value) : bucket[call](key);
  } catch (e) {
    if (e instanceof BucketError) {
      return { error: e.kind === 'not-found' ? { kind: 'not-found' } : { kind: e.kind, message: e.message } };
    }
    return failed(e instanceof Error ? e.message : String(e));
  }
  if (got !== null && (typeof got === 'object' || typeof got === 'function') && typeof got.then === 'function') {
    Promise.resolve(got).catch(() => {});
    return failed(`the bucket's ${call} returned a promise; a bucket must answer synchronously`);
  }
  switch (call) {
    case 'get':
      if (got === undefined || got === null) return { error: { kind: 'not-found' } };
      if (got instanceof Uint8Array) return { ok: got };
      if (got instanceof ArrayBuffer) return { ok: new Uint8Array(got) };
      return failed(`the bucket's get returned ${typeof got}, not bytes`);
    case 'exists':
      return typeof got === 'boolean' ? { ok: got } : failed(`the bucket's exists returned ${typeof got}, not a boolean`);
    case 'list':
      if (Array.isArray(got) && got.every((k) => typeof k === 'string')) return { ok: [...got] };
      return failed("the bucket's list did not return an array of strings");
    default:
      return { ok: null };
  }
}

// jco's glue probes `WebAssembly.promising` (JSPI) nine times per instantiation inside
// try/catch. Where it does not exist (Node 20), each probe throws "… is not a function",
// and V8 re-parses the glue's 5,000-line generator to word that message: 25 ms per
// instance. While instantiating, a stand-in that throws a ready error takes the same
// catch branch in microseconds; it is removed right after (instantiation is synchronous).
const NO_JSPI = new TypeError('WebAssembly.promising is not available');
function instantiateFast(imports) {
  if (typeof WebAssembly.promising === 'function') return instantiate(getCoreModule, imports);
  WebAssembly.promising = () => {
    throw NO_JSPI;
  };
  try {
    return instantiate(getCoreModule, imports);
  } finally {
    delete WebAssembly.promising;
  }
}

/** Runs `fn(exports)` in a fresh instance with `imports`; WIT errors become RenderStoreError. */
function inInstance(imports, fn) {
  const exports = instantiateFast(imports);
  try {
    return fn(exports);
  } catch (e) {
    throw fromWitError(e);
  }
}

const NO_BUCKET = bucketImports(null);
const logicCall = (fn) => inInstance(NO_BUCKET, (x) => fn(x.logic));

// ---------------------------------------------------------------------------------------
// Argument and result conversion (no logic: shapes only)

function bytes(value, what) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError(`${what}: expected a Uint8Array, an ArrayBuffer or a string`);
}

function objectList(objects) {
  if (!Array.isArray(objects)) throw new TypeError('objects: expected an array of JSON objects (bytes or strings)');
  return objects.map((o, i) => bytes(o, `objects[${i}]`));
}

function stringList(list, what) {
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) throw new TypeError(`${what}: expected an array of strings`);
  return list;
}

/** A release: {namespace, name} or "namespace/name". */
function witRelease(release) {
  if (typeof release === 'string') {
    const slash = release.indexOf('/');
    if (slash < 0) throw new TypeError(`release ${JSON.stringify(release)}: expected "namespace/name"`);
    return { namespace: release.slice(0, slash), name: release.slice(slash + 1) };
  }
  if (typeof release?.namespace !== 'string' || typeof release?.name !== 'string') {
    throw new TypeError('release: expected {namespace, name} (strings) or "namespace/name"');
  }
  return { namespace: release.namespace, name: release.name };
}

function s64(value, what) {
  let big;
  if (typeof value === 'bigint') big = value;
  else if (typeof value === 'number' && Number.isInteger(value)) big = BigInt(value);
  else throw new TypeError(`${what}: expected an integer`);
  if (big !== BigInt.asIntN(64, big)) throw new TypeError(`${what}: ${big} is outside the signed 64-bit range`);
  return big;
}

function witTime(t, what = 'syncedAt') {
  const ns = t?.nanoseconds ?? 0;
  if (!Number.isInteger(ns) || ns < 0 || ns > 0xffffffff) throw new TypeError(`${what}.nanoseconds: expected a u32`);
  return { seconds: s64(t?.seconds, `${what}.seconds`), nanoseconds: ns };
}

/** A WIT sync-time as JS: seconds as a number (a bigint beyond 2^53, which no key holds). */
function jsTime(t) {
  const n = Number(t.seconds);
  return { seconds: Number.isSafeInteger(n) ? n : t.seconds, nanoseconds: t.nanoseconds };
}

function jsEntry(e) {
  return { key: e.key, renderRef: e.renderRef, syncedAt: jsTime(e.syncedAt), summary: e.summary };
}

function jsPlan(p) {
  return {
    deleteHistory: [...p.deleteHistory],
    keepHistory: [...p.keepHistory],
    deleteRenders: [...p.deleteRenders],
    keepRenders: [...p.keepRenders],
    ignored: [...p.ignored],
  };
}

function witEntry(entry) {
  if (typeof entry?.renderRef !== 'string') throw new TypeError('entry.renderRef: expected a string');
  const summary = entry.summary ?? '';
  if (typeof summary !== 'string') throw new TypeError('entry.summary: expected a string');
  return { renderRef: entry.renderRef, syncedAt: witTime(entry.syncedAt, 'entry.syncedAt'), summary };
}

// ---------------------------------------------------------------------------------------
// The logic export

/** The canonical bytes of a render (one object's JSON per element: bytes or string). */
export const canonical = (objects) => {
  const list = objectList(objects);
  return logicCall((l) => l.canonical(list));
};
/** `sha256:` and the hex SHA-256 of the canonical bytes. */
export const renderRef = (objects) => {
  const list = objectList(objects);
  return logicCall((l) => l.renderRef(list));
};
export const validateRenderRef = (ref) => logicCall((l) => l.validateRenderRef(String(ref)));
export const sha256Hex = (data) => {
  const b = bytes(data, 'bytes');
  return logicCall((l) => l.sha256Hex(b));
};
export const releasePrefix = (release) => {
  const r = witRelease(release);
  return logicCall((l) => l.releasePrefix(r));
};
export const renderKey = (release, ref) => {
  const r = witRelease(release);
  return logicCall((l) => l.renderKey(r, String(ref)));
};
export const historyKey = (release, syncedAt, ref) => {
  const r = witRelease(release);
  const t = witTime(syncedAt);
  return logicCall((l) => l.historyKey(r, t, String(ref)));
};
/** {render: ref} | {history: {syncedAt, renderRef}} | undefined (not a key of the release). */
export const parseKey = (release, key) => {
  const r = witRelease(release);
  const parsed = logicCall((l) => l.parseKey(r, String(key)));
  if (parsed === undefined) return undefined;
  return parsed.tag === 'render'
    ? { render: parsed.val }
    : { history: { syncedAt: jsTime(parsed.val.syncedAt), renderRef: parsed.val.renderRef } };
};
export const formatKeyTime = (t) => {
  const w = witTime(t, 'time');
  return logicCall((l) => l.formatKeyTime(w));
};
export const parseKeyTime = (text) => jsTime(logicCall((l) => l.parseKeyTime(String(text))));
export const formatSyncedAt = (t) => {
  const w = witTime(t, 'time');
  return logicCall((l) => l.formatSyncedAt(w));
};
export const parseSyncedAt = (text) => jsTime(logicCall((l) => l.parseSyncedAt(String(text))));
/** The GC decision from listings alone (logic.plan-gc). */
export const planGc = (release, keep, historyKeys, renderKeys, protectedRefs = []) => {
  const args = [
    witRelease(release),
    s64(keep, 'keep'),
    stringList(historyKeys, 'historyKeys'),
    stringList(renderKeys, 'renderKeys'),
    stringList(protectedRefs, 'protected'),
  ];
  return jsPlan(logicCall((l) => l.planGc(...args)));
};
/** The difference between two canonical renders (logic.diff-renders). */
export const diffRenders = (oldRender, newRender) => {
  const a = bytes(oldRender, 'old');
  const b = bytes(newRender, 'new');
  return logicCall((l) => l.diffRenders(a, b));
};

// ---------------------------------------------------------------------------------------
// The store export

/**
 * The store operations, by their WIT names: how to turn JS arguments into WIT ones, call
 * the export, and shape the value (`js`) and its TRACES.md result (`trace`).
 */
const OPERATIONS = {
  'put-render': {
    call: (s, r, a) => s.putRender(r, a.objects),
    js: (v) => v,
    trace: (v) => ({ renderRef: v }),
  },
  'get-render': {
    call: (s, r, a) => s.getRender(r, a.renderRef),
    js: (v) => v,
    trace: (v) => ({ render: Buffer.from(v).toString('base64') }),
  },
  'has-history-ref': {
    call: (s, r, a) => s.hasHistoryRef(r, a.renderRef),
    js: (v) => v,
    trace: (v) => ({ recorded: v }),
  },
  'record-history': {
    call: (s, r, a) => s.recordHistory(r, a.entry),
    js: (v) => v,
    trace: (v) => ({ added: v }),
  },
  'list-history': {
    call: (s, r) => s.listHistory(r),
    js: (v) => v.map(jsEntry),
    trace: (v) => ({ entries: v }),
  },
  gc: {
    call: (s, r, a) => s.gc(r, a.keep, a.protected, a.dryRun),
    js: jsPlan,
    trace: (v) => v,
  },
  'delete-release': {
    call: (s, r) => s.deleteRelease(r),
    js: (v) => v,
    trace: (v) => ({ deleted: v }),
  },
};

/** The bucket scope of a release: `<namespace>/<name>/` from the names as given (the
 *  component rejects invalid names before any bucket call). */
const scopeOf = (r) => `${r.namespace}/${r.name}/`;

function runOperation(operation, release, args, answer, record) {
  const op = OPERATIONS[operation];
  const imports = bucketImports(scopeOf(release), answer, record);
  return op.js(inInstance(imports, (x) => op.call(x.store, release, args)));
}

function storeCall(bucket, operation, release, args) {
  return runOperation(operation, witRelease(release), args, (call, key, value) => askBucket(bucket, call, key, value));
}

/** Stores a render unless its blob exists; returns its renderRef. */
export const putRender = (bucket, release, objects) => storeCall(bucket, 'put-render', release, { objects: objectList(objects) });
/** The verified canonical bytes of a stored render. */
export const getRender = (bucket, release, ref) => storeCall(bucket, 'get-render', release, { renderRef: String(ref) });
/** Whether a history entry records the render. */
export const hasHistoryRef = (bucket, release, ref) => storeCall(bucket, 'has-history-ref', release, { renderRef: String(ref) });
/** Appends {renderRef, syncedAt: {seconds, nanoseconds}, summary} unless the render is recorded; returns whether it was added. */
export const recordHistory = (bucket, release, entry) => storeCall(bucket, 'record-history', release, { entry: witEntry(entry) });
/** The history, oldest first: [{key, renderRef, syncedAt: {seconds, nanoseconds}, summary}]. */
export const listHistory = (bucket, release) => storeCall(bucket, 'list-history', release, {});
/** Garbage collection; returns the plan {deleteHistory, keepHistory, deleteRenders, keepRenders, ignored}. */
export const gc = (bucket, release, keep, protectedRefs = [], dryRun = false) => storeCall(bucket, 'gc', release, {
  keep: s64(keep, 'keep'),
  protected: stringList(protectedRefs, 'protected'),
  dryRun: Boolean(dryRun),
});
/** Deletes every key of the release; returns how many. */
export const deleteRelease = (bucket, release) => storeCall(bucket, 'delete-release', release, {});

/** The store operations bound to one bucket: store(bucket).putRender(release, objects), … */
export function store(bucket) {
  return {
    bucket,
    putRender: (...a) => putRender(bucket, ...a),
    getRender: (...a) => getRender(bucket, ...a),
    hasHistoryRef: (...a) => hasHistoryRef(bucket, ...a),
    recordHistory: (...a) => recordHistory(bucket, ...a),
    listHistory: (...a) => listHistory(bucket, ...a),
    gc: (...a) => gc(bucket, ...a),
    deleteRelease: (...a) => deleteRelease(bucket, ...a),
  };
}

/** The import functions a store call of `release` gets over `bucket`, scoped as every
 *  call is (exported for tests of the scope; the component itself never leaves it). */
export function scopedBucket(bucket, release) {
  return bucketImports(scopeOf(witRelease(release)), (call, key, value) => askBucket(bucket, call, key, value))[BUCKET_INTERFACE];
}

// ---------------------------------------------------------------------------------------
// Buckets

/** object_store's Path rules as the Rust ObjectStoreBucket applies them: no empty key, no
 *  leading or trailing `/`, no empty, `.` or `..` segment, no ASCII control character. */
function checkKey(key) {
  const valid = key !== '' && !key.startsWith('/') && !key.endsWith('/')
    && key.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && !/[\x00-\x1f\x7f]/.test(s));
  if (!valid) throw new BucketError('denied', `${rustDebug(key)} is not a valid object key`);
}

/** list(prefix) lists the segment-aligned parent of the prefix: it must be a valid key. */
function listParent(prefix) {
  const slash = prefix.lastIndexOf('/');
  if (slash < 0) return null;
  const parent = prefix.slice(0, slash);
  checkKey(parent);
  return parent;
}

const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** A bucket in memory (the Rust host's mem://). */
export class MemoryBucket {
  constructor() {
    /** key → Uint8Array */
    this.objects = new Map();
  }

  get(key) {
    checkKey(key);
    const value = this.objects.get(key);
    if (value === undefined) throw new BucketError('not-found', `${key} does not exist`);
    return value.slice();
  }

  put(key, value) {
    checkKey(key);
    this.objects.set(key, Uint8Array.from(value));
  }

  exists(key) {
    checkKey(key);
    return this.objects.has(key);
  }

  list(prefix) {
    listParent(prefix);
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort(byBytes);
  }

  delete(key) {
    checkKey(key);
    this.objects.delete(key);
  }
}

/** object_store's LocalFileSystem never lists, and refuses to address, a file whose name
 *  has `#` followed by digits only after its first `#`: its staged uploads (`name#1`). */
function isStagingName(name) {
  const hash = name.indexOf('#');
  return hash >= 0 && /^[0-9]+$/.test(name.slice(hash + 1));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A bucket in a folder, with the layout of the Rust host's file:// store (object_store's
 * LocalFileSystem, with automatic cleanup): key `a/b/c` is the file ROOT/a/b/c; a put
 * writes `ROOT/a/b/c#N` and renames it; listings skip such staging files and follow
 * symlinks; a delete removes the folders it leaves empty.
 */
export class FolderBucket {
  /** `folder`: a path or a file:// URL; it must exist unless `createDir`. */
  constructor(folder, { createDir = false } = {}) {
    let dir = folder instanceof URL || /^file:/i.test(String(folder)) ? fileURLToPath(folder) : String(folder);
    if (!isAbsolute(dir)) dir = resolve(dir);
    if (createDir) mkdirSync(dir, { recursive: true });
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      // reported below
    }
    if (!isDir) throw new Error(`directory ${dir} does not exist; create it or pass {createDir: true}`);
    this.root = realpathSync(dir);
  }

  #failed(call, key, e) {
    return new BucketError('failed', `${call} ${key}: ${e.message}`);
  }

  #path(call, key) {
    checkKey(key);
    if (isStagingName(key.slice(key.lastIndexOf('/') + 1))) {
      throw new BucketError('failed', `${call} ${key}: Generic LocalFileSystem error: Filenames containing trailing '/#\\d+/' are not supported: ${key}`);
    }
    return join(this.root, ...key.split('/'));
  }

  /** The open file of `key`, or null if it does not exist (a folder does not). */
  #open(call, key) {
    const path = this.#path(call, key);
    let fd;
    try {
      fd = openSync(path, 'r');
      if (fstatSync(fd).isDirectory()) {
        closeSync(fd);
        return null;
      }
      return fd;
    } catch (e) {
      if (fd !== undefined) closeSync(fd);
      if (e.code === 'ENOENT') return null;
      throw this.#failed(call, key, e);
    }
  }

  get(key) {
    const fd = this.#open('get', key);
    if (fd === null) throw new BucketError('not-found', `${key} does not exist`);
    try {
      return readFileSync(fd);
    } catch (e) {
      throw this.#failed('get', key, e);
    } finally {
      closeSync(fd);
    }
  }

  exists(key) {
    const fd = this.#open('exists', key);
    if (fd === null) return false;
    closeSync(fd);
    return true;
  }

  put(key, value) {
    const path = this.#path('put', key);
    let staging;
    try {
      let fd;
      for (let n = 1; fd === undefined; ) {
        staging = `${path}#${n}`;
        try {
          fd = openSync(staging, 'wx');
        } catch (e) {
          if (e.code === 'EEXIST') n += 1;
          else if (e.code === 'ENOENT') mkdirSync(dirname(path), { recursive: true });
          else throw e;
        }
      }
      try {
        for (let off = 0; off < value.length; ) off += writeSync(fd, value, off);
      } finally {
        closeSync(fd);
      }
      renameSync(staging, path);
    } catch (e) {
      if (staging !== undefined) {
        try {
          unlinkSync(staging);
        } catch {
          // already renamed or never created
        }
      }
      throw this.#failed('put', key, e);
    }
  }

  delete(key) {
    const path = this.#path('delete', key);
    try {
      unlinkSync(path);
    } catch (e) {
      if (e.code === 'ENOENT') return;
      throw this.#failed('delete', key, e);
    }
    for (let dir = dirname(path); dir !== this.root && dir.startsWith(this.root + sep); dir = dirname(dir)) {
      try {
        rmdirSync(dir);
      } catch {
        break;
      }
    }
  }

  list(prefix) {
    const parent = listParent(prefix);
    const start = parent === null ? this.root : join(this.root, ...parent.split('/'));
    const keys = [];
    const visit = (dir, rel, ancestors) => {
      let names;
      try {
        names = readdirSync(dir, { encoding: 'buffer' });
      } catch (e) {
        if (e.code === 'ENOENT' || (e.code === 'ENOTDIR' && rel === parent)) return;
        throw this.#failed('list', prefix, e);
      }
      for (const raw of names) {
        let name;
        try {
          name = utf8.decode(raw);
        } catch {
          throw new BucketError('failed', `list ${prefix}: a file name under ${dir} is not UTF-8`);
        }
        const path = join(dir, name);
        const key = rel === null ? name : `${rel}/${name}`;
        let st;
        try {
          st = statSync(path); // follows symlinks; a broken one is left out
        } catch (e) {
          if (e.code === 'ENOENT') continue;
          throw this.#failed('list', prefix, e);
        }
        if (st.isDirectory()) {
          const id = `${st.dev}:${st.ino}`;
          if (ancestors.has(id)) throw new BucketError('failed', `list ${prefix}: symlink loop at ${path}`);
          visit(path, key, new Set(ancestors).add(id));
        } else if (st.isFile() && !isStagingName(name)) {
          if (/[\x00-\x1f\x7f]/.test(name)) throw new BucketError('failed', `list ${prefix}: file name ${rustDebug(name)} is not a valid object key`);
          keys.push(key);
        }
      }
    };
    let rootStat;
    try {
      rootStat = statSync(start);
    } catch (e) {
      if (e.code === 'ENOENT') return [];
      throw this.#failed('list', prefix, e);
    }
    if (!rootStat.isDirectory()) return [];
    visit(start, parent, new Set([`${rootStat.dev}:${rootStat.ino}`]));
    return keys.filter((k) => k.startsWith(prefix)).sort(byBytes);
  }
}

// ---------------------------------------------------------------------------------------
// Traces (TRACES.md, format version 1)

const MARK = '\u0000\u0001int\u0001';

/** JSON.parse that keeps integers beyond 2^53 exact (as bigint), for keep and seconds. */
function parseJsonExact(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      const token = m ? m[0] : c;
      out += m && !m[1] && !m[2] && !Number.isSafeInteger(Number(token)) ? JSON.stringify(MARK + token) : token;
      i += token.length;
    } else {
      out += c;
      i += 1;
    }
  }
  return JSON.parse(out, (_, v) => (typeof v === 'string' && v.startsWith(MARK) ? BigInt(v.slice(MARK.length)) : v));
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
/** Standard base64 with padding, canonical (what re-encoding the bytes gives back). */
const isBase64 = (s) => typeof s === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0
  && Buffer.from(s, 'base64').toString('base64') === s;

function traceError(line, message) {
  return new Error(`trace line ${line}: ${message}`);
}

/** Checks one recorded answer against the call's answer shape. */
function checkAnswer(call, answer, line) {
  if (!isObject(answer) || ('ok' in answer) === ('error' in answer)) throw traceError(line, '"answer" must have exactly one of "ok" and "error"');
  if ('error' in answer) {
    const e = answer.error;
    if (!isObject(e) || !BUCKET_ERROR_KINDS.has(e.kind)) throw traceError(line, 'a bucket error has kind not-found, denied or failed');
    if (e.kind !== 'not-found' && typeof e.message !== 'string') throw traceError(line, `a ${e.kind} error needs a message`);
    return;
  }
  const ok = answer.ok;
  const good = {
    get: () => isBase64(ok),
    put: () => ok === null,
    delete: () => ok === null,
    exists: () => typeof ok === 'boolean',
    list: () => Array.isArray(ok) && ok.every((k) => typeof k === 'string'),
  }[call]();
  if (!good) throw traceError(line, `${JSON.stringify(ok)} is not an answer to ${call}`);
}

/** The operation's WIT arguments from the header's `arguments`. */
function traceArguments(operation, a) {
  const need = (cond, what) => {
    if (!cond) throw traceError(1, what);
  };
  need(isObject(a), '"arguments" must be a JSON object');
  need(isObject(a.release) && typeof a.release.namespace === 'string' && typeof a.release.name === 'string', '"release" must be {"namespace": …, "name": …}');
  const release = witRelease(a.release);
  const int = (v, what) => {
    need(typeof v === 'bigint' || Number.isInteger(v), `${what} must be an integer`);
    return v;
  };
  switch (operation) {
    case 'put-render':
      need(Array.isArray(a.objects) && a.objects.every(isBase64), '"objects" must be an array of standard base64 strings');
      return { release, args: { objects: a.objects.map((o) => new Uint8Array(Buffer.from(o, 'base64'))) } };
    case 'get-render':
    case 'has-history-ref':
      need(typeof a.renderRef === 'string', '"renderRef" must be a string');
      return { release, args: { renderRef: a.renderRef } };
    case 'record-history': {
      const e = a.entry;
      need(isObject(e) && typeof e.renderRef === 'string' && typeof e.summary === 'string' && isObject(e.syncedAt), '"entry" must be {"renderRef", "syncedAt", "summary"}');
      int(e.syncedAt.seconds, '"seconds"');
      int(e.syncedAt.nanoseconds, '"nanoseconds"');
      return { release, args: { entry: witEntry(e) } };
    }
    case 'gc':
      need(Array.isArray(a.protected) && a.protected.every((r) => typeof r === 'string'), '"protected" must be an array of strings');
      need(typeof a.dryRun === 'boolean', '"dryRun" must be true or false');
      return { release, args: { keep: s64(int(a.keep, '"keep"'), 'keep'), protected: a.protected, dryRun: a.dryRun } };
    case 'list-history':
    case 'delete-release':
      return { release, args: {} };
    default:
      throw traceError(1, `unknown operation ${JSON.stringify(operation)}`);
  }
}

/** Parses a trace (blank lines are skipped): {operation, release, args, calls, result};
 *  throws an Error naming the line on anything TRACES.md does not allow. */
export function parseTrace(text) {
  const lines = String(text).split('\n')
    .map((l, i) => ({ text: l.replace(/\r$/, ''), line: i + 1 }))
    .filter((l) => l.text.trim() !== '');
  if (lines.length === 0) throw traceError(1, 'the trace is empty');
  const parse = ({ text: l, line }, exact) => {
    try {
      return exact ? parseJsonExact(l) : JSON.parse(l);
    } catch (e) {
      throw traceError(line, `not JSON: ${e.message}`);
    }
  };
  const header = parse(lines[0], true);
  if (!isObject(header) || header.format !== 'render-store-trace') throw traceError(lines[0].line, 'not a render-store trace: the first line must have "format":"render-store-trace"');
  if (header.version !== 1) throw traceError(lines[0].line, `trace version ${JSON.stringify(header.version)} is not supported: this host reads version 1`);
  const { release, args } = traceArguments(header.operation, header.arguments);
  if (lines.length < 2) throw traceError(lines[0].line, 'the trace ends after its header: the result line is missing');
  const calls = lines.slice(1, -1).map((l) => {
    const c = parse(l, false);
    if (!isObject(c) || !CALLS.includes(c.call) || typeof c.key !== 'string') throw traceError(l.line, 'a call line needs "call" (get, put, exists, list or delete) and "key"');
    if ((c.call === 'put') !== ('value' in c)) throw traceError(l.line, 'a put, and only a put, has a "value"');
    if ('value' in c && !isBase64(c.value)) throw traceError(l.line, 'the value must be standard base64');
    checkAnswer(c.call, c.answer, l.line);
    return c.call === 'put' ? { call: c.call, key: c.key, value: c.value, answer: c.answer } : { call: c.call, key: c.key, answer: c.answer };
  });
  const last = lines.at(-1);
  const end = parse(last, false);
  const result = isObject(end) ? end.result : undefined;
  if (!isObject(result) || ('ok' in result) === ('error' in result)) throw traceError(last.line, 'the last line must be the result: {"result": {"ok": …} or {"error": …}}');
  if ('error' in result && (!isObject(result.error) || typeof result.error.kind !== 'string')) throw traceError(last.line, 'a result error needs a "kind"');
  return { operation: header.operation, release, args, calls, result };
}

/** The answer of a call as a trace records it. */
function traceAnswer(call, ans) {
  if (ans.error) return { error: ans.error.kind === 'not-found' ? { kind: 'not-found' } : { kind: ans.error.kind, message: ans.error.message } };
  if (call === 'get') return { ok: Buffer.from(ans.ok).toString('base64') };
  if (call === 'put' || call === 'delete') return { ok: null };
  return { ok: ans.ok };
}

/** A recorded answer as the component is given it. */
function liveAnswer(call, answer) {
  if (answer.error) return { error: answer.error };
  return { ok: call === 'get' ? new Uint8Array(Buffer.from(answer.ok, 'base64')) : answer.ok };
}

/** JSON with keys sorted, to compare values whatever their key order. */
function stable(v) {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(',')}}`;
  return JSON.stringify(typeof v === 'bigint' ? Number(v) : v);
}

function sameResult(recorded, replayed) {
  if (recorded.error?.kind === 'trap' || replayed.error?.kind === 'trap') {
    return recorded.error?.kind === replayed.error?.kind;
  }
  return stable(recorded) === stable(replayed);
}

/**
 * Replays a trace (TRACES.md): runs its operation in a fresh instance whose bucket answers
 * from the trace and performs nothing, then compares. Returns the report in the shape of
 * `render-store replay --json`: {operation, matches, firstDifference, resultMatches,
 * calls, result}. `firstDifference` is null or {position (from 1), recorded, replayed}:
 * the first differing call as trace call lines (null on the side that has no call
 * there); `result` is the replayed result ({ok: …} or {error: …}); `calls` counts the
 * replayed calls; `matches` is true when no call differs and the result matches.
 */
export function replay(traceText) {
  const trace = parseTrace(traceText);
  const queues = new Map();
  for (const c of trace.calls) {
    const id = `${c.call}\n${c.key}`;
    if (!queues.has(id)) queues.set(id, { answers: [], next: 0 });
    queues.get(id).answers.push(c.answer);
  }
  // The recorded answer of the same call on the same key: the first not yet used, then
  // the last again; none: put and delete are ok, reads fail.
  const answer = (call, key) => {
    const q = queues.get(`${call}\n${key}`);
    if (!q) return call === 'put' || call === 'delete' ? { ok: null } : { error: { kind: 'failed', message: 'not in the trace' } };
    const recorded = q.answers[Math.min(q.next, q.answers.length - 1)];
    q.next += 1;
    return liveAnswer(call, recorded);
  };
  const calls = [];
  const record = (call, key, value, ans) => {
    const c = { call, key };
    if (call === 'put') c.value = Buffer.from(value).toString('base64');
    c.answer = traceAnswer(call, ans);
    calls.push(c);
  };
  const result = outcome(() => runOperation(trace.operation, trace.release, trace.args, answer, record), trace.operation);
  let firstDifference = null;
  for (let i = 0; i < Math.max(calls.length, trace.calls.length); i++) {
    const recorded = trace.calls[i] ?? null;
    const replayed = calls[i] ?? null;
    if (recorded === null || replayed === null || stable(recorded) !== stable(replayed)) {
      firstDifference = { position: i + 1, recorded, replayed };
      break;
    }
  }
  const resultMatches = sameResult(trace.result, result);
  return {
    operation: trace.operation,
    matches: firstDifference === null && resultMatches,
    firstDifference,
    resultMatches,
    calls: calls.length,
    result,
  };
}

/** An operation's result as a trace's result line holds it: {ok: …} or {error: …}. */
function outcome(run, operation) {
  try {
    return { ok: OPERATIONS[operation].trace(run()) };
  } catch (e) {
    if (!(e instanceof RenderStoreError)) throw e;
    return { error: e.kind === 'invalid-object' ? { kind: e.kind, index: e.index, message: e.message } : { kind: e.kind, message: e.message } };
  }
}
