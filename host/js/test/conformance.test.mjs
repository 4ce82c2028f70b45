// The bucket contract (CONTRACT.md §2) as data: every case of
// tests/conformance/bucket.json (format in tests/conformance/README.md) on MemoryBucket
// and FolderBucket, the cases the Rust buckets run in tests/e2e/conformance.rs (the
// delimiter listing, which neither has, as a host folds their plain listings). Folder
// cases (`"needs": "folder"`) run on FolderBucket alone: they plant links, FIFOs and odd
// files beside the bucket's own, which only a bucket over a folder can meet.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';
import { REPO, tempDir } from './helpers.mjs';

const FILE = JSON.parse(readFileSync(join(REPO, 'tests/conformance/bucket.json'), 'utf8'));

/** A listing or value longer than this is described by its length and first difference. */
const SHOWN = 64;

let next = 0;
/** `conformance/<case>-<pid>-<ms>-<n>/`: unique, as the Rust runner's. */
const uniquePrefix = (name) => `conformance/${name}-${process.pid}-${Date.now()}-${next++}/`;

/** The bytes of a value of the file: text or base64, repeated to `length` when given. */
function valueBytes({ text, base64, length }) {
  const unit = text !== undefined ? Buffer.from(text, 'utf8') : Buffer.from(base64, 'base64');
  if (length === undefined) return unit;
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) out[i] = unit[i % unit.length];
  return out;
}

/** The keys a generator names, first to last. */
function generated({ prefix, count, digits, suffix = '' }) {
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(digits, '0')}${suffix}`);
}

const quote = (key) => JSON.stringify(key);
const seconds = () => Math.floor(Date.now() / 1000);

/** The kind of what a bucket threw: a BucketError's kind, else an exception of its own. */
function kindOf(e) {
  if (e instanceof rs.BucketError) return e.kind;
  throw e;
}

/** Calls `call`; returns {ok: answer} or {error: kind, message}. */
function answer(call) {
  try {
    return { ok: call() };
  } catch (e) {
    return { error: kindOf(e), message: e.message };
  }
}

/** Throws when `got` (from `answer`) is not the expected error; `shown` describes a success.
 *  `mentions`, when given, is text the error's message must contain. */
function checkError(expect, got, shown, mentions) {
  if (expect.error !== undefined) {
    if (got.error === expect.error) {
      if (mentions !== undefined && !got.message.includes(mentions)) {
        throw new Error(`expected ${expect.error} naming ${quote(mentions)}, got ${got.error}: ${got.message}`);
      }
      return;
    }
    if (got.error !== undefined) throw new Error(`expected ${expect.error}, got ${got.error}: ${got.message}`);
    throw new Error(`expected ${expect.error}, got ${shown(got.ok)}`);
  }
  if (got.error !== undefined) throw new Error(`expected success, got ${got.error}: ${got.message}`);
  throw new Error(`unexpected answer ${shown(got.ok)}`);
}

function describeBytes(b) {
  return b.length <= SHOWN ? `${b.length} bytes ${quote(b.toString('utf8'))}` : `${b.length} bytes`;
}

function checkValue(want, got) {
  const g = Buffer.from(got);
  if (Buffer.compare(want, g) === 0) return;
  if (want.length <= SHOWN && g.length <= SHOWN) throw new Error(`expected ${describeBytes(want)}, got ${describeBytes(g)}`);
  let at = 0;
  while (at < want.length && at < g.length && want[at] === g[at]) at += 1;
  throw new Error(`expected ${want.length} bytes, got ${g.length}; the first difference is at byte ${at}`);
}

function checkListed(entries, prefix, started, listed) {
  const want = [];
  const recent = [];
  for (const entry of entries) {
    if (entry.keys !== undefined) {
      for (const key of generated(entry.keys)) want.push(`${quote(key)} (${entry.size} bytes)`);
    } else {
      if (entry.modified === 'recent') recent.push(want.length);
      want.push(`${quote(entry.key)} (${entry.size} bytes)`);
    }
  }
  const seen = listed.map((o) => {
    const key = o.key.startsWith(prefix) ? quote(o.key.slice(prefix.length)) : `${quote(o.key)} (outside the case's prefix)`;
    return `${key} (${Number(o.size)} bytes)`;
  });
  const at = want.findIndex((w, i) => w !== seen[i]);
  if (at >= 0 || seen.length !== want.length) {
    if (want.length <= 10 && seen.length <= 10) throw new Error(`expected [${want.join(', ')}], got [${seen.join(', ')}]`);
    const i = at >= 0 ? at : want.length;
    throw new Error(`expected ${want.length} objects, got ${seen.length}; the first difference is at #${i}: expected ${want[i] ?? 'nothing'}, got ${seen[i] ?? 'nothing'}`);
  }
  const tolerance = FILE.recent_seconds;
  const now = seconds();
  for (const i of recent) {
    const modified = Number(listed[i].modified.seconds);
    if (modified < started - tolerance || modified > now + tolerance) {
      throw new Error(`${quote(listed[i].key)}: modified at ${modified} s, not within ${tolerance} s of this case's time (${started} to ${now} s)`);
    }
  }
}

/** The path in the folder `root` of `rel` (relative to the case's `prefix`, `/`-separated). */
const pathIn = (root, prefix, rel) => join(root, ...`${prefix}${rel}`.split('/'));

/**
 * Makes what a `plant` step names, in the folder `root` under the case's `prefix`, with
 * the folders above it (0700, as a put makes them); returns the path made, for removal.
 */
function plant(root, step, prefix) {
  const path = pathIn(root, prefix, step.path);
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  switch (step.what) {
    case 'link':
      symlinkSync(pathIn(root, prefix, step.target), path);
      break;
    case 'fifo': {
      // Node has no mkfifo(3); the coreutils tool makes the same node.
      const made = spawnSync('mkfifo', ['-m', '600', path], { encoding: 'utf8' });
      if (made.error || made.status !== 0) throw new Error(`mkfifo ${quote(path)}: ${made.error?.message ?? made.stderr.trim()}`);
      break;
    }
    case 'file':
      writeFileSync(path, 'x', { flag: 'wx', mode: 0o600 });
      break;
    default:
      throw new Error(`unknown plant ${quote(step.what)}`);
  }
  return path;
}

/** Runs one step; throws an Error saying what was expected and what came. `folder`:
 *  {root, planted} of a folder bucket (the paths planted so far), else null. */
function runStep(bucket, step, prefix, started, folder) {
  const key = step.key !== undefined ? `${prefix}${step.key}` : (step.raw_key ?? '').replaceAll('{prefix}', prefix);
  const { expect } = step;
  const mentions = step.mentions === undefined ? undefined : `${prefix}${step.mentions}`;
  switch (step.op) {
    case 'plant': {
      if (folder === null) throw new Error('a plant step needs a folder bucket');
      folder.planted.push(plant(folder.root, step, prefix));
      return;
    }
    case 'put': {
      const value = valueBytes(step.value);
      // Generated keys are put last to first: a listing in write order is then out of order.
      const keys = step.keys !== undefined ? generated(step.keys).reverse().map((k) => `${prefix}${k}`) : [key];
      for (const k of keys) {
        const got = answer(() => bucket.put(k, value));
        if (!(expect === 'ok' && got.error === undefined)) {
          try {
            checkError(expect, got, () => 'success', mentions);
          } catch (e) {
            throw new Error(`put ${quote(k)} (${value.length} bytes): ${e.message}`);
          }
        }
      }
      return;
    }
    case 'delete-many': {
      // The keys as the host hands them to a bucket: its deleteMany, or a delete each.
      const keys = step.keys !== undefined
        ? generated(step.keys).map((k) => `${prefix}${k}`)
        : step.many.map((k) => (k.key !== undefined ? `${prefix}${k.key}` : k.raw_key.replaceAll('{prefix}', prefix)));
      const got = typeof bucket.deleteMany === 'function'
        ? answer(() => bucket.deleteMany(keys).map((g) => (g ? { error: g.kind, message: g.message } : { ok: null })))
        : { ok: keys.map((k) => answer(() => bucket.delete(k))) };
      if (got.error !== undefined || expect.error !== undefined) return checkError(expect, got, (v) => `${v.length} answers`, mentions);
      if (got.ok.length !== keys.length) throw new Error(`${got.ok.length} answers for ${keys.length} keys`);
      got.ok.forEach((one, i) => {
        const want = expect === 'ok' ? 'ok' : expect.each[i];
        if (want === 'ok' && one.error === undefined) return;
        try {
          checkError(want, one, () => 'success');
        } catch (e) {
          throw new Error(`key ${i + 1} (${quote(keys[i])}): ${e.message}`);
        }
      });
      return;
    }
    case 'delete': {
      const got = answer(() => bucket.delete(key));
      if (expect === 'ok' && got.error === undefined) return;
      return checkError(expect, got, () => 'success', mentions);
    }
    case 'get': {
      const got = answer(() => bucket.get(key));
      if (expect.value !== undefined && got.error === undefined) return checkValue(valueBytes(expect.value), got.ok);
      return checkError(expect, got, (v) => `the value ${describeBytes(Buffer.from(v))}`, mentions);
    }
    case 'exists': {
      const got = answer(() => bucket.exists(key));
      const shown = (size) => (size === null || size === undefined ? 'absent' : `size ${size}`);
      if (expect.size !== undefined && got.error === undefined) {
        const size = got.ok === null || got.ok === undefined ? null : Number(got.ok);
        if (size === expect.size) return;
        throw new Error(`expected ${shown(expect.size)}, got ${shown(size)}`);
      }
      return checkError(expect, got, shown, mentions);
    }
    case 'list': {
      const got = answer(() => bucket.list(`${prefix}${step.prefix}`));
      if (expect.listed !== undefined && got.error === undefined) return checkListed(expect.listed, prefix, started, got.ok);
      return checkError(expect, got, (v) => `a listing of ${v.length} objects`, mentions);
    }
    case 'list-delimited': {
      // The delimiter listing is optional in a bucket (CONTRACT.md §2), and neither JS
      // bucket has one: a host folds the plain listing, so that fallback is what runs.
      // Once a link is planted the fold differs from a file:// store's own listing,
      // which reads one folder: the fold lists every key beneath and so fails closed at
      // a link the other never reaches. Those steps check the folder's own listing.
      if (typeof bucket.listDelimited !== 'function' && folder !== null && folder.planted.length > 0) return;
      const lister = typeof bucket.listDelimited === 'function'
        ? (p) => bucket.listDelimited(p)
        : (p) => foldedListing(bucket, p);
      const got = answer(() => lister(`${prefix}${step.prefix}`));
      if (expect.delimited !== undefined && got.error === undefined) {
        const want = expect.delimited.folders.flatMap((f) => (typeof f === 'string' ? [f] : generated(f.keys)));
        const seen = got.ok.folders.map((f) => (f.startsWith(prefix) ? f.slice(prefix.length) : `${f} (outside the case's prefix)`));
        assert.deepEqual(seen, want, 'folders');
        return checkListed(expect.delimited.objects, prefix, started, got.ok.objects);
      }
      return checkError(expect, got, (v) => `a listing of ${v.folders.length} folders`, mentions);
    }
    default:
      throw new Error(`unknown op ${quote(step.op)}`);
  }
}

/**
 * The delimiter listing of `full` folded from the bucket's plain listing, as the Rust
 * host answers for a bucket without one (`Delimited::from_listing`): a prefix naming no
 * folder is the host's refusal (denied) before any bucket call; a listing that fails
 * fails it.
 */
function foldedListing(bucket, full) {
  // The host's check_folder_prefix: empty, or a key followed by `/`.
  if (full !== '') {
    if (!full.endsWith('/')) throw new rs.BucketError('denied', `${quote(full)} is not a folder prefix`);
    rs.checkKey(full.slice(0, -1));
  }
  const folders = new Set();
  const objects = [];
  for (const o of bucket.list(full)) {
    const rest = o.key.slice(full.length);
    const slash = rest.indexOf('/');
    if (slash >= 0) folders.add(`${full}${rest.slice(0, slash + 1)}`);
    else objects.push(o);
  }
  const bytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  return { folders: [...folders].sort(bytes), objects: objects.sort((a, b) => bytes(a.key, b.key)) };
}

/** What a step asks of the bucket, for a failure's message. */
function callOf(step, prefix) {
  if (step.op === 'list' || step.op === 'list-delimited') return `${step.op} ${quote(`${prefix}${step.prefix}`)}`;
  if (step.op === 'delete-many') return `delete-many of ${step.keys?.count ?? step.many.length} keys`;
  if (step.op === 'plant') return `plant ${step.what} ${quote(`${prefix}${step.path}`)}`;
  if (step.keys !== undefined) return `put ${step.keys.count} generated keys`;
  const key = step.key !== undefined ? `${prefix}${step.key}` : step.raw_key.replaceAll('{prefix}', prefix);
  return `${step.op} ${quote(key)}`;
}

/** Runs `testCase` under a fresh prefix, then removes what it planted (last first) and
 *  deletes what is left under it. `root`: the folder of a folder bucket, else null. */
function runCase(bucket, testCase, root) {
  const prefix = uniquePrefix(testCase.name);
  const started = seconds();
  const folder = root === null ? null : { root, planted: [] };
  try {
    testCase.steps.forEach((step, i) => {
      try {
        runStep(bucket, step, prefix, started, folder);
      } catch (e) {
        throw new Error(`case ${testCase.name}, step ${i + 1} (${callOf(step, prefix)}): ${e.message}`, { cause: e });
      }
    });
  } finally {
    // What was planted goes first: a link or a FIFO left in place would fail the listing
    // the clean-up below makes.
    for (const path of (folder?.planted ?? []).reverse()) unlinkSync(path);
    try {
      for (const o of bucket.list(prefix)) bucket.delete(o.key);
    } catch {
      // Cleaning up is best effort: the case's outcome does not depend on it.
    }
  }
}

/** Each bucket: `make(t)` gives {bucket, root}, `root` the folder it keeps its objects
 *  in (null: none, and folder cases are skipped). */
const buckets = {
  MemoryBucket: { folder: false, make: () => ({ bucket: new rs.MemoryBucket(), root: null }) },
  FolderBucket: {
    folder: true,
    make: (t) => {
      const bucket = new rs.FolderBucket(tempDir(t, 'render-store-conformance-'));
      t.after(() => bucket.close());
      return { bucket, root: bucket.root };
    },
  },
};
/** What a case may need beyond a bucket. */
const NEEDS = new Set(['folder']);

test('the conformance file has cases with unique names, each needing what a runner knows', () => {
  const names = FILE.cases.map((c) => c.name);
  assert.ok(names.length > 0);
  assert.deepEqual(names, [...new Set(names)]);
  for (const c of FILE.cases) assert.ok(c.needs === undefined || NEEDS.has(c.needs), `${c.name} needs ${quote(c.needs)}`);
  assert.ok(FILE.cases.some((c) => c.needs === 'folder'), 'no folder case');
});

for (const [bucketName, { folder, make }] of Object.entries(buckets)) {
  for (const testCase of FILE.cases) {
    const skip = testCase.needs === 'folder' && !folder ? `a folder case, and ${bucketName} keeps no folder` : false;
    test(`${bucketName}: ${testCase.name} (CONTRACT.md ${testCase.section})`, { skip }, (t) => {
      try {
        const { bucket, root } = make(t);
        runCase(bucket, testCase, root);
      } catch (e) {
        e.message = `${bucketName}: ${e.message}`;
        throw e;
      }
    });
  }
}
