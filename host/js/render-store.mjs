// The Node.js host of the render-store component (wit/render-store.wit,
// convoy:render-store@0.2.0), transpiled by jco into ./generated/js (run `node build.mjs`).
//
// Every render-store decision comes from the component: canonical JSON, hashing, keys,
// history, GC and diff. This module only gives the component a bucket, scopes it to the
// release being served (as the Rust host's CallState/Scope does), converts values, and
// records the bucket calls of traced operations (TRACES.md; the component writes,
// reads and replays traces). Like the Rust host, it runs each call in a fresh instance
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
//   invalid-yaml({stage, document,  kind 'invalid-yaml',   message msg, stage ('split' |
//     line, column, msg})                                  'yaml' | 'object'), document
//                                                          (from 0), line, column (from 1)
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

const BUCKET_INTERFACE = 'convoy:render-store/bucket@0.2.0';
const ERROR_KINDS = new Set(['invalid-input', 'invalid-object', 'not-found', 'corrupt', 'bucket', 'invalid-yaml']);
/** Where a YAML stream was rejected: the fields of the WIT `yaml-error` besides its message. */
const YAML_ERROR_FIELDS = ['stage', 'document', 'line', 'column'];
const BUCKET_ERROR_KINDS = new Set(['not-found', 'denied', 'failed']);
const CALLS = ['get', 'put', 'exists', 'list', 'delete'];

// ---------------------------------------------------------------------------------------
// Errors

/** An error of a render-store call: the component's `error` variant, or a trap. */
export class RenderStoreError extends Error {
  constructor(kind, message, { index, stage, document, line, column, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RenderStoreError';
    /** 'invalid-input' | 'invalid-object' | 'not-found' | 'corrupt' | 'bucket' |
     *  'invalid-yaml' | 'trap' */
    this.kind = kind;
    /** For 'invalid-object': the position of the bad object, from 0. */
    if (index !== undefined) this.index = index;
    // For 'invalid-yaml': the step that rejected the stream ('split', 'yaml' or
    // 'object'), the failing document's index from 0 (skipped documents counted), and
    // its line and column in the stream, from 1.
    if (stage !== undefined) Object.assign(this, { stage, document, line, column });
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
    if (payload.tag === 'invalid-yaml') {
      const where = Object.fromEntries(YAML_ERROR_FIELDS.map((f) => [f, payload.val[f]]));
      return new RenderStoreError('invalid-yaml', payload.val.message, where);
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
 * The objects of a multi-document Kubernetes YAML stream (bytes or a string), as a Go
 * controller reads it (CONTRACT.md §11): an array of Uint8Arrays, each one object's
 * compact JSON. A stream that is not a render throws RenderStoreError 'invalid-yaml'
 * naming the first failing document.
 */
export const yamlObjects = (yaml) => {
  const b = bytes(yaml, 'yaml');
  return logicCall((l) => l.yamlObjects(b));
};
/** The canonical bytes of a YAML stream's render: canonical(yamlObjects(yaml)) in one call. */
export const yamlCanonical = (yaml) => {
  const b = bytes(yaml, 'yaml');
  return logicCall((l) => l.yamlCanonical(b));
};
/** The renderRef of a YAML stream's render: renderRef(yamlObjects(yaml)) in one call. */
export const yamlRenderRef = (yaml) => {
  const b = bytes(yaml, 'yaml');
  return logicCall((l) => l.yamlRenderRef(b));
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
/**
 * Every object of a canonical render, in order (logic.show-objects): `{id, text}`, the
 * text in `form` ('yaml' or 'json'), as diffRenders writes a changed object.
 */
export const showObjects = (canonicalRender, form = 'yaml') => {
  const b = bytes(canonicalRender, 'render');
  if (form !== 'yaml' && form !== 'json') {
    throw new RenderStoreError('invalid-input', `form ${JSON.stringify(form)}: expected 'yaml' or 'json'`);
  }
  return logicCall((l) => l.showObjects(b, form));
};
/**
 * A release's history from one listing of `<prefix>history/` (logic.summarize-history):
 * `{entries, newest: {syncedAt, renderRef} | undefined}`; keys that are not the
 * release's entries are not counted.
 */
export const summarizeHistory = (release, historyKeys) => {
  const r = witRelease(release);
  const keys = stringList(historyKeys, 'historyKeys');
  const s = logicCall((l) => l.summarizeHistory(r, keys));
  const newest = s.newest === undefined ? undefined : { syncedAt: jsTime(s.newest.syncedAt), renderRef: s.newest.renderRef };
  return { entries: s.entries, newest };
};

// ---------------------------------------------------------------------------------------
// The store export

/**
 * The store operations, by their WIT names: how to turn JS arguments into WIT ones, call
 * the export, and shape the value (`js`).
 */
const OPERATIONS = {
  'put-render': {
    call: (s, r, a) => s.putRender(r, a.objects),
    js: (v) => v,
  },
  'get-render': {
    call: (s, r, a) => s.getRender(r, a.renderRef),
    js: (v) => v,
  },
  'has-history-ref': {
    call: (s, r, a) => s.hasHistoryRef(r, a.renderRef),
    js: (v) => v,
  },
  'record-history': {
    call: (s, r, a) => s.recordHistory(r, a.entry),
    js: (v) => v,
  },
  'list-history': {
    call: (s, r) => s.listHistory(r),
    js: (v) => v.map(jsEntry),
  },
  gc: {
    call: (s, r, a) => s.gc(r, a.keep, a.protected, a.dryRun, a.now, a.graceSeconds),
    js: jsPlan,
  },
  'delete-release': {
    call: (s, r) => s.deleteRelease(r),
    js: (v) => v,
  },
};

/** The bucket scope of a release: `<namespace>/<name>/` from the names as given (the
 *  component rejects invalid names before any bucket call). */
const scopeOf = (r) => `${r.namespace}/${r.name}/`;

/** An export's value as the component returns it. */
function runRaw(operation, release, args, answer, record) {
  const imports = bucketImports(scopeOf(release), answer, record);
  return inInstance(imports, (x) => OPERATIONS[operation].call(x.store, release, args));
}

function storeCall(bucket, operation, release, args) {
  const r = witRelease(release);
  if (recording !== null) return tracedStoreCall(bucket, operation, r, args);
  return OPERATIONS[operation].js(runRaw(operation, r, args, (call, key, value) => askBucket(bucket, call, key, value)));
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
// Traces (TRACES.md). Only a host sees the bucket calls, so this host records them; the
// component writes the trace, reads it back, replays it and words the report.

/** A recorded call as the WIT `trace.recorded-call` variant: the answer as the
 *  component got it. */
function witRecordedCall(call, key, value, ans) {
  const answer = ans.error
    ? { tag: 'err', val: ans.error.kind === 'not-found' ? { tag: 'not-found' } : { tag: ans.error.kind, val: ans.error.message } }
    : { tag: 'ok', val: witAnswer(call, ans.ok) };
  if (call === 'put') return { tag: call, val: { key, value: new Uint8Array(value), answer } };
  if (call === 'list') return { tag: call, val: { prefix: key, answer } };
  return { tag: call, val: { key, answer } };
}

/** The WIT `trace.operation` of a store call (arguments already in WIT form). */
function witOperation(operation, release, a) {
  switch (operation) {
    case 'put-render':
      return { tag: operation, val: { release, objects: a.objects } };
    case 'get-render':
    case 'has-history-ref':
      return { tag: operation, val: { release, renderRef: a.renderRef } };
    case 'record-history':
      return { tag: operation, val: { release, entry: a.entry } };
    case 'gc':
      return { tag: operation, val: { release, ...a } };
    default:
      return { tag: operation, val: release };
  }
}

/** The WIT `trace.outcome` of a store call that threw `e`. */
function witFailure(operation, e) {
  if (e.kind === 'trap') return { tag: 'trap', val: e.message };
  let val = { tag: e.kind, val: e.message };
  if (e.kind === 'invalid-object') val = { tag: e.kind, val: { index: e.index, message: e.message } };
  // (no store operation reads YAML; mapped all the same, so any error round-trips)
  if (e.kind === 'invalid-yaml') val = { tag: e.kind, val: { stage: e.stage, document: e.document, line: e.line, column: e.column, message: e.message } };
  return { tag: operation, val: { tag: 'err', val } };
}

/** While `record` runs: where each store call leaves its trace. */
let recording = null;

function tracedStoreCall(bucket, operation, release, args) {
  const calls = [];
  const log = (call, key, value, ans) => calls.push(witRecordedCall(call, key, value, ans));
  let raw;
  let failure;
  try {
    raw = runRaw(operation, release, args, (call, key, value) => askBucket(bucket, call, key, value), log);
  } catch (e) {
    if (!(e instanceof RenderStoreError)) throw e;
    failure = e;
  }
  const outcome = failure ? witFailure(operation, failure) : { tag: operation, val: { tag: 'ok', val: raw } };
  const trace = inInstance(NO_BUCKET, (x) => x.trace.writeTrace(witOperation(operation, release, args), calls, outcome));
  recording.push(trace);
  if (failure) throw failure;
  return OPERATIONS[operation].js(raw);
}

/**
 * Runs `fn`, which makes one store call (putRender, gc, …), and records it (TRACES.md):
 * returns {trace, value, error}: the trace text, what `fn` returned, or the
 * RenderStoreError the call threw (a failed operation is traced too).
 */
export function record(fn) {
  const previous = recording;
  const traces = [];
  recording = traces;
  let value;
  let error;
  try {
    value = fn();
  } catch (e) {
    error = e;
  } finally {
    recording = previous;
  }
  if (error !== undefined && !(error instanceof RenderStoreError)) throw error;
  if (traces.length !== 1) throw new Error(`record: ${traces.length} store calls were made; a trace records exactly one`);
  return { trace: traces[0], value, error };
}

/** A trace the component refused: `line` (from 1) and `message`. */
export class TraceError extends Error {
  constructor(line, message) {
    super(`trace line ${line}: ${message}`);
    this.name = 'TraceError';
    this.line = line;
  }
}

/**
 * Replays a trace in the component (TRACES.md, Replay): {matches, text, json}, `text` the
 * report for people (what `render-store replay` prints) and `json` the report as
 * `render-store replay --json` prints it. Throws a TraceError for a malformed trace, a
 * RenderStoreError of kind 'trap' when the replay itself was stopped.
 */
export function replayReport(traceText) {
  const exports = instantiateFast(NO_BUCKET);
  try {
    return exports.trace.replay(String(traceText));
  } catch (e) {
    const p = e?.payload;
    if (p && typeof p.line === 'number') throw new TraceError(p.line, p.message);
    throw fromWitError(e);
  }
}

/** The replay report as an object: {operation, matches, firstDifference, resultMatches,
 *  calls, result}, as `render-store replay --json` prints it. */
export const replay = (traceText) => JSON.parse(replayReport(traceText).json);
