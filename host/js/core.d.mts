// Types of core.mjs: the render-store component for JavaScript, without Node built-ins
// (it runs in browsers too). render-store.d.mts adds FolderBucket for Node.

// The functions generated from the WIT (render-store-bindgen) and the WIT's types they
// take and give (the namespace `Wit`).
export * from './api.generated.mjs';

/** Bytes, or text (taken as its UTF-8 bytes). */
export type BytesLike = Uint8Array | ArrayBuffer | string;
/** A release: `{namespace, name}` or `"namespace/name"`. */
export type ReleaseLike = { namespace: string; name: string } | string;
/** A UTC instant: seconds since 1970-01-01T00:00:00Z (a bigint only beyond 2^53) and nanoseconds below 10^9. */
export interface SyncTime {
  seconds: number | bigint;
  nanoseconds: number;
}
/** The kinds of RenderStoreError: the WIT `error` variant's cases, and `trap` for a call the sandbox stopped. */
export type ErrorKind = 'invalid-input' | 'invalid-object' | 'not-found' | 'corrupt' | 'bucket' | 'invalid-yaml' | 'encryption-key' | 'trap';

/** An error of a render-store call. */
export class RenderStoreError extends Error {
  constructor(kind: ErrorKind, message: string, details?: { index?: number; stage?: YamlStage; document?: number; line?: number; column?: number; cause?: unknown });
  readonly kind: ErrorKind;
  /** For `invalid-object`: the bad object's position, from 0. */
  readonly index?: number;
  /** For `invalid-yaml`: the step that rejected the stream. */
  readonly stage?: YamlStage;
  /** For `invalid-yaml`: the failing document's index from 0 (skipped documents counted). */
  readonly document?: number;
  /** For `invalid-yaml`: the line in the stream, from 1. */
  readonly line?: number;
  /** For `invalid-yaml`: the column, from 1. */
  readonly column?: number;
}
/** The step of the YAML path that rejected a stream. */
export type YamlStage = 'split' | 'yaml' | 'object';

/** What a bucket throws to answer a WIT bucket-error. */
export class BucketError extends Error {
  constructor(kind: 'not-found' | 'denied' | 'failed', message?: string);
  readonly kind: 'not-found' | 'denied' | 'failed';
}

/** One object of a bucket listing. */
export interface ObjectMeta {
  key: string;
  size: number | bigint;
  modified: SyncTime;
}

/**
 * A bucket the component can be given: synchronous calls. `get` answers the bytes (or
 * throws `BucketError('not-found')`), `exists` the size or null, `list` every object
 * whose key starts with `prefix` in `compareKeys` order. Any other throw is a backend
 * failure. MemoryBucket and FolderBucket are two; a cloud store needs a synchronous
 * bridge of your own.
 */
export interface Bucket {
  get(key: string): Uint8Array | ArrayBuffer | null | undefined;
  put(key: string, value: Uint8Array): void;
  exists(key: string): number | bigint | null | undefined;
  list(prefix: string): ObjectMeta[];
  delete(key: string): void;
  /**
   * Optional: deletes `keys` (at most 1,000) in one request, for a backend that has a
   * batch request (S3's DeleteObjects). One entry per key, in order: undefined or null
   * when deleted (or absent), a `BucketError` (returned, not thrown) when not. Throwing
   * fails the whole request. Without it, the host calls `delete` for each key.
   */
  deleteMany?(keys: string[]): Array<BucketError | null | undefined>;
}

/** A history entry to record. */
export interface NewEntry {
  renderRef: string;
  syncedAt: SyncTime;
  summary?: string;
}
/** A stored history entry. */
export interface HistoryEntry {
  key: string;
  renderRef: string;
  syncedAt: SyncTime;
  summary: string;
  /** What the keyring says of it (CONTRACT.md §14); absent when read without a keyring
   *  and its body agrees with its key. */
  trust?: { authenticated: string } | { unauthenticated: string };
}
/** What a garbage collection deletes and keeps (full keys, lexical order). Every history
 *  key listed is in exactly one of deleteHistory, keepHistory and ignored; futureHistory
 *  and danglingHistory name the kept entries that did not count toward `keep`. */
export interface GcPlan {
  deleteHistory: string[];
  /** The newest `keep` entries of those that count, and every entry that does not. */
  keepHistory: string[];
  deleteRenders: string[];
  keepRenders: string[];
  ignored: string[];
  /** Unreferenced blobs kept only because they are younger than the grace period. */
  recentRenders: string[];
  /** Kept entries dated more than DEFAULTS.gcFutureToleranceSeconds after GC's `now` (a clock
   *  running ahead, or planted keys): not counted toward `keep`, never deleted, their
   *  renders kept. */
  futureHistory: string[];
  /** Kept entries whose render is not stored: not counted toward `keep`, never deleted. */
  danglingHistory: string[];
  /** With encryption required: kept entries that do not authenticate, not counted;
   *  present only when there are some, as in a trace's plan. */
  unauthenticatedHistory?: string[];
}
/** What identifies an object of a render; absent fields are empty strings. */
export interface ObjectId {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}
/** The difference between two renders; changed objects' lines are unified-diff lines. */
export interface RenderDiff {
  /** Objects only the new render holds, each whole in the diff's form (as kubectl diff shows them). */
  added: { id: ObjectId; text: string }[];
  /** Objects only the old render holds, each whole in the diff's form. */
  removed: { id: ObjectId; text: string }[];
  changed: { id: ObjectId; lines: string[] }[];
  unchanged: number;
}
/** How a diff writes changed objects: YAML as `kubectl get -o yaml` shows them, or pretty JSON. */
export type ObjectForm = 'yaml' | 'json';
/**
 * The options of the views made for people (diffRenders, showObjects, diffStored). By
 * default every value of a v1 Secret's `data` and `stringData`, and those inside its
 * last-applied-configuration annotation, is shown as `***`, or `*** (before)` and
 * `*** (after)` where it changed; `showSecrets: true` shows the values as stored.
 */
export interface ViewOptions {
  showSecrets?: boolean;
  /** Diffs only: lines of context around each change (default 3; 4294967295 shows changed objects whole, each hunk still headed by its path). */
  context?: number;
}
/** The options of gc: `now` (default: this machine's clock) and the grace period in seconds (default GC_GRACE_SECONDS). */
export interface GcOptions extends EncryptionOptions {
  now?: SyncTime;
  graceSeconds?: number | bigint;
  /** With `encryptionRequired`, entries count toward `keep` only if they authenticate. */
  keyring?: Keyring;
}

/** The canonical bytes of a render (one JSON object per element). */
export function canonical(objects: BytesLike[]): Uint8Array;
/** `sha256:` and the hex SHA-256 of the canonical bytes: the controller's renderRef. */
export function renderRef(objects: BytesLike[]): string;
/** Throws `invalid-input` unless `ref` is `sha256:` and 64 lowercase hex digits. */
export function validateRenderRef(ref: string): void;
/** The hex SHA-256 of the bytes, computed in the component. */
export function sha256Hex(value: BytesLike): string;
export function releasePrefix(release: ReleaseLike): string;
export function renderKey(release: ReleaseLike, ref: string): string;
export function historyKey(release: ReleaseLike, syncedAt: SyncTime, ref: string): string;
/** `{render: ref}`, `{history: {syncedAt, renderRef}}`, or undefined for a key that is not the release's. */
export function parseKey(release: ReleaseLike, key: string): { render: string } | { history: { syncedAt: SyncTime; renderRef: string } } | undefined;
export function formatKeyTime(t: SyncTime): string;
export function parseKeyTime(text: string): SyncTime;
/** RFC 3339 with the fraction's trailing zeros dropped, as Go's time.RFC3339Nano. */
export function formatSyncedAt(t: SyncTime): string;
export function parseSyncedAt(text: string): SyncTime;
/** The GC decision from listings alone. */
export function planGc(release: ReleaseLike, keep: number | bigint, historyKeys: string[], renderKeys: string[], protectedRefs?: string[], options?: { now?: SyncTime }): GcPlan;
/** Throws kind 'invalid-object' for the first object that is not a Kubernetes object as a person's or a tool's render must be (CONTRACT.md §4). */
export function checkObjects(objects: BytesLike[]): void;
/** The objects of a multi-document Kubernetes YAML stream, each as compact JSON, as a Go controller reads it. */
export function yamlObjects(yaml: BytesLike): Uint8Array[];
/** canonical(yamlObjects(yaml)) in one call. */
export function yamlCanonical(yaml: BytesLike): Uint8Array;
/** renderRef(yamlObjects(yaml)) in one call. */
export function yamlRenderRef(yaml: BytesLike): string;
/** The difference between two canonical renders, Secret values masked unless `options.showSecrets`. */
export function diffRenders(oldRender: BytesLike, newRender: BytesLike, form?: ObjectForm, options?: ViewOptions): RenderDiff;

/** Every object of a canonical render, in order, with its text in `form`, as diffRenders writes a changed object (Secret values masked unless `options.showSecrets`). */
export function showObjects(canonicalRender: BytesLike, form?: ObjectForm, options?: ViewOptions): { id: ObjectId; text: string }[];
/** A release's history from one listing of its `history/` keys: the entry count and the newest entry. */
export function summarizeHistory(release: ReleaseLike, historyKeys: string[]): { entries: number; newest?: { syncedAt: SyncTime; renderRef: string } };

/** A key of a keyring: the id sealed blobs name, and its 32 bytes. */
export interface EncryptionKey {
  id: string;
  secret: Uint8Array;
}
/** A store's keys, the one that seals new blobs first; empty: a plaintext store. */
export type Keyring = EncryptionKey[];
/** `encryptionRequired` (default false; needs a non-empty keyring): every render blob must be sealed under a key of the keyring, and a plaintext one is refused (kind 'corrupt'). */
export interface EncryptionOptions {
  encryptionRequired?: boolean;
}
/** A keyring file's text (`<id> <base64 key>` lines), read by the component. */
export function parseKeyring(text: BytesLike): Keyring;
/** Stores a render unless its blob exists with the size it would be written with, sealed under the keyring's first key when it has one; its renderRef. */
export function putRender(bucket: Bucket, release: ReleaseLike, objects: BytesLike[], keyring?: Keyring, options?: EncryptionOptions): string;
/** The verified canonical bytes of a stored render, opened under the keyring when sealed; a plaintext one refused with `encryptionRequired`. */
export function getRender(bucket: Bucket, release: ReleaseLike, ref: string, keyring?: Keyring, options?: EncryptionOptions): Uint8Array;
/** Seals every render blob not sealed under the keyring's first key under it; how many were rewritten and kept. */
export function rekeyRelease(bucket: Bucket, release: ReleaseLike, keyring: Keyring, options?: EncryptionOptions): { rewritten: number; kept: number };
/** What indexRelease did to a release's index. */
export interface IndexReport {
  renders: number;
  indexed: number;
  read: number;
  pruned: number;
  unreadable: string[];
  replaced: string | undefined;
  written: boolean;
}
/** Brings the release index up to date with the history: reads the renders it lacks (`readMissing`, default true) or only prunes; written only when it changes. */
export function indexRelease(bucket: Bucket, release: ReleaseLike, keyring?: Keyring, options?: EncryptionOptions & { readMissing?: boolean }): IndexReport;
export function hasHistoryRef(bucket: Bucket, release: ReleaseLike, ref: string): boolean;
/** Appends an entry unless one records the same render; whether it was added. */
export function recordHistory(bucket: Bucket, release: ReleaseLike, entry: NewEntry, keyring?: Keyring, options?: EncryptionOptions): boolean;
/** The history, oldest first. */
export function listHistory(bucket: Bucket, release: ReleaseLike, keyring?: Keyring, options?: EncryptionOptions): HistoryEntry[];
export function gc(bucket: Bucket, release: ReleaseLike, keep: number | bigint, protectedRefs?: string[], dryRun?: boolean, options?: GcOptions): GcPlan;
/** Deletes every key of the release; how many. */
export function deleteRelease(bucket: Bucket, release: ReleaseLike): number;
/** At most `limit` entries, newest first, older than `before`; reads only the page's entries. */
export function listHistoryPage(bucket: Bucket, release: ReleaseLike, limit: number, before?: string, keyring?: Keyring, options?: EncryptionOptions): { entries: HistoryEntry[]; nextBefore?: string };
/** The difference between two stored renders, both read and verified in the component, Secret values masked unless `options.showSecrets`. */
export function diffStored(bucket: Bucket, release: ReleaseLike, oldRef: string, newRef: string, form?: ObjectForm, options?: ViewOptions & EncryptionOptions & { keyring?: Keyring }): RenderDiff;
/** GC's default grace period in seconds (600, the CLI's `--grace 10m`). */
/** The effective keepHistory (undefined: unset): the entries GC keeps, or 0 when GC is off. */
export function effectiveKeepHistory(keepHistory?: number | bigint | null): number;
/** `resolvedRetentionPolicy.historyCount`: 0 without a store, else effectiveKeepHistory. */
export function historyCount(hasStore: boolean, keepHistory?: number | bigint | null): number;
/** The renders GC must keep whatever the history says: sorted, each once, empty ones ignored. */
export function protectedRefs(
  applied: string | null | undefined,
  refs?: { lastSuccessful?: string | null; lastAttempted?: string | null; pin?: string | null; lastHealthy?: string | null },
): string[];
/** What a sync applies given the Release's pin. */
export function pinDecision(
  pin: string | null | undefined,
  currentRef: string,
  hasStore: boolean,
): { apply: 'current' } | { apply: 'pinned'; renderRef: string } | { refused: string };
/** The defaults every host uses, as the component gives them. */
export const DEFAULTS: Readonly<{ keepHistory: number; gcGraceSeconds: number; gcFutureToleranceSeconds: number }>;
export const GC_GRACE_SECONDS: number;
/** This machine's clock. */
export function now(): SyncTime;

/** The store operations over one bucket, as methods. */
export class RenderStore {
  constructor(bucket: Bucket, options?: EncryptionOptions & { keyring?: Keyring });
  readonly bucket: Bucket;
  readonly keyring: Keyring;
  readonly encryptionRequired: boolean;
  putRender(release: ReleaseLike, objects: BytesLike[]): string;
  getRender(release: ReleaseLike, ref: string): Uint8Array;
  rekeyRelease(release: ReleaseLike): { rewritten: number; kept: number };
  indexRelease(release: ReleaseLike, options?: { readMissing?: boolean }): IndexReport;
  hasHistoryRef(release: ReleaseLike, ref: string): boolean;
  recordHistory(release: ReleaseLike, entry: NewEntry): boolean;
  listHistory(release: ReleaseLike): HistoryEntry[];
  listHistoryPage(release: ReleaseLike, limit: number, before?: string): { entries: HistoryEntry[]; nextBefore?: string };
  gc(release: ReleaseLike, keep: number | bigint, protectedRefs?: string[], dryRun?: boolean, options?: GcOptions): GcPlan;
  deleteRelease(release: ReleaseLike): number;
  diffRenders(release: ReleaseLike, oldRef: string, newRef: string, form?: ObjectForm, options?: ViewOptions): RenderDiff;
}
/** `new RenderStore(bucket)`. */
export function store(bucket: Bucket): RenderStore;
/** The bucket functions a store call of `release` gets, scoped to it (for tests of the scope). */
export function scopedBucket(bucket: Bucket, release: ReleaseLike): Record<'get' | 'put' | 'exists' | 'list' | 'delete' | 'delete-many' | 'deleteMany', (...args: unknown[]) => unknown>;
/** Orders keys by their UTF-8 bytes, the order listings must have. */
export function compareKeys(a: string, b: string): number;
/** The rule every bucket applies to a key: its components, or a `denied` BucketError. */
export function checkKey(key: string): string[];

/** A bucket in memory, with the bucket contract of the Rust host. */
export class MemoryBucket implements Bucket {
  /** `clock`: what `modified` times come from (default now). */
  constructor(options?: { clock?: () => SyncTime });
  /** key → bytes. */
  readonly objects: Map<string, Uint8Array>;
  /** key → when it was put. */
  readonly modified: Map<string, SyncTime>;
  get(key: string): Uint8Array;
  put(key: string, value: Uint8Array): void;
  exists(key: string): number | null;
  list(prefix: string): ObjectMeta[];
  delete(key: string): void;
}

/** Every message this host gives the component in a bucket-error (wit/render-store.wit). */
export const messages: Readonly<Record<string, any>>;

/** Runs `fn`, which makes exactly one store call, and records it as a trace (TRACES.md). */
export function record<T>(fn: () => T): { trace: string; value?: T; error?: RenderStoreError };
/** A trace the component refused. */
export class TraceError extends Error {
  constructor(line: number, message: string);
  readonly line: number;
}
/** Replays a trace in the component: the report for people (`text`) and as JSON (`json`). */
export function replayReport(traceText: string, keyring?: Keyring): { matches: boolean; text: string; json: string };
/** The replay report as an object, as `render-store replay --json` prints it. */
export function replay(traceText: string, keyring?: Keyring): { operation: string; matches: boolean; firstDifference: unknown; resultMatches: boolean; calls: unknown[]; result: unknown };

/**
 * The linear memory of every idle instance, as copies: what a later call starts from
 * (an instance is reused only once its memory is back to its image right after
 * instantiation). For tests and audits; no call's data is ever in them.
 */
export function idleInstanceMemories(): Uint8Array[];
