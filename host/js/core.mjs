// The core of the JavaScript host of the render-store component (wit/render-store.wit,
// convoy:render-store@0.9.0): its main core module, run with the canonical ABI of
// ./abi.mjs (the module and its WIT types are written into ./generated/js by
// `node build.mjs`).
// It imports no Node.js built-in, so it runs in browsers too; render-store.mjs adds the
// Node-only FolderBucket.
//
// Every render-store decision comes from the component: canonical JSON, hashing, keys,
// history, GC and diff (Secret values masked in the views for people included). This
// module only gives the component a bucket, scopes it to the release being served (as
// the Rust host's CallState/Scope does), converts values, and records the bucket calls
// of traced operations (TRACES.md; the component writes, reads and replays traces).
// Like the Rust host, it runs each call in a fresh instance (the compiled core modules
// are shared; see "Instances" for how one is reused).
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
// Buckets are synchronous objects with get/put/exists/list/delete, and optionally
// deleteMany (the component model call is synchronous): get returns the bytes (a Uint8Array) or throws
// BucketError('not-found') (returning undefined/null also means not found); exists
// returns the object's size (a non-negative integer, number or bigint) or null/undefined
// when it is absent; list returns every object whose key starts with the prefix, as
// {key, size, modified: {seconds, nanoseconds}} (modified by the bucket's clock), in
// lexical byte order of the keys (compareKeys); deleteMany(keys), where a bucket has a
// batch request, returns one entry per key in order (undefined or null: deleted; a
// BucketError, returned rather than thrown: that key's error), and throws when the whole
// request failed; without it each key is a delete. A BucketError thrown by a bucket becomes the same
// bucket-error variant (not-found, denied(message), failed(message)); anything else
// thrown, or a wrong answer (a Promise, a boolean from exists, …), becomes
// failed(message). The component then reports a `bucket` error (or `not-found` for a
// missing render). MemoryBucket and FolderBucket below follow the contract of
// host/render-store/src/bucket/ (the Rust ObjectStoreBucket over object_store's InMemory, and the
// Rust FolderBucket of file://).


import { Component } from './abi.mjs';

// The functions of the WIT's exports that have no hand-written function here, generated
// from the WIT by render-store-bindgen (each one call of `_generatedApi` below).
export * from './api.generated.mjs';

let CORE_MODULE;
let WORLD;
let MUTABLE_GLOBALS;
try {
  ({ CORE_MODULE, WORLD, MUTABLE_GLOBALS } = await import('./generated/js/component.js'));
} catch (e) {
  throw new Error(`render-store: the built component is missing; run \`node build.mjs\` (or run.sh) first (${e.message})`);
}

const BUCKET_INTERFACE = 'convoy:render-store/bucket@0.9.0';
const ERROR_KINDS = new Set(['invalid-input', 'invalid-object', 'not-found', 'corrupt', 'bucket', 'invalid-yaml', 'encryption-key']);
/** Where a YAML stream was rejected: the fields of the WIT `yaml-error` besides its message. */
const YAML_ERROR_FIELDS = ['stage', 'document', 'line', 'column'];
const BUCKET_ERROR_KINDS = new Set(['not-found', 'denied', 'failed']);
const CALLS = ['get', 'put', 'exists', 'list', 'delete', 'delete-many'];

// ---------------------------------------------------------------------------------------
// Errors

/** An error of a render-store call: the component's `error` variant, or a trap. */
export class RenderStoreError extends Error {
  constructor(kind, message, { index, stage, document, line, column, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RenderStoreError';
    /** 'invalid-input' | 'invalid-object' | 'not-found' | 'corrupt' | 'bucket' |
     *  'invalid-yaml' | 'encryption-key' | 'trap' */
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

/** A bucket message worded by the component (logic.word-bucket-message), from the case
 *  that says which sentence and the parts that fill it in: the Rust host words its own
 *  with the same code, so no sentence is written here. */
const word = (tag, val) => logicCall((l) => l.wordBucketMessage(val === undefined ? { tag } : { tag, val }));

/** What a file:// listing met inside its prefix that it will not walk (the `why` of
 *  unwalkable), as the WIT enum names it. */
const UNWALKABLE = Object.freeze({ link: 'link', notFolder: 'not-folder', unreadable: 'unreadable' });

/** Why a file:// listing left an entry out (the `why` of leftOut), as the WIT enum names it. */
const LEFT_OUT = Object.freeze({ link: 'link', linkOrFile: 'link-or-file', notPlainFile: 'not-plain-file', oddName: 'odd-name' });

/**
 * Every message this host gives the component in a bucket-error, and the line it logs
 * for an entry a file:// listing leaves out, as wit/render-store.wit specifies them,
 * each worded by the component from its parts (tests/vectors/messages.json holds cases
 * the Rust host and this package check).
 */
export const messages = Object.freeze({
  quote,
  /** denied: a bucket call from a call that was given no bucket (the pure logic). */
  get NO_BUCKET() { return word('no-bucket'); },
  /** denied: `key` does not start with the prefix of the release being served. */
  outsidePrefix: (key, prefix) => word('outside-prefix', { key, prefix }),
  /** denied: `key` is not a clean `/`-separated path. */
  invalidKey: (key) => word('invalid-key', key),
  /** denied: a put or delete (`call`) on a read-only bucket. */
  readOnly: (call, key) => word('read-only', { call, key }),
  /** failed: a get of an object over the call's memory cap (the Rust host's; this host
   *  does not bound reads). */
  tooLarge: (key, size, limit) => word('too-large', { key, size: BigInt(size), limit: BigInt(limit) }),
  /** failed: the backend failed `call`; `description` is its own text. */
  backend: (call, key, description) => word('backend', { call, key, description: String(description) }),
  /** failed: a delete-many answered with another count of results than the keys sent. */
  miscounted: (first, answered, asked) => word('miscounted', { first, answered, asked }),
  /** denied (file://): a folder on the way to `key`, `component`, is a link or a file. */
  crossesLink: (key, component) => word('crosses-link', { key, component }),
  /** denied (file://): `key` names a FIFO, a socket or a device. */
  notPlainFile: (key) => word('not-plain-file', key),
  /** denied (file://): a put of a key holding `#`, which marks staging files. */
  stagingMark: (key) => word('staging-mark', key),
  /** denied (file://): a delete of a key that names a folder. */
  folderNotBlob: (key) => word('folder-not-blob', key),
  /** The `why` of unwalkable: link, notFolder or unreadable. */
  UNWALKABLE,
  /** denied (file://): a listing of `prefix` met `path` (the would-be key of what it met)
   *  inside it, which it will not walk (`why`, one of UNWALKABLE). The listing fails as a
   *  whole: an answer without what lies beyond `path` would read as "not there" to GC and
   *  delete-release. */
  unwalkable: (prefix, path, why) => word('unwalkable', { prefix, path, why }),
  /** The `why` of leftOut: link, linkOrFile, notPlainFile or oddName. */
  LEFT_OUT,
  /** The log line (after the host's own lead-in) for an entry a listing left out: `path`
   *  a string, or bytes that need not be UTF-8 (each invalid sequence shown as U+FFFD);
   *  with `at`, `path` is the folder a listed prefix names and `at` the part of it that
   *  is a link or a file. */
  leftOut: (path, why, at = undefined) => word('left-out', { path: data(path, 'path'), at, why }),
});

// ---------------------------------------------------------------------------------------
// Instances

// The main core module ships inside the package as base64 (generated/js/component.js),
// so nothing is read from disk or fetched: compiled once, asynchronously (browsers refuse
// to compile large modules synchronously on the main thread), when this module loads.
const component = new Component(await WebAssembly.compile(fromBase64(CORE_MODULE)), WORLD);

function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The answer a bucket call gets, before it is given to the component:
 *  {ok: value} or {error: {kind, message?}} (the TRACES.md shape, with bytes unencoded). */
function denied(message) {
  return { error: { kind: 'denied', message } };
}

/**
 * The bucket functions of one call, scoped to `prefix` (null: no bucket), under their
 * WIT names and the camelCase ones abi.mjs calls them by. `answer(call, key, value)` gives the answer of a call inside the scope;
 * `record(call, key, value, answer)`, if given, sees every call with the answer the
 * component gets.
 */
function bucketFunctions(prefix, answer, record) {
  // delete-many: each key outside the scope is denied alone, as its delete would be; the
  // others are asked for in one call.
  const many = (keys) => {
    const keyList = [...keys];
    const checks = keyList.map((key) => {
      if (prefix === null) return denied(messages.NO_BUCKET);
      return key.startsWith(prefix) ? null : denied(messages.outsidePrefix(key, prefix));
    });
    const inside = keyList.filter((_, i) => checks[i] === null);
    let ans = inside.length === 0 ? { ok: [] } : answer('delete-many', inside);
    if (ans.ok && ans.ok.length !== inside.length) {
      ans = { error: { kind: 'failed', message: messages.miscounted(inside[0], ans.ok.length, inside.length) } };
    }
    if (ans.ok) {
      const each = ans.ok[Symbol.iterator]();
      ans = { ok: checks.map((c) => c ?? each.next().value) };
    }
    if (record) record('delete-many', keyList, undefined, ans);
    if (ans.error) {
      const { kind, message } = ans.error;
      throw { payload: kind === 'not-found' ? { tag: kind } : { tag: kind, val: message } };
    }
    return witAnswer('delete-many', ans.ok);
  };
  const fn = (call) => call === 'delete-many' ? many : (key, given) => {
    // put's value is the WIT `data`, a Uint8Array; JS buckets take bytes.
    const value = call === 'put' ? dataBytes(given) : given;
    let ans;
    if (prefix === null) ans = denied(messages.NO_BUCKET);
    else if (!key.startsWith(prefix)) {
      ans = denied(messages.outsidePrefix(key, prefix));
    } else ans = answer(call, key, value);
    // WIT exists answers an absent key with not-found (the trace still records "none").
    if (call === 'exists' && ans.ok === null) ans = { error: { kind: 'not-found' } };
    if (record) record(call, key, value, ans);
    if (ans.error) {
      const { kind, message } = ans.error;
      throw { payload: kind === 'not-found' ? { tag: kind } : { tag: kind, val: message } };
    }
    return witAnswer(call, ans.ok);
  };
  const functions = Object.fromEntries(CALLS.map((call) => [call, fn(call)]));
  for (const [call, name] of JCO_NAMES) functions[name] = functions[call];
  return functions;
}

/** Each bucket function's WIT name and the name abi.mjs calls it by (the WIT name in
 *  camelCase). */
const JCO_NAMES = CALLS.map((call) => [call, call.replace(/-([a-z])/g, (_, c) => c.toUpperCase())]);

/** An answer's `ok` value (the TRACES.md shape, bytes unencoded) as the component takes it:
 *  sizes and times as bigints, none as undefined. */
function witAnswer(call, ok) {
  switch (call) {
    case 'exists':
      return BigInt(ok);
    case 'list':
      return ok.map((o) => ({ key: o.key, size: BigInt(o.size), modified: { seconds: BigInt(o.modified.seconds), nanoseconds: o.modified.nanoseconds } }));
    case 'put':
    case 'delete':
      return undefined;
    case 'delete-many':
      return ok.map(witResult);
    default:
      // get: a Uint8Array crosses in one copy, valid UTF-8 or not.
      return ok;
  }
}

/** One answer ({ok} or {error}) as a WIT `result<_, bucket-error>`. */
function witResult(ans) {
  if (!ans.error) return { tag: 'ok', val: undefined };
  const { kind, message } = ans.error;
  return { tag: 'err', val: kind === 'not-found' ? { tag: kind } : { tag: kind, val: message } };
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

/** A listing entry {key, size, modified} normalized, or undefined if `o` is not one. Each
 *  property is read once: a getter could answer a string to a check and a number after. */
function asObjectMeta(o) {
  if (o === null || typeof o !== 'object') return undefined;
  const { key, size: rawSize, modified: rawModified } = o;
  if (typeof key !== 'string') return undefined;
  const size = asU64(rawSize);
  const modified = asInstant(rawModified);
  if (size === undefined || modified === undefined) return undefined;
  return { key, size, modified };
}

/** What a thrown value says, for a message: an Error's message, else the value as a
 *  string, else what it is (a bucket's own object may throw even from toString). */
function describeThrown(e) {
  try {
    return e instanceof Error ? String(e.message) : String(e);
  } catch {
    // below
  }
  try {
    return Object.prototype.toString.call(e);
  } catch {
    return `a ${typeof e} that cannot be shown`;
  }
}

/** A BucketError (or anything else thrown) by `call` of `key` as an answer's error; a
 *  thrown value that cannot even be read is a failure of the call, not a trap. */
function thrownError(e, call, key) {
  try {
    if (e instanceof BucketError) {
      const { kind, message } = e;
      if (kind === 'not-found') return { kind: 'not-found' };
      if (BUCKET_ERROR_KINDS.has(kind) && typeof message === 'string') return { kind, message };
      return { kind: 'failed', message: messages.backend(call, key, `the bucket threw a BucketError of kind ${describeThrown(kind)} with a message of type ${typeof message}`) };
    }
    return { kind: 'failed', message: describeThrown(e) };
  } catch (inner) {
    return { kind: 'failed', message: messages.backend(call, key, `the bucket threw a value that could not be read: ${describeThrown(inner)}`) };
  }
}

/** The answer of a bucket whose `call` of `key` returned something that cannot be read or
 *  converted (a getter that throws, a value of the wrong type): a failure of the call,
 *  in the words of a backend's own failure, never a trap of the component. */
function unreadable(call, key, description) {
  return { error: { kind: 'failed', message: messages.backend(call, key, description) } };
}

/** Whether `got` is a promise (or another thenable): reading `then` may itself throw. */
const isThenable = (got) => got !== null && (typeof got === 'object' || typeof got === 'function') && typeof got.then === 'function';

/** Asks a JS bucket to delete `keys`: its deleteMany in one call where it has one,
 *  else one delete a key. */
function askBucketMany(bucket, keys) {
  let batch;
  try {
    batch = bucket?.deleteMany;
  } catch (e) {
    return { error: thrownError(e, 'delete-many', keys[0]) };
  }
  if (typeof batch !== 'function') {
    return { ok: keys.map((key) => askBucket(bucket, 'delete', key)) };
  }
  let got;
  try {
    got = batch.call(bucket, [...keys]);
  } catch (e) {
    return { error: thrownError(e, 'delete-many', keys[0]) };
  }
  try {
    return readDeleteMany(got, keys);
  } catch (e) {
    return unreadable('delete-many', keys[0], `the bucket's deleteMany answer could not be read: ${describeThrown(e)}`);
  }
}

/** A deleteMany's answer for `keys`, each entry an answer; throws what reading it throws. */
function readDeleteMany(got, keys) {
  const wrong = (what) => unreadable('delete-many', keys[0], `the bucket's deleteMany ${what}; it must return one entry per key: undefined or null when deleted, a BucketError when not`);
  if (isThenable(got)) {
    Promise.resolve(got).catch(() => {});
    return wrong('returned a promise');
  }
  if (!Array.isArray(got)) return wrong(`returned ${typeof got}`);
  // Copied once: a proxy or a getter could answer differently on a second read.
  const entries = Array.from(got);
  if (entries.length !== keys.length) return wrong(`returned ${entries.length} entries for ${keys.length} keys`);
  return {
    ok: entries.map((g, i) => {
      if (g === undefined || g === null) return { ok: null };
      const error = thrownError(g, 'delete', keys[i]);
      // A key's absence is no error for a delete (CONTRACT.md §2).
      return error.kind === 'not-found' ? { ok: null } : { error };
    }),
  };
}

/** Asks a JS bucket, turning whatever it does into an answer. */
function askBucket(bucket, call, key, value) {
  if (call === 'delete-many') return askBucketMany(bucket, key);
  let got;
  try {
    const method = bucket?.[call];
    if (typeof method !== 'function') return { error: { kind: 'failed', message: `the bucket has no ${call} method` } };
    got = call === 'put' ? method.call(bucket, key, value) : method.call(bucket, key);
  } catch (e) {
    return { error: thrownError(e, call, key) };
  }
  try {
    return readAnswer(call, key, got);
  } catch (e) {
    return unreadable(call, key, `the bucket's ${call} answer could not be read: ${describeThrown(e)}`);
  }
}

/** What a bucket's `call` of `key` returned, `got`, as an answer of plain values (the
 *  component's lowering then reads nothing of the bucket's); throws what reading it throws. */
function readAnswer(call, key, got) {
  const wrong = (description) => unreadable(call, key, description);
  if (isThenable(got)) {
    Promise.resolve(got).catch(() => {});
    return wrong(`the bucket's ${call} returned a promise; a bucket must answer synchronously`);
  }
  switch (call) {
    case 'get':
      if (got === undefined || got === null) return { error: { kind: 'not-found' } };
      // A view of its own over the same bytes: no copy, and none of a subclass's or a
      // proxy's behaviour left for the lowering to meet.
      if (got instanceof Uint8Array) return { ok: new Uint8Array(got.buffer, got.byteOffset, got.byteLength) };
      if (got instanceof ArrayBuffer) return { ok: new Uint8Array(got) };
      return wrong(`the bucket's get returned ${typeof got}, not bytes`);
    case 'exists': {
      if (got === undefined || got === null) return { ok: null };
      const size = asU64(got);
      return size === undefined ? wrong(`the bucket's exists returned ${typeof got} ${describeThrown(got)}, not a size or null`) : { ok: size };
    }
    case 'list': {
      const listed = Array.isArray(got) ? Array.from(got, asObjectMeta) : [undefined];
      if (listed.includes(undefined)) return wrong("the bucket's list did not return an array of {key, size, modified: {seconds, nanoseconds}}");
      return { ok: listed };
    }
    default:
      return { ok: null };
  }
}

// Fresh instances, as the Rust host makes them. Creating the core instance costs V8
// about as much as the work itself on a small render. So, as wasmtime's pooling
// allocator does for the Rust host, an instance is reused only after it is made as good
// as new: when a call returns normally (a value or a WIT error; the guest's stack
// pointer is then back where instantiation put it, and the guest keeps every other state
// in linear memory), the memory is overwritten with the image it had right after
// instantiation and zeroed above it. An instance whose call
// trapped or threw through the guest, or whose memory grew past REUSE_MAX_BYTES, is
// dropped. Nothing of one call's data (a Secret of one release) survives into the next.
// Instances are reused at all only when the module passes the check below (REUSABLE).
const REUSE_MAX_BYTES = 16 * 1024 * 1024;
const idleInstances = [];

// Resetting the memory makes an instance as good as new only if the memory is all the
// state it has besides its stack pointer, which a normal return puts back (wasm-ld's one
// mutable global, an i32). A main module with more would get a new instance every call.
// (build.mjs lists the module's mutable globals, from the bytes it ships.)
const REUSABLE = ['', 'i32'].includes(MUTABLE_GLOBALS.join(','));

/** A new pooled instance: {exports, memory, image (its memory after instantiation, zero
 *  tail cut), bucket}. Its bucket imports call whatever `bucket` holds for the call in
 *  progress (bucketFunctions; null between calls). */
function newPooledInstance() {
  const pooled = { exports: null, memory: null, image: null, bucket: null };
  const forward = (name) => (...args) => {
    if (!pooled.bucket) throw new Error('render-store: a bucket call outside of a call');
    return pooled.bucket[name](...args);
  };
  const functions = Object.fromEntries(JCO_NAMES.map(([, name]) => [name, forward(name)]));
  const imports = (module) => {
    if (module !== BUCKET_INTERFACE) throw new Error(`render-store: the component imports ${module}, not only ${BUCKET_INTERFACE}`);
    return functions;
  };
  ({ exports: pooled.exports, memory: pooled.memory } = component.instantiate(imports));
  // The image up to its last nonzero byte: the rest is zeros, which a reset writes
  // without reading (here 106 KB of a 256 KiB memory are nonzero).
  const memory = new Uint8Array(pooled.memory.buffer);
  let used = memory.length;
  while (used > 0 && memory[used - 1] === 0) used--;
  pooled.image = memory.slice(0, used);
  return pooled;
}

/** Makes an instance as it was right after instantiation; false if it is not worth it. */
function resetInstance(pooled) {
  const buffer = pooled.memory.buffer;
  if (buffer.byteLength > REUSE_MAX_BYTES) return false;
  const bytes = new Uint8Array(buffer);
  bytes.set(pooled.image);
  bytes.fill(0, pooled.image.length);
  return true;
}

/**
 * The linear memory of every idle instance, as copies: what a later call's instance
 * starts from. For tests and audits of the reuse rule above (no call's data in them).
 */
export function idleInstanceMemories() {
  return idleInstances.map((pooled) => new Uint8Array(pooled.memory.buffer).slice());
}

/** Whether a call that threw `e` returned normally from the guest: abi.mjs throws a WIT
 *  error result as an Error with its own `payload` (a trap is a WebAssembly.RuntimeError). */
const isWitError = (e) => e instanceof Error && Object.hasOwn(e, 'payload');

/**
 * Runs `fn(exports)` in a fresh instance (as above) whose bucket is `bucket`
 * (bucketFunctions); a thrown value goes through `mapError` (default: WIT errors become
 * RenderStoreError).
 */
function inInstance(bucket, fn, mapError = fromWitError) {
  const pooled = idleInstances.pop() ?? newPooledInstance();
  pooled.bucket = bucket;
  let clean = false;
  try {
    const value = fn(pooled.exports);
    clean = true;
    return value;
  } catch (e) {
    clean = isWitError(e);
    throw mapError(e);
  } finally {
    pooled.bucket = null;
    if (clean && REUSABLE && resetInstance(pooled)) idleInstances.push(pooled);
  }
}

const NO_BUCKET = bucketFunctions(null);
const logicCall = (fn) => inInstance(NO_BUCKET, (x) => fn(x.logic));

// ---------------------------------------------------------------------------------------
// Argument and result conversion (no logic: shapes only)

const ENCODER = new TextEncoder();
/** Invalid UTF-8 sequences each become U+FFFD (the WHATWG decoder, as Rust's from_utf8_lossy). */

/** A value as the WIT `data` (a `list<u8>`): a string as its UTF-8, bytes as they are
 *  (whatever they hold: Go's handling of invalid UTF-8 needs them as is). */
function data(value, what) {
  if (typeof value === 'string') return ENCODER.encode(value);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError(`${what}: expected a Uint8Array, an ArrayBuffer or a string`);
}

/** Text the component made (YAML's objects) as the bytes this API returns. */
const textBytes = (text) => ENCODER.encode(text);

/** A WIT `data` from the component: abi.mjs's lifted Uint8Array, a copy of its own,
 *  taken as is. */
const dataBytes = (d) => {
  if (!(d instanceof Uint8Array)) throw new TypeError('the component answered bytes that are not a Uint8Array');
  return d;
};

/** A render's objects as the WIT `object-list`: every object's bytes in one buffer and
 *  where each ends (one copy of the render, two allocations in the component). */
function objectList(objects) {
  if (!Array.isArray(objects)) throw new TypeError('objects: expected an array of JSON objects (bytes or strings)');
  const parts = objects.map((o, i) => data(o, `objects[${i}]`));
  const ends = new Array(parts.length);
  let total = 0;
  for (let i = 0; i < parts.length; i++) {
    total += parts[i].length;
    if (total > 0xffffffff) throw new RangeError(`objects: ${total} bytes together; a render is at most 4 GiB - 1`);
    ends[i] = total;
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, ends };
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

/** A history entry as JS: `trust` only when a keyring judged it, as a trace's result
 *  line writes it: `{authenticated: KEY_ID}` or `{unauthenticated: WHY}`. */
function jsEntry(e) {
  const entry = { key: e.key, renderRef: e.renderRef, syncedAt: jsTime(e.syncedAt), summary: e.summary };
  if (e.trust?.tag === 'authenticated') entry.trust = { authenticated: e.trust.val };
  if (e.trust?.tag === 'unauthenticated') entry.trust = { unauthenticated: e.trust.val };
  return entry;
}

function jsPlan(p) {
  return {
    deleteHistory: [...p.deleteHistory],
    keepHistory: [...p.keepHistory],
    deleteRenders: [...p.deleteRenders],
    keepRenders: [...p.keepRenders],
    ignored: [...p.ignored],
    recentRenders: [...p.recentRenders],
    futureHistory: [...p.futureHistory],
    danglingHistory: [...p.danglingHistory],
    // As a trace's result writes the plan: only when some entry did not authenticate.
    ...(p.unauthenticatedHistory.length ? { unauthenticatedHistory: [...p.unauthenticatedHistory] } : {}),
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
  return dataBytes(logicCall((l) => l.canonical(list)));
};
/** `sha256:` and the hex SHA-256 of the canonical bytes. */
export const renderRef = (objects) => {
  const list = objectList(objects);
  return logicCall((l) => l.renderRef(list));
};
/**
 * Throws kind 'invalid-object' for the first object that is not a Kubernetes object as a
 * person's or a tool's render must be (logic.check-objects, CONTRACT.md §4). Storing does
 * not check this: a controller stores what it applied.
 */
export const checkObjects = (objects) => {
  const list = objectList(objects);
  logicCall((l) => l.checkObjects(list));
};
export const validateRenderRef = (ref) => logicCall((l) => l.validateRenderRef(String(ref)));
export const sha256Hex = (value) => {
  const b = data(value, 'bytes');
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
/** The GC decision from listings alone (logic.plan-gc), at `options.now` (default: this
 *  machine's clock, now()), which decides the entries too far in the future to count. */
export const planGc = (release, keep, historyKeys, renderKeys, protectedRefs = [], options = {}) => {
  const { now: at = now() } = options ?? {};
  if (asInstant(at) === undefined) throw new TypeError('now: expected {seconds, nanoseconds}: integers, nanoseconds below 10^9');
  const args = [
    witRelease(release),
    s64(keep, 'keep'),
    stringList(historyKeys, 'historyKeys'),
    stringList(renderKeys, 'renderKeys'),
    stringList(protectedRefs, 'protected'),
    witTime(at, 'now'),
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
  const b = data(yaml, 'yaml');
  return logicCall((l) => l.yamlObjects(b)).map(textBytes);
};
/** The canonical bytes of a YAML stream's render: canonical(yamlObjects(yaml)) in one call. */
export const yamlCanonical = (yaml) => {
  const b = data(yaml, 'yaml');
  return dataBytes(logicCall((l) => l.yamlCanonical(b)));
};
/** The renderRef of a YAML stream's render: renderRef(yamlObjects(yaml)) in one call. */
export const yamlRenderRef = (yaml) => {
  const b = data(yaml, 'yaml');
  return logicCall((l) => l.yamlRenderRef(b));
};

/** A form as the WIT `object-form`. */
function objectForm(form) {
  if (form !== 'yaml' && form !== 'json') {
    throw new RenderStoreError('invalid-input', `form ${JSON.stringify(form)}: expected 'yaml' or 'json'`);
  }
  return form;
}

/** The views' options as the WIT `secret-values`. Only `showSecrets: true` shows values:
 *  a truthy string such as 'false' is a TypeError, never a reason to show a Secret. */
function secretValues(options) {
  if (options === undefined || options === null) return 'masked';
  if (typeof options !== 'object') throw new TypeError('options: expected an options object {showSecrets}');
  const { showSecrets = false } = options;
  if (typeof showSecrets !== 'boolean') throw new TypeError('options.showSecrets: expected a boolean');
  return showSecrets ? 'shown' : 'masked';
}

/** A diff's `options.context` as the WIT `context`: lines around each change, 3 by
 *  default, 4294967295 for whole objects. */
function diffContext(options) {
  const context = options?.context ?? 3;
  if (!Number.isInteger(context) || context < 0 || context > 0xffffffff) {
    throw new TypeError('options.context: expected a whole number from 0 to 4294967295');
  }
  return context;
}

/**
 * The difference between two canonical renders (logic.diff-renders); changed objects'
 * lines in `form`: 'yaml' (as `kubectl get -o yaml` shows objects) or 'json'. The
 * values of Secrets are masked (`***`, `*** (before)`, `*** (after)`) unless
 * `options.showSecrets` is true; `options.context` lines around each change (3; a
 * number as long as the objects shows them whole, each hunk still headed by its path).
 */
export const diffRenders = (oldRender, newRender, form = 'yaml', options = {}) => {
  const a = data(oldRender, 'old');
  const b = data(newRender, 'new');
  const f = objectForm(form);
  const secrets = secretValues(options);
  const context = diffContext(options);
  return logicCall((l) => l.diffRenders(a, b, f, secrets, context));
};

/**
 * Every object of a canonical render, in order (logic.show-objects): `{id, text}`, the
 * text in `form` ('yaml' or 'json'), as diffRenders writes a changed object, Secret
 * values masked unless `options.showSecrets` is true.
 */
export const showObjects = (canonicalRender, form = 'yaml', options = {}) => {
  const b = data(canonicalRender, 'render');
  const f = objectForm(form);
  const secrets = secretValues(options);
  return logicCall((l) => l.showObjects(b, f, secrets));
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
// The controller's rules (CONTRACT.md §7, §8), as the component decides them

/** An optional string argument: undefined or null is absent. */
function optionalString(value, what) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new TypeError(`${what}: expected a string, undefined or null`);
  return value;
}

/** An optional keepHistory: undefined or null is unset. */
const optionalKeep = (keepHistory) => (keepHistory === undefined || keepHistory === null ? undefined : s64(keepHistory, 'keepHistory'));

/** The effective keepHistory of a Release (undefined: unset): the entries GC keeps, or 0
 *  when GC is off (a keepHistory of 0 or less). */
export const effectiveKeepHistory = (keepHistory) => {
  const keep = optionalKeep(keepHistory);
  return Number(logicCall((l) => l.effectiveKeepHistory(keep)));
};

/** `resolvedRetentionPolicy.historyCount`: 0 without a store, else effectiveKeepHistory. */
export const historyCount = (hasStore, keepHistory) => {
  const keep = optionalKeep(keepHistory);
  return Number(logicCall((l) => l.historyCount(Boolean(hasStore), keep)));
};

/** The renders GC must keep whatever the history says: `applied` and the Release's
 *  {lastSuccessful, lastAttempted, pin, lastHealthy} renderRefs, empty ones ignored;
 *  sorted, each once. */
export const protectedRefs = (applied, refs = {}) => {
  const r = {
    lastSuccessful: optionalString(refs?.lastSuccessful, 'lastSuccessful'),
    lastAttempted: optionalString(refs?.lastAttempted, 'lastAttempted'),
    pin: optionalString(refs?.pin, 'pin'),
    lastHealthy: optionalString(refs?.lastHealthy, 'lastHealthy'),
  };
  const a = optionalString(applied, 'applied');
  return logicCall((l) => l.protectedRefs(a, r));
};

/** What a sync applies given the Release's pin: {apply: 'current'}, {apply: 'pinned',
 *  renderRef} (read it from the store), or {refused: sentence} (the `Pinned` condition's)
 *  when the pin names another render and there is no store. */
export const pinDecision = (pin, currentRef, hasStore) => {
  try {
    const args = [optionalString(pin, 'pin'), String(currentRef), Boolean(hasStore)];
    const pinned = inInstance(NO_BUCKET, (x) => x.logic.pinDecision(...args), (e) => e);
    return pinned === undefined ? { apply: 'current' } : { apply: 'pinned', renderRef: pinned };
  } catch (e) {
    if (isWitError(e)) return { refused: e.payload };
    throw e;
  }
};

// ---------------------------------------------------------------------------------------
// The store export

/**
 * The store operations, by their WIT names: how to turn JS arguments into WIT ones, call
 * the export, and shape the value (`js`).
 */
const OPERATIONS = {
  'put-render': {
    call: (s, r, a, encryption) => s.putRender(r, a.objects, encryption),
    js: (v) => v,
  },
  'get-render': {
    call: (s, r, a, encryption) => s.getRender(r, a.renderRef, encryption),
    js: dataBytes,
  },
  'has-history-ref': {
    call: (s, r, a) => s.hasHistoryRef(r, a.renderRef),
    js: (v) => v,
  },
  'record-history': {
    call: (s, r, a, encryption) => s.recordHistory(r, a.entry, encryption),
    js: (v) => v,
  },
  'list-history': {
    call: (s, r, a, encryption) => s.listHistory(r, encryption),
    js: (v) => v.map(jsEntry),
  },
  gc: {
    call: (s, r, a, encryption) => s.gc(r, a.keep, a.protected, a.dryRun, a.now, a.graceSeconds, encryption),
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
function runRaw(operation, release, args, encryption, answer, record) {
  const functions = bucketFunctions(scopeOf(release), answer, record);
  return inInstance(functions, (x) => OPERATIONS[operation].call(x.store, release, args, encryption));
}

function storeCall(bucket, operation, release, args, keyring = [], options = {}) {
  const r = witRelease(release);
  const encryption = witEncryption(keyring, options);
  if (recording !== null) return tracedStoreCall(bucket, operation, r, args, encryption);
  return OPERATIONS[operation].js(runRaw(operation, r, args, encryption, (call, key, value) => askBucket(bucket, call, key, value)));
}

/** A keyring as the WIT `keyring`: [{id, secret}], `secret` 32 bytes (what parseKeyring
 *  returns); the component checks the ids and sizes. */
function witKeyring(keyring) {
  if (!Array.isArray(keyring)) throw new TypeError('keyring: expected an array of {id, secret} (parseKeyring gives one)');
  return keyring.map((k, i) => {
    if (k === null || typeof k !== 'object' || typeof k.id !== 'string' || !(k.secret instanceof Uint8Array)) {
      throw new TypeError(`keyring[${i}]: expected {id: string, secret: Uint8Array}`);
    }
    return { id: k.id, secret: k.secret };
  });
}

/** A keyring and `options.encryptionRequired` (default false) as the WIT `encryption`:
 *  the component refuses the rule without keys, before any bucket call. */
function witEncryption(keyring, options) {
  const required = options?.encryptionRequired ?? false;
  if (typeof required !== 'boolean') throw new TypeError('encryptionRequired: expected a boolean');
  return { keyring: witKeyring(keyring), required };
}

/**
 * A keyring file's text (`<id> <base64 key>` lines; CONTRACT.md, Encryption at rest) as
 * the keyring every store call takes: [{id, secret}], the key that seals new blobs first.
 * Read by the component, as every host reads it; the error names the line, never a key.
 */
export const parseKeyring = (text) => {
  const bytes = data(text, 'text');
  return logicCall((l) => l.parseKeyring(bytes)).map((k) => ({ id: k.id, secret: dataBytes(k.secret) }));
};

/** Stores a render unless its blob exists with the size it would be written with (a
 *  torn or truncated blob is written again), sealed under the first key of `keyring`
 *  when it has one; returns its renderRef. `options.encryptionRequired` (default false;
 *  needs a keyring): every render blob must be sealed under a key of `keyring`
 *  (CONTRACT.md, Encryption at rest). */
export const putRender = (bucket, release, objects, keyring = [], options = {}) => storeCall(bucket, 'put-render', release, { objects: objectList(objects) }, keyring, options);
/** The verified canonical bytes of a stored render, opened under `keyring` when sealed;
 *  with `options.encryptionRequired`, a plaintext blob is refused (kind 'corrupt'). */
export const getRender = (bucket, release, ref, keyring = [], options = {}) => storeCall(bucket, 'get-render', release, { renderRef: String(ref) }, keyring, options);
/**
 * Seals every render blob of the release not sealed under the keyring's first key under
 * it (store.rekey-release): {rewritten, kept}. Each blob is replaced atomically by the
 * bucket's put, so a crash leaves every blob readable. With `options.encryptionRequired`
 * a plaintext blob stops it (kind 'corrupt'). Not traced.
 */
export const rekeyRelease = (bucket, release, keyring, options = {}) => {
  const r = witRelease(release);
  const encryption = witEncryption(keyring, options);
  const functions = bucketFunctions(scopeOf(r), (call, key, value) => askBucket(bucket, call, key, value));
  const [rewritten, kept] = inInstance(functions, (x) => x.store.rekeyRelease(r, encryption));
  return { rewritten, kept };
};
/**
 * Brings the release index (CONTRACT.md §3: what each render of the history holds, one
 * blob a release) up to date with the history (store.index-release): with
 * `options.readMissing` (default true) the renders it lacks are read and indexed, as
 * after a record that added an entry; without, it only drops what the history no
 * longer names, as after a GC. Written only when it changes, sealed under the keyring's
 * first key when it has one. Returns {renders, indexed, read, pruned, unreadable,
 * replaced, written}. The index is a cache: an error here loses nothing. Not traced.
 */
export const indexRelease = (bucket, release, keyring = [], options = {}) => {
  const r = witRelease(release);
  const encryption = witEncryption(keyring, options);
  const functions = bucketFunctions(scopeOf(r), (call, key, value) => askBucket(bucket, call, key, value));
  const readMissing = options.readMissing ?? true;
  return inInstance(functions, (x) => x.store.indexRelease(r, readMissing, encryption));
};
/** Whether a history entry records the render. */
export const hasHistoryRef = (bucket, release, ref) => storeCall(bucket, 'has-history-ref', release, { renderRef: String(ref) });
/** Appends {renderRef, syncedAt: {seconds, nanoseconds}, summary} unless the render is
 *  recorded; returns whether it was added. With a keyring the entry carries a MAC under
 *  its first key; with `options.encryptionRequired` an entry naming the same render
 *  counts only if it authenticates (CONTRACT.md §14). */
export const recordHistory = (bucket, release, entry, keyring = [], options = {}) => storeCall(bucket, 'record-history', release, { entry: witEntry(entry) }, keyring, options);
/** The history, oldest first: [{key, renderRef, syncedAt: {seconds, nanoseconds}, summary,
 *  trust}], `trust` ({authenticated: KEY_ID} or {unauthenticated: WHY}) only with a keyring. */
export const listHistory = (bucket, release, keyring = [], options = {}) => storeCall(bucket, 'list-history', release, {}, keyring, options);
/** The defaults every host uses (logic.defaults): keepHistory when a Release does not
 *  set it, GC's grace period in seconds unless the caller gives one, and how far after
 *  GC's `now` an entry may be dated and still count (not a setting). */
export const DEFAULTS = Object.freeze((() => {
  const d = logicCall((l) => l.defaults());
  return {
    keepHistory: Number(d.keepHistory),
    gcGraceSeconds: Number(d.gcGraceSeconds),
    gcFutureToleranceSeconds: Number(d.gcFutureToleranceSeconds),
  };
})());

/** GC's default grace period (DEFAULTS.gcGraceSeconds): no render blob written less than
 *  this many seconds ago is deleted. */
export const GC_GRACE_SECONDS = DEFAULTS.gcGraceSeconds;

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
 * keepRenders, ignored, recentRenders, futureHistory, danglingHistory}.
 * `options.graceSeconds` (default GC_GRACE_SECONDS; 0: none) keeps every unreferenced
 * blob modified less than that long before `options.now` (default: this machine's clock,
 * now()) and lists it in recentRenders. Entries dated more than
 * DEFAULTS.gcFutureToleranceSeconds after `options.now` (futureHistory) and entries whose
 * render is not stored (danglingHistory) do not count toward `keep` and are never
 * deleted. With `options.keyring` and `options.encryptionRequired`, an entry counts only
 * if it authenticates: the others are kept, not counted (unauthenticatedHistory).
 */
export const gc = (bucket, release, keep, protectedRefs = [], dryRun = false, options = {}) => {
  const { now: at = now(), graceSeconds = GC_GRACE_SECONDS, keyring = [] } = options ?? {};
  if (asInstant(at) === undefined) throw new TypeError('now: expected {seconds, nanoseconds}: integers, nanoseconds below 10^9');
  const t = witTime(at, 'now');
  return storeCall(bucket, 'gc', release, {
    keep: s64(keep, 'keep'),
    protected: stringList(protectedRefs, 'protected'),
    dryRun: Boolean(dryRun),
    now: t,
    graceSeconds: u64(graceSeconds, 'graceSeconds'),
  }, keyring, options);
};
/** Deletes every key of the release; returns how many. */
export const deleteRelease = (bucket, release) => storeCall(bucket, 'delete-release', release, {});

/**
 * At most `limit` history entries, newest first, older than the entry key `before` when
 * given (store.list-history-page): `{entries, nextBefore}`, nextBefore the cursor of the
 * next, older page or undefined at the end. Reads only the page's entries. Not traced.
 */
export const listHistoryPage = (bucket, release, limit, before = undefined, keyring = [], options = {}) => {
  const r = witRelease(release);
  const encryption = witEncryption(keyring, options);
  if (!Number.isInteger(limit) || limit < 1 || limit > 0xffffffff) throw new TypeError('limit: expected an integer from 1 to 2^32 - 1');
  if (before !== undefined && typeof before !== 'string') throw new TypeError('before: expected an entry key (a string) or undefined');
  const functions = bucketFunctions(scopeOf(r), (call, key, value) => askBucket(bucket, call, key, value));
  const page = inInstance(functions, (x) => x.store.listHistoryPage(r, limit, before, encryption));
  return { entries: page.entries.map(jsEntry), nextBefore: page.nextBefore };
};

/**
 * The difference between two stored renders of a release (store.diff-renders): both are
 * read and verified in the component (`get` of oldRef, then of newRef), in one call,
 * Secret values masked unless `options.showSecrets` is true. Not a traced operation.
 */
export const diffStored = (bucket, release, oldRef, newRef, form = 'yaml', options = {}) => {
  const r = witRelease(release);
  const f = objectForm(form);
  const secrets = secretValues(options);
  const context = diffContext(options);
  const encryption = witEncryption(options?.keyring ?? [], options);
  const functions = bucketFunctions(scopeOf(r), (call, key, value) => askBucket(bucket, call, key, value));
  return inInstance(functions, (x) => x.store.diffRenders(r, String(oldRef), String(newRef), f, secrets, context, encryption));
};

/**
 * The store operations over one bucket, as methods: `new RenderStore(bucket)`. Each runs
 * in a fresh instance of the component whose bucket is scoped to the release.
 */
export class RenderStore {
  /** `options.keyring` (parseKeyring's value; default none): the keys render blobs are
   *  sealed and opened with (CONTRACT.md, Encryption at rest). `options.encryptionRequired`
   *  (default false): every render blob must be sealed under one of them, a plaintext one
   *  is refused (kind 'corrupt'); the component refuses it without a keyring. */
  constructor(bucket, { keyring = [], encryptionRequired = false } = {}) {
    if (bucket === null || typeof bucket !== 'object') throw new TypeError('bucket: expected an object with get, put, exists, list and delete');
    /** The bucket every operation uses. */
    this.bucket = bucket;
    /** The keyring and the rule, checked now so a bad one fails here rather than at the
     *  first call. */
    witEncryption(keyring, { encryptionRequired });
    this.keyring = keyring;
    /** Whether every render blob must be sealed under a key of the keyring. */
    this.encryptionRequired = encryptionRequired;
  }
  putRender(release, objects) {
    return putRender(this.bucket, release, objects, this.keyring, { encryptionRequired: this.encryptionRequired });
  }
  getRender(release, ref) {
    return getRender(this.bucket, release, ref, this.keyring, { encryptionRequired: this.encryptionRequired });
  }
  rekeyRelease(release) {
    return rekeyRelease(this.bucket, release, this.keyring, { encryptionRequired: this.encryptionRequired });
  }
  indexRelease(release, options = {}) {
    return indexRelease(this.bucket, release, this.keyring, { ...options, encryptionRequired: this.encryptionRequired });
  }
  hasHistoryRef(release, ref) {
    return hasHistoryRef(this.bucket, release, ref);
  }
  recordHistory(release, entry) {
    return recordHistory(this.bucket, release, entry, this.keyring, { encryptionRequired: this.encryptionRequired });
  }
  listHistory(release) {
    return listHistory(this.bucket, release, this.keyring, { encryptionRequired: this.encryptionRequired });
  }
  listHistoryPage(release, limit, before = undefined) {
    return listHistoryPage(this.bucket, release, limit, before, this.keyring, { encryptionRequired: this.encryptionRequired });
  }
  gc(release, keep, protectedRefs = [], dryRun = false, options = {}) {
    return gc(this.bucket, release, keep, protectedRefs, dryRun, { ...options, keyring: this.keyring, encryptionRequired: this.encryptionRequired });
  }
  deleteRelease(release) {
    return deleteRelease(this.bucket, release);
  }
  diffRenders(release, oldRef, newRef, form = 'yaml', options = {}) {
    return diffStored(this.bucket, release, oldRef, newRef, form, { ...options, keyring: this.keyring, encryptionRequired: this.encryptionRequired });
  }
}

/** The store operations bound to one bucket (the same as `new RenderStore(bucket)`). */
export function store(bucket) {
  return new RenderStore(bucket);
}

/** The import functions a store call of `release` gets over `bucket`, scoped as every
 *  call is (exported for tests of the scope; the component itself never leaves it). */
export function scopedBucket(bucket, release) {
  return bucketFunctions(scopeOf(witRelease(release)), (call, key, value) => askBucket(bucket, call, key, value));
}

/** What a generated function throws: a WIT error as RenderStoreError, an argument
 *  abi.mjs could not lower (a TypeError, thrown before the component runs) as it is. */
const generatedError = (e) => (e instanceof TypeError ? e : fromWitError(e));

/**
 * The calls of api.generated.mjs, the functions render-store-bindgen generates from the
 * WIT for the exports of `logic`, `store` and `trace` that have no hand-written function
 * here: `logic(fn, args)` and `trace(fn, args)` call that export (its camelCase name)
 * with the WIT arguments as abi.mjs lowers them; `store(bucket, fn, release, args,
 * keyring, options)` calls `store[fn](release, ...args, encryption)` in an instance whose
 * bucket is scoped to the release, `encryption` made from `keyring` and
 * `options.encryptionRequired` (given without `keyring` and `options`, for an export that
 * takes no `encryption`, it passes none); `release` converts a `"namespace/name"`
 * release. Values come back as abi.mjs lifts them. Exported for that module alone: not
 * part of the API, and core.d.mts does not declare it.
 */
export const _generatedApi = Object.freeze({
  logic: (fn, args) => inInstance(NO_BUCKET, (x) => x.logic[fn](...args), generatedError),
  trace: (fn, args) => inInstance(NO_BUCKET, (x) => x.trace[fn](...args), generatedError),
  store: (bucket, fn, release, args, ...sealing) => {
    const r = witRelease(release);
    const encryption = sealing.length === 0 ? [] : [witEncryption(...sealing)];
    const functions = bucketFunctions(scopeOf(r), (call, key, value) => askBucket(bucket, call, key, value));
    return inInstance(functions, (x) => x.store[fn](r, ...args, ...encryption), generatedError);
  },
  release: witRelease,
});

// ---------------------------------------------------------------------------------------
// Buckets

/**
 * The rule every bucket applies before a call touches anything (CONTRACT.md §2, the Rust
 * host's check_key): a key is a clean `/`-separated path, with no empty, `.` or `..`
 * component and no control character (Unicode's Cc, as Rust's char::is_control: C0, DEL
 * and C1). Its components, or `denied` in the component's words.
 */
export function checkKey(key) {
  const parts = key.split('/');
  const clean = key !== '' && parts.every((p) => p !== '' && p !== '.' && p !== '..' && !/\p{Cc}/u.test(p));
  if (!clean) throw new BucketError('denied', messages.invalidKey(key));
  return parts;
}

/** list(prefix) lists the segment-aligned parent of the prefix: it must be a valid key. */
function listParent(prefix) {
  const slash = prefix.lastIndexOf('/');
  if (slash < 0) return null;
  const parent = prefix.slice(0, slash);
  checkKey(parent);
  return parent;
}

/** Orders keys as listings must: by their UTF-8 bytes (not by UTF-16 code units, which
 *  put U+1F600 before U+FFFD). For a bucket of your own: `keys.sort(compareKeys)`. */
export function compareKeys(a, b) {
  const x = ENCODER.encode(a);
  const y = ENCODER.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** A bucket in memory (the Rust host's mem://): each object keeps its bytes and the time
 *  `clock()` ({seconds, nanoseconds}; default this machine's clock) gave at its put. */
/** A copy of bytes given as a Uint8Array (or another view), an ArrayBuffer or an array of
 *  byte values; typed arrays are copied in bulk (`Uint8Array.from` walks them one element
 *  at a time). */
function copyBytes(value) {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice();
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  return Uint8Array.from(value);
}

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
    this.objects.set(key, copyBytes(value));
    this.modified.set(key, at);
  }

  exists(key) {
    checkKey(key);
    const value = this.objects.get(key);
    return value === undefined ? null : value.length;
  }

  list(prefix) {
    listParent(prefix);
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort(compareKeys).map((key) => ({
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

// ---------------------------------------------------------------------------------------
// Traces (TRACES.md). Only a host sees the bucket calls, so this host records them; the
// component writes the trace, reads it back, replays it and words the report.

/** A recorded call as the WIT `trace.recorded-call` variant: the answer as the
 *  component got it. */
function witRecordedCall(call, key, value, ans) {
  const answer = ans.error
    ? { tag: 'err', val: ans.error.kind === 'not-found' ? { tag: 'not-found' } : { tag: ans.error.kind, val: ans.error.message } }
    : { tag: 'ok', val: witAnswer(call, ans.ok) };
  // A trace records a put's bytes, not the form they came in.
  if (call === 'put') return { tag: call, val: { key, value, answer } };
  if (call === 'list') return { tag: call, val: { prefix: key, answer } };
  if (call === 'delete-many') return { tag: call, val: { keys: key, answer } };
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

function tracedStoreCall(bucket, operation, release, args, encryption) {
  const calls = [];
  const log = (call, key, value, ans) => calls.push(witRecordedCall(call, key, value, ans));
  let raw;
  let failure;
  try {
    raw = runRaw(operation, release, args, encryption, (call, key, value) => askBucket(bucket, call, key, value), log);
  } catch (e) {
    if (!(e instanceof RenderStoreError)) throw e;
    failure = e;
  }
  const outcome = failure ? witFailure(operation, failure) : { tag: operation, val: { tag: 'ok', val: raw } };
  const keyIds = encryption.keyring.map((k) => k.id);
  const trace = inInstance(NO_BUCKET, (x) => x.trace.writeTrace(witOperation(operation, release, args), keyIds, encryption.required, calls, outcome));
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
export function replayReport(traceText, keyring = []) {
  const keys = witKeyring(keyring);
  return inInstance(NO_BUCKET, (x) => x.trace.replay(String(traceText), keys), (e) => {
    const p = e?.payload;
    if (p && typeof p.line === 'number') return new TraceError(p.line, p.message);
    return fromWitError(e);
  });
}

/** The replay report as an object: {operation, matches, firstDifference, resultMatches,
 *  calls, result}, as `render-store replay --json` prints it. */
export const replay = (traceText, keyring = []) => JSON.parse(replayReport(traceText, keyring).json);
