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
// returns the object's size (a non-negative integer, number or bigint) or null/undefined
// when it is absent; list returns every object whose key starts with the prefix, as
// {key, size, modified: {seconds, nanoseconds}} (modified by the bucket's clock), in
// lexical byte order of the keys. A BucketError thrown by a bucket becomes the same
// bucket-error variant (not-found, denied(message), failed(message)); anything else
// thrown, or a wrong answer (a Promise, a boolean from exists, …), becomes
// failed(message). The component then reports a `bucket` error (or `not-found` for a
// missing render). MemoryBucket and FolderBucket below follow the contract of
// host/render-store/src/bucket/ (the Rust ObjectStoreBucket over object_store's InMemory, and the
// Rust FolderBucket of file://).

import { closeSync, constants as fsConstants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, realpathSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
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
// Messages

/** A text quoted as a JSON string, the quoting of every key, prefix or file name in a
 *  message (wit/render-store.wit, bucket-error): `"`, `\` and U+0000 to U+001F escaped,
 *  everything else as it is, byte for byte as serde_json and Python's
 *  json.dumps(ensure_ascii=False) quote it. A lone surrogate, which a JS string can hold
 *  but a key from the component never does, comes out as `\udXXX`. */
const quote = (text) => JSON.stringify(text);

/**
 * Every message this host gives the component in a bucket-error, and the line it logs
 * for an entry a file:// listing leaves out, worded as wit/render-store.wit specifies
 * them (the Rust host's render_store::bucket::messages, the Python host's Messages):
 * tests/vectors/messages.json holds the same words for all three.
 */
export const messages = Object.freeze({
  quote,
  /** denied: a bucket call from a call that was given no bucket (the pure logic). */
  NO_BUCKET: 'this call has no bucket',
  /** denied: `key` does not start with the prefix of the release being served. */
  outsidePrefix: (key, prefix) => `key ${quote(key)} lies outside ${quote(prefix)}, the prefix of the release being served`,
  /** denied: `key` is not a clean `/`-separated path. */
  invalidKey: (key) => `${quote(key)} is not a valid object key (empty, \`.\` or \`..\` components, or control characters)`,
  /** denied: a put or delete (`call`) on a read-only bucket. */
  readOnly: (call, key) => `${call} ${quote(key)}: this bucket is read-only`,
  /** failed: a get of an object over the call's memory cap (the Rust host's; this host
   *  does not bound reads). */
  tooLarge: (key, size, limit) => `get ${quote(key)}: the object is ${size} bytes, over the call's memory cap of ${limit} bytes; raise the cap (--memory-cap-mib) if the object is legitimate`,
  /** failed: the backend failed `call`; `description` is its own text. */
  backend: (call, key, description) => `${call} ${quote(key)}: ${description}`,
  /** denied (file://): a folder on the way to `key`, `component`, is a link or a file. */
  crossesLink: (key, component) => `key ${quote(key)} crosses ${quote(component)}, which is a symbolic link or not a folder; a file:// store never follows links: remove it`,
  /** denied (file://): `key` names a FIFO, a socket or a device. */
  notPlainFile: (key) => `${quote(key)} is not a regular file; a file:// store keeps blobs in plain files only`,
  /** denied (file://): a put of a key holding `#`, which marks staging files. */
  stagingMark: (key) => `${quote(key)} holds "#", which a file:// store reserves for staging files`,
  /** denied (file://): a delete of a key that names a folder. */
  folderNotBlob: (key) => `${quote(key)} is a folder, not a blob`,
  /** Why a file:// listing left an entry out (the `why` of leftOut). */
  LEFT_OUT: Object.freeze({
    link: 'a symbolic link',
    linkOrFile: 'a symbolic link or not a folder',
    notPlainFile: 'not a regular file',
    oddName: 'a name that is not UTF-8 or holds control characters',
  }),
  /** The path a listing left out, quoted: a string, or bytes that need not be UTF-8
   *  (each invalid sequence becomes U+FFFD, as TextDecoder, Rust's from_utf8_lossy and
   *  Python's "replace" decode). */
  entry: (path) => quote(typeof path === 'string' ? path : Buffer.from(path).toString('utf8')),
  /** The path a listing left out when the folder `dir` it names crosses `component`. */
  entryAt: (dir, component) => `${quote(dir)} (at ${quote(component)})`,
  /** The log line (after the host's own lead-in) for an entry a listing left out. */
  leftOut: (entry, why) => `left out of listings: ${entry} is ${why}; a file:// store never follows links or lists what is not a plain file with a clean name`,
});

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
    if (prefix === null) ans = denied(messages.NO_BUCKET);
    else if (!key.startsWith(prefix)) {
      ans = denied(messages.outsidePrefix(key, prefix));
    } else ans = answer(call, key, value);
    if (record) record(call, key, value, ans);
    if (ans.error) {
      const { kind, message } = ans.error;
      throw { payload: kind === 'not-found' ? { tag: kind } : { tag: kind, val: message } };
    }
    return witAnswer(call, ans.ok);
  };
  const functions = Object.fromEntries(CALLS.map((call) => [call, fn(call)]));
  // jco 1.35 reads the unversioned name; its .d.ts documents the versioned one.
  return { [BUCKET_INTERFACE]: functions, [BUCKET_INTERFACE.replace(/@.*$/, '')]: functions };
}

/** An answer's `ok` value (the TRACES.md shape, bytes unencoded) as the component takes it:
 *  sizes and times as bigints, none as undefined. */
function witAnswer(call, ok) {
  switch (call) {
    case 'exists':
      return ok === null ? undefined : BigInt(ok);
    case 'list':
      return ok.map((o) => ({ key: o.key, size: BigInt(o.size), modified: { seconds: BigInt(o.modified.seconds), nanoseconds: o.modified.nanoseconds } }));
    case 'put':
    case 'delete':
      return undefined;
    default:
      return ok;
  }
}

const U64_MAX = (1n << 64n) - 1n;
/** An integer as JSON holds it: a number when it is safe, else a bigint. */
const jsInteger = (big) => (Number.isSafeInteger(Number(big)) ? Number(big) : big);

/** A u64 (number or bigint) as jsInteger gives it, or undefined if `v` is not one. */
function asU64(v) {
  let big;
  if (typeof v === 'bigint') big = v;
  else if (Number.isInteger(v)) big = BigInt(v);
  else return undefined;
  return big >= 0n && big <= U64_MAX ? jsInteger(big) : undefined;
}

/** An instant {seconds (s64), nanoseconds (< 10^9)} as {seconds, nanoseconds} numbers
 *  (seconds a bigint beyond 2^53), or undefined if `t` is not one. */
function asInstant(t) {
  if (t === null || typeof t !== 'object') return undefined;
  const { seconds, nanoseconds } = t;
  let big;
  if (typeof seconds === 'bigint') big = seconds;
  else if (Number.isInteger(seconds)) big = BigInt(seconds);
  else return undefined;
  if (big !== BigInt.asIntN(64, big)) return undefined;
  const ns = typeof nanoseconds === 'bigint' ? Number(nanoseconds) : nanoseconds;
  if (!Number.isInteger(ns) || ns < 0 || ns >= 1e9) return undefined;
  return { seconds: jsInteger(big), nanoseconds: ns };
}

/** A listing entry {key, size, modified} normalized, or undefined if `o` is not one. */
function asObjectMeta(o) {
  if (o === null || typeof o !== 'object' || typeof o.key !== 'string') return undefined;
  const size = asU64(o.size);
  const modified = asInstant(o.modified);
  if (size === undefined || modified === undefined) return undefined;
  return { key: o.key, size, modified };
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
    case 'exists': {
      if (got === undefined || got === null) return { ok: null };
      const size = asU64(got);
      return size === undefined ? failed(`the bucket's exists returned ${typeof got} ${String(got)}, not a size or null`) : { ok: size };
    }
    case 'list': {
      const listed = Array.isArray(got) ? got.map(asObjectMeta) : [undefined];
      if (listed.includes(undefined)) return failed("the bucket's list did not return an array of {key, size, modified: {seconds, nanoseconds}}");
      return { ok: listed };
    }
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
    recentRenders: [...p.recentRenders],
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
/**
 * The difference between two canonical renders (logic.diff-renders); changed objects'
 * lines in `form`: 'yaml' (as `kubectl get -o yaml` shows objects) or 'json'.
 */
export const diffRenders = (oldRender, newRender, form = 'yaml') => {
  const a = bytes(oldRender, 'old');
  const b = bytes(newRender, 'new');
  if (form !== 'yaml' && form !== 'json') {
    throw new RenderStoreError('invalid-input', `form ${JSON.stringify(form)}: expected 'yaml' or 'json'`);
  }
  return logicCall((l) => l.diffRenders(a, b, form));
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
    call: (s, r, a) => s.gc(r, a.keep, a.protected, a.dryRun, a.now, a.graceSeconds),
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

/** Stores a render unless its blob exists with the canonical size (a torn or truncated
 *  blob is written again); returns its renderRef. */
export const putRender = (bucket, release, objects) => storeCall(bucket, 'put-render', release, { objects: objectList(objects) });
/** The verified canonical bytes of a stored render. */
export const getRender = (bucket, release, ref) => storeCall(bucket, 'get-render', release, { renderRef: String(ref) });
/** Whether a history entry records the render. */
export const hasHistoryRef = (bucket, release, ref) => storeCall(bucket, 'has-history-ref', release, { renderRef: String(ref) });
/** Appends {renderRef, syncedAt: {seconds, nanoseconds}, summary} unless the render is recorded; returns whether it was added. */
export const recordHistory = (bucket, release, entry) => storeCall(bucket, 'record-history', release, { entry: witEntry(entry) });
/** The history, oldest first: [{key, renderRef, syncedAt: {seconds, nanoseconds}, summary}]. */
export const listHistory = (bucket, release) => storeCall(bucket, 'list-history', release, {});
/** GC's default grace period, as the Rust host's (`--grace 10m`): no render blob written
 *  less than this many seconds ago is deleted. */
export const GC_GRACE_SECONDS = 600;

/** This machine's clock as a sync-time {seconds, nanoseconds}. */
export function now() {
  const ms = Date.now();
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanoseconds: (ms - seconds * 1000) * 1_000_000 };
}

/** A u64 argument as the component takes it (a bigint). */
function u64(value, what) {
  const v = asU64(value);
  if (v === undefined) throw new TypeError(`${what}: expected an integer from 0 to 2^64 - 1`);
  return BigInt(v);
}

/**
 * Garbage collection; returns the plan {deleteHistory, keepHistory, deleteRenders,
 * keepRenders, ignored, recentRenders}. `options.graceSeconds` (default
 * GC_GRACE_SECONDS; 0: none) keeps every unreferenced blob modified less than that long
 * before `options.now` (default: this machine's clock, now()) and lists it in
 * recentRenders.
 */
export const gc = (bucket, release, keep, protectedRefs = [], dryRun = false, options = {}) => {
  const { now: at = now(), graceSeconds = GC_GRACE_SECONDS } = options ?? {};
  if (asInstant(at) === undefined) throw new TypeError('now: expected {seconds, nanoseconds}: integers, nanoseconds below 10^9');
  const t = witTime(at, 'now');
  return storeCall(bucket, 'gc', release, {
    keep: s64(keep, 'keep'),
    protected: stringList(protectedRefs, 'protected'),
    dryRun: Boolean(dryRun),
    now: t,
    graceSeconds: u64(graceSeconds, 'graceSeconds'),
  });
};
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
  if (!valid) throw new BucketError('denied', messages.invalidKey(key));
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

/** A bucket in memory (the Rust host's mem://): each object keeps its bytes and the time
 *  `clock()` ({seconds, nanoseconds}; default this machine's clock) gave at its put. */
export class MemoryBucket {
  constructor({ clock = now } = {}) {
    /** key → Uint8Array */
    this.objects = new Map();
    /** key → {seconds, nanoseconds}: when it was put (an object set in `objects` directly
     *  lists as modified at 1970-01-01T00:00:00Z). */
    this.modified = new Map();
    this.clock = clock;
  }

  get(key) {
    checkKey(key);
    const value = this.objects.get(key);
    if (value === undefined) throw new BucketError('not-found', `${key} does not exist`);
    return value.slice();
  }

  put(key, value) {
    checkKey(key);
    const at = asInstant(this.clock());
    if (at === undefined) throw new BucketError('failed', messages.backend('put', key, "the bucket's clock did not give {seconds, nanoseconds}"));
    this.objects.set(key, Uint8Array.from(value));
    this.modified.set(key, at);
  }

  exists(key) {
    checkKey(key);
    const value = this.objects.get(key);
    return value === undefined ? null : value.length;
  }

  list(prefix) {
    listParent(prefix);
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort(byBytes).map((key) => ({
      key,
      size: this.objects.get(key).length,
      modified: { ...(this.modified.get(key) ?? { seconds: 0, nanoseconds: 0 }) },
    }));
  }

  delete(key) {
    checkKey(key);
    this.objects.delete(key);
    this.modified.delete(key);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
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

/** A key's components, or `denied` naming the key (the Rust FolderBucket's check). */
function components(key) {
  const parts = key.split('/');
  const clean = key !== '' && parts.every((p) => p !== '' && p !== '.' && p !== '..' && !CONTROL_CHAR.test(p));
  if (!clean) {
    throw new BucketError('denied', messages.invalidKey(key));
  }
  return parts;
}

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
 * size and modification time, and leaves out (with a warning, once per entry) symbolic
 * links, what is not a plain file, and names that are not UTF-8 or hold control
 * characters. A delete removes the folders it leaves empty.
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
   * root first: close it with #close), {missing: true} or {link: component}; throws
   * an I/O error as is.
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
      this.#close(chain);
      if (e.code === 'ENOENT') return { missing: true };
      if (e.code === 'ELOOP' || e.code === 'ENOTDIR') return { link: dirs[chain.length - 1] };
      throw e;
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
    const slash = prefix.lastIndexOf('/');
    const dirPart = slash < 0 ? '' : prefix.slice(0, slash);
    const dirs = dirPart === '' ? [] : components(dirPart);
    let walked;
    try {
      walked = this.#walk(dirs, false);
    } catch (e) {
      throw io('list', prefix, e);
    }
    if (walked.missing) return [];
    if (walked.link !== undefined) {
      this.#report(messages.entryAt(dirPart, walked.link), messages.LEFT_OUT.linkOrFile);
      return [];
    }
    const start = walked.chain.pop();
    this.#close(walked.chain);
    const listed = [];
    // An explicit stack: depth is bounded by the file system, not by the JS stack.
    const pending = [{ dir: start, base: dirPart === '' ? '' : `${dirPart}/`, owned: start.fd !== this.#root }];
    try {
      while (pending.length > 0) {
        const { dir, base, owned } = pending.pop();
        try {
          let names;
          try {
            names = readdirSync(PROC_FD ? `${PROC_FD}/${dir.fd}` : dir.path, { encoding: 'buffer' });
          } catch (e) {
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
              this.#report(messages.entry(Buffer.concat([Buffer.from(base), raw])), messages.LEFT_OUT.oddName);
              continue;
            }
            const key = `${base}${name}`;
            if (!key.startsWith(prefix) && !prefix.startsWith(`${key}/`)) continue;
            let st;
            try {
              // Deleted since the folder was read: left out.
              st = lstatSync(this.#at(dir, name), { bigint: true, throwIfNoEntry: false });
            } catch (e) {
              throw io('list', key, e);
            }
            if (st === undefined) continue;
            if (st.isFile()) {
              if (key.startsWith(prefix)) listed.push({ key, size: jsInteger(st.size), modified: mtimeOf(st) });
            } else if (st.isDirectory()) {
              try {
                const fd = openSync(this.#at(dir, name), DIR_FLAGS);
                pending.push({ dir: { fd, path: join(dir.path, name) }, base: `${key}/`, owned: true });
              } catch (e) {
                // Swapped for a link since the stat: never followed.
                if (e.code === 'ELOOP' || e.code === 'ENOTDIR') this.#report(messages.entry(key), messages.LEFT_OUT.link);
                else if (e.code !== 'ENOENT') throw io('list', key, e);
              }
            } else if (st.isSymbolicLink()) {
              this.#report(messages.entry(key), messages.LEFT_OUT.link);
            } else {
              this.#report(messages.entry(key), messages.LEFT_OUT.notPlainFile);
            }
          }
        } finally {
          if (owned) closeSync(dir.fd);
        }
      }
    } finally {
      for (const { dir, owned } of pending) if (owned) closeSync(dir.fd);
    }
    return listed.sort((a, b) => byBytes(a.key, b.key));
  }

  /** Reports, once per bucket, an entry (messages.entry or entryAt: quoted, so a name
   *  cannot forge a line) a listing left out. */
  #report(entry, why) {
    if (this.#reported.has(entry)) return;
    this.#reported.add(entry);
    this.warn(`render-store FolderBucket ${this.root}: ${messages.leftOut(entry, why)}`);
  }
}

// ---------------------------------------------------------------------------------------
// Traces (TRACES.md, format version 2)

/** The trace format version this host reads (TRACES.md). */
export const TRACE_VERSION = 2;

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

/** Checks one recorded answer against the call's answer shape (TRACES.md) and returns it
 *  as a trace line holds it, without fields TRACES.md does not define. */
function checkAnswer(call, answer, line) {
  if (!isObject(answer) || ('ok' in answer) === ('error' in answer)) throw traceError(line, '"answer" must have exactly one of "ok" and "error"');
  if ('error' in answer) {
    const e = answer.error;
    if (!isObject(e) || !BUCKET_ERROR_KINDS.has(e.kind)) throw traceError(line, 'a bucket error has kind not-found, denied or failed');
    if (e.kind !== 'not-found' && typeof e.message !== 'string') throw traceError(line, `a ${e.kind} error needs a message`);
    return { error: e.kind === 'not-found' ? { kind: e.kind } : { kind: e.kind, message: e.message } };
  }
  const ok = answer.ok;
  const wrong = () => traceError(line, `${JSON.stringify(ok, (_, v) => (typeof v === 'bigint' ? Number(v) : v))} is not an answer to ${call}: see TRACES.md for each call's answer`);
  switch (call) {
    case 'get':
      if (!isBase64(ok)) throw wrong();
      return { ok };
    case 'put':
    case 'delete':
      if (ok !== null) throw wrong();
      return { ok: null };
    case 'exists': {
      if (ok === null) return { ok: null };
      const size = asU64(ok);
      if (size === undefined) throw wrong();
      return { ok: size };
    }
    default: {
      if (!Array.isArray(ok)) throw traceError(line, "a list's answer must be an array of objects");
      return {
        ok: ok.map((o) => {
          const meta = asObjectMeta(o);
          if (meta === undefined) {
            throw traceError(line, 'an object of a listing must be {"key": string, "size": 64-bit unsigned integer, "modified": {"seconds": 64-bit integer, "nanoseconds": integer below 1000000000}}');
          }
          return meta;
        }),
      };
    }
  }
}

/** {seconds, nanoseconds} of a trace line, checked as the Rust reader checks a time. */
function traceTime(v, what, line) {
  if (!isObject(v)) throw traceError(line, `${what} must be a JSON object`);
  if (!('seconds' in v)) throw traceError(line, 'field "seconds" is missing');
  if (!('nanoseconds' in v)) throw traceError(line, 'field "nanoseconds" is missing');
  const t = asInstant({ seconds: v.seconds, nanoseconds: 0 });
  if (t === undefined) throw traceError(line, '"seconds" must be a 64-bit integer');
  if (!Number.isInteger(v.nanoseconds) || v.nanoseconds < 0 || v.nanoseconds >= 1e9) throw traceError(line, '"nanoseconds" must be an integer below 1000000000');
  return { seconds: v.seconds, nanoseconds: v.nanoseconds };
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
      const syncedAt = traceTime(e.syncedAt, '"syncedAt"', 1);
      return { release, args: { entry: witEntry({ ...e, syncedAt }) } };
    }
    case 'gc': {
      need(Array.isArray(a.protected) && a.protected.every((r) => typeof r === 'string'), '"protected" must be an array of strings');
      need(typeof a.dryRun === 'boolean', '"dryRun" must be true or false');
      need('now' in a, 'field "now" is missing');
      const now = witTime(traceTime(a.now, '"now"', 1), 'now');
      need('graceSeconds' in a, 'field "graceSeconds" is missing');
      const grace = asU64(a.graceSeconds);
      need(grace !== undefined, '"graceSeconds" must be a 64-bit unsigned integer');
      return {
        release,
        args: { keep: s64(int(a.keep, '"keep"'), 'keep'), protected: a.protected, dryRun: a.dryRun, now, graceSeconds: BigInt(grace) },
      };
    }
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
  if (header.version !== TRACE_VERSION) {
    const version = header.version === undefined ? 'null' : JSON.stringify(header.version, (_, v) => (typeof v === 'bigint' ? Number(v) : v));
    throw traceError(lines[0].line, `trace version ${version} is not supported: this build reads version ${TRACE_VERSION}`);
  }
  const { release, args } = traceArguments(header.operation, header.arguments);
  if (lines.length < 2) throw traceError(lines[0].line, 'the trace ends after its header: the result line is missing');
  const calls = lines.slice(1, -1).map((l) => {
    const c = parse(l, false);
    if (!isObject(c) || !CALLS.includes(c.call) || typeof c.key !== 'string') throw traceError(l.line, 'a call line needs "call" (get, put, exists, list or delete) and "key"');
    if ((c.call === 'put') !== ('value' in c)) throw traceError(l.line, 'a put, and only a put, has a "value"');
    if ('value' in c && !isBase64(c.value)) throw traceError(l.line, 'the value must be standard base64');
    const answer = checkAnswer(c.call, c.answer, l.line);
    return c.call === 'put' ? { call: c.call, key: c.key, value: c.value, answer } : { call: c.call, key: c.key, answer };
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
