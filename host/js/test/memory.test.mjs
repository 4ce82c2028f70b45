// The Node host over JS buckets: the in-memory bucket through every store operation,
// error mapping (WIT error variant → RenderStoreError.kind), JS buckets that fail, and
// the release scope.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';
import { manifest } from './helpers.mjs';

const { BucketError, MemoryBucket, RenderStoreError } = rs;
const release = { namespace: 'default', name: 'guestbook' };
const P = 'default/guestbook/';
const t0 = 1_700_000_000;

/** A bucket that records the calls it gets and passes them on. */
function recording(inner) {
  const calls = [];
  const bucket = {};
  for (const call of ['get', 'put', 'exists', 'list', 'delete']) {
    bucket[call] = (key, value) => {
      calls.push(`${call} ${key}`);
      return inner[call](key, value);
    };
  }
  return { bucket, calls };
}

const isError = (kind, pattern) => (e) => {
  assert.ok(e instanceof RenderStoreError, `expected a RenderStoreError, got ${e}`);
  assert.equal(e.kind, kind, e.message);
  if (pattern) assert.match(e.message, pattern);
  return true;
};

test('the in-memory bucket serves every store operation', () => {
  const mem = new MemoryBucket();
  const { bucket, calls } = recording(mem);
  const s = rs.store(bucket);
  const renders = [[manifest('a')], [manifest('b'), manifest('c')], [manifest('d', { x: '1' })]];
  const refs = renders.map((objects) => s.putRender(release, objects));
  assert.deepEqual(refs, renders.map((objects) => rs.renderRef(objects)));
  assert.deepEqual(calls.splice(0), refs.flatMap((r) => [`exists ${P}renders/${r}`, `put ${P}renders/${r}`]));
  // put-render is write-once: a second put only asks exists.
  assert.equal(s.putRender(release, renders[0]), refs[0]);
  assert.deepEqual(calls.splice(0), [`exists ${P}renders/${refs[0]}`]);

  for (const [i, r] of refs.entries()) {
    assert.deepEqual(Buffer.from(s.getRender(release, r)), Buffer.from(rs.canonical(renders[i])));
    assert.equal(s.hasHistoryRef(release, r), false);
    assert.equal(s.recordHistory(release, { renderRef: r, syncedAt: { seconds: t0 + i * 60, nanoseconds: i }, summary: `v${i}` }), true);
  }
  assert.equal(s.recordHistory(release, { renderRef: refs[1], syncedAt: { seconds: t0 + 999, nanoseconds: 0 }, summary: 'again' }), false);
  assert.equal(s.hasHistoryRef(release, refs[2]), true);

  const history = s.listHistory(release);
  assert.deepEqual(history.map((e) => [e.renderRef, e.syncedAt, e.summary]), refs.map((r, i) => [r, { seconds: t0 + i * 60, nanoseconds: i }, `v${i}`]));
  for (const e of history) {
    assert.equal(e.key, rs.historyKey(release, e.syncedAt, e.renderRef));
    assert.deepEqual(rs.parseKey(release, e.key), { history: { syncedAt: e.syncedAt, renderRef: e.renderRef } });
  }

  // GC keeping one entry, protecting the first render, without a grace period: the dry
  // run plans, plan-gc agrees from the listings alone, the real run deletes exactly the
  // plan.
  calls.splice(0);
  const noGrace = { graceSeconds: 0 };
  const dry = s.gc(release, 1, [refs[0]], true, noGrace);
  assert.deepEqual(calls.splice(0), [`list ${P}history/`, `list ${P}renders/`]);
  const historyKeys = mem.list(`${P}history/`).map((o) => o.key);
  const renderKeys = mem.list(`${P}renders/`).map((o) => o.key);
  assert.deepEqual(rs.planGc(release, 1, historyKeys, renderKeys, [refs[0]]), dry);
  assert.deepEqual(dry, {
    deleteHistory: history.slice(0, 2).map((e) => e.key),
    keepHistory: [history[2].key],
    deleteRenders: [`${P}renders/${refs[1]}`],
    keepRenders: [refs[0], refs[2]].map((r) => `${P}renders/${r}`).sort(),
    ignored: [],
    recentRenders: [],
    futureHistory: [],
    danglingHistory: [],
  });
  assert.deepEqual(s.gc(release, 1, [refs[0]], false, noGrace), dry);
  // The real run lists the history and the renders, deletes the old entries, lists the
  // history again, then deletes the blobs.
  assert.deepEqual(calls.splice(0), [
    `list ${P}history/`,
    `list ${P}renders/`,
    ...dry.deleteHistory.map((k) => `delete ${k}`),
    `list ${P}history/`,
    ...dry.deleteRenders.map((k) => `delete ${k}`),
  ]);
  assert.deepEqual([...mem.objects.keys()].sort(), [...dry.keepHistory, ...dry.keepRenders].sort());
  assert.throws(() => s.getRender(release, refs[1]), isError('not-found', /is not in the store/));
  // keep <= 0 makes no call at all.
  calls.splice(0);
  assert.deepEqual(s.gc(release, 0), { deleteHistory: [], keepHistory: [], deleteRenders: [], keepRenders: [], ignored: [], recentRenders: [], futureHistory: [], danglingHistory: [] });
  assert.deepEqual(calls, []);

  // A foreign key under the prefix is left alone by GC and deleted by delete-release.
  mem.put(`${P}notes/readme`, new TextEncoder().encode('hi'));
  mem.put('other/app/renders/x', new Uint8Array([1]));
  assert.equal(s.deleteRelease(release), 1 + 2 + 1);
  assert.deepEqual([...mem.objects.keys()], ['other/app/renders/x']);
  assert.deepEqual(s.listHistory(release), []);
});

test('GC spares an unreferenced blob younger than the grace period and lists it in recentRenders', () => {
  let clock = { seconds: t0, nanoseconds: 0 };
  const mem = new MemoryBucket({ clock: () => clock });
  const { bucket, calls } = recording(mem);
  const s = rs.store(bucket);
  const key = (ref) => `${P}renders/${ref}`;
  const old = s.putRender(release, [manifest('old')]);
  clock = { seconds: t0 + 500, nanoseconds: 1 };
  const young = s.putRender(release, [manifest('young')]);
  const live = s.putRender(release, [manifest('live')]);
  s.recordHistory(release, { renderRef: live, syncedAt: { seconds: t0, nanoseconds: 0 }, summary: '' });
  const at = (seconds, nanoseconds = 0) => ({ now: { seconds, nanoseconds }, graceSeconds: 600 });

  // At t0 + 1000 with 10 minutes of grace: `old` (1000 s) goes, `young` (500 s) stays.
  calls.splice(0);
  const dry = s.gc(release, 1, [], true, at(t0 + 1000));
  assert.deepEqual(calls.splice(0), [`list ${P}history/`, `list ${P}renders/`]);
  assert.deepEqual([dry.deleteRenders, dry.keepRenders, dry.recentRenders], [[key(old)], [key(live)], [key(young)]]);
  // plan-gc has no modification times: no grace period, `young` would go.
  const listedKeys = (prefix) => mem.list(prefix).map((o) => o.key);
  const planned = rs.planGc(release, 1, listedKeys(`${P}history/`), listedKeys(`${P}renders/`));
  assert.deepEqual(planned.recentRenders, []);
  assert.deepEqual(planned.deleteRenders, [key(old), key(young)].sort());
  // The real run deletes what the dry run planned, and nothing younger.
  assert.deepEqual(s.gc(release, 1, [], false, at(t0 + 1000)), dry);
  assert.deepEqual(calls.filter((c) => c.startsWith('delete')), [`delete ${key(old)}`]);
  assert.deepEqual(Buffer.from(s.getRender(release, young)), Buffer.from(rs.canonical([manifest('young')])));

  // The boundary, to the nanosecond: younger than 600 s is spared, 600 s is not; a blob
  // modified after `now` (a skewed clock) is spared too.
  assert.deepEqual(s.gc(release, 1, [], true, at(t0 + 1100, 0)).recentRenders, [key(young)]);
  assert.deepEqual(s.gc(release, 1, [], true, at(t0 + 1100, 1)).deleteRenders, [key(young)]);
  assert.deepEqual(s.gc(release, 1, [], true, at(t0 + 400)).recentRenders, [key(young)]);

  // Grace 0: every unreferenced blob goes, whatever its age.
  calls.splice(0);
  const none = s.gc(release, 1, [], false, { now: { seconds: t0 + 500, nanoseconds: 1 }, graceSeconds: 0 });
  assert.deepEqual([none.deleteRenders, none.recentRenders], [[key(young)], []]);
  assert.deepEqual(calls.filter((c) => c.startsWith('delete')), [`delete ${key(young)}`]);
  assert.deepEqual(listedKeys(`${P}renders/`), [key(live)]);
});

test('WIT errors map to RenderStoreError kinds', () => {
  const mem = new MemoryBucket();
  const { bucket, calls } = recording(mem);
  // invalid-input: rejected before any bucket call.
  assert.throws(() => rs.putRender(bucket, { namespace: 'Default', name: 'x' }, [manifest('a')]), isError('invalid-input', /namespace "Default"/));
  assert.throws(() => rs.getRender(bucket, release, 'sha256:abc'), isError('invalid-input'));
  assert.throws(() => rs.recordHistory(bucket, release, { renderRef: rs.renderRef([]), syncedAt: { seconds: 400_000_000_000, nanoseconds: 0 }, summary: '' }), isError('invalid-input'));
  assert.throws(() => rs.gc(bucket, release, 3, ['nope']), isError('invalid-input'));
  assert.deepEqual(calls, []);
  // invalid-object, with the index of the first bad object.
  assert.throws(() => rs.putRender(bucket, release, [manifest('a'), '{"a":', manifest('b')]), (e) => isError('invalid-object')(e) && e.index === 1);
  assert.deepEqual(calls, []);
  // not-found and corrupt.
  const ref = rs.putRender(bucket, release, [manifest('a')]);
  assert.throws(() => rs.getRender(bucket, release, rs.renderRef([manifest('zzz')])), isError('not-found'));
  mem.objects.set(`${P}renders/${ref}`, new TextEncoder().encode('{"tampered":true}\n'));
  assert.throws(() => rs.getRender(bucket, release, ref), isError('corrupt', new RegExp(`blob ${P}renders/${ref} hashes to sha256:`)));
  mem.put(`${P}history/20240101T000000.000000000Z-${ref}`, new TextEncoder().encode('not json'));
  assert.throws(() => rs.listHistory(bucket, release), isError('corrupt'));
  // JS argument mistakes are TypeErrors, before the component.
  assert.throws(() => rs.putRender(bucket, release, 'not an array'), TypeError);
  assert.throws(() => rs.gc(bucket, release, 1.5), TypeError);
  assert.throws(() => rs.gc(bucket, release, 2n ** 63n), TypeError);
  assert.throws(() => rs.gc(bucket, release, 1, [], false, { graceSeconds: -1 }), TypeError);
  assert.throws(() => rs.gc(bucket, release, 1, [], false, { now: { seconds: 1.5, nanoseconds: 0 } }), TypeError);
  assert.throws(() => rs.getRender(bucket, 'no-slash', ref), TypeError);
});

test('a JS bucket that throws gives the bucket error kind', () => {
  const boom = (call) => ({
    get: () => new Uint8Array(),
    put: () => {},
    exists: () => null,
    list: () => [],
    delete: () => {},
    [call]: () => {
      throw new Error(`disk on fire during ${call}`);
    },
  });
  const ref = rs.renderRef([manifest('a')]);
  const cases = [
    ['exists', () => rs.putRender(boom('exists'), release, [manifest('a')]), `exists ${P}renders/${ref}`],
    ['put', () => rs.putRender(boom('put'), release, [manifest('a')]), `put ${P}renders/${ref}`],
    ['get', () => rs.getRender(boom('get'), release, ref), `get ${P}renders/${ref}`],
    ['list', () => rs.listHistory(boom('list'), release), `list ${P}history/`],
    ['list', () => rs.gc(boom('list'), release, 1), `list ${P}history/`],
    ['list', () => rs.deleteRelease(boom('list'), release), `list ${P}`],
  ];
  for (const [call, run, named] of cases) {
    // The component names the call and the key; the text is the thrown error's message.
    assert.throws(run, isError('bucket', new RegExp(`^${named}: disk on fire during ${call}$`)));
  }
  const mem = new MemoryBucket();
  rs.putRender(mem, release, [manifest('a')]);
  const failingDelete = { ...boom('delete'), list: (p) => mem.list(p) };
  // Deletes go in batches (a delete each, for a bucket without deleteMany): the error
  // names every key of the batch that failed.
  assert.throws(() => rs.deleteRelease(failingDelete, release), isError('bucket', /^delete-many: 1 of 1 keys could not be deleted: default\/guestbook\/renders\/sha256:[0-9a-f]{64}: disk on fire during delete$/));

  // A BucketError keeps its variant: denied and failed carry their text, not-found is
  // the component's not-found.
  const answering = (err) => ({ ...boom('none'), get: () => { throw err; } });
  assert.throws(() => rs.getRender(answering(new BucketError('denied', 'read-only')), release, ref), isError('bucket', /: denied: read-only$/));
  assert.throws(() => rs.getRender(answering(new BucketError('failed', 'timeout')), release, ref), isError('bucket', /: timeout$/));
  assert.throws(() => rs.getRender(answering(new BucketError('not-found')), release, ref), isError('not-found', /is not in the store/));
  assert.throws(() => rs.getRender({ get: () => undefined }, release, ref), isError('not-found'));
  // Things a bucket must not answer.
  assert.throws(() => rs.getRender({ get: async () => new Uint8Array() }, release, ref), isError('bucket', /synchronously/));
  assert.throws(() => rs.getRender({ get: () => 'text' }, release, ref), isError('bucket', /not bytes/));
  assert.throws(() => rs.putRender({ exists: () => 'yes' }, release, [manifest('a')]), isError('bucket', /not a size or null/));
  assert.throws(() => rs.putRender({ exists: () => true }, release, [manifest('a')]), isError('bucket', /not a size or null/));
  assert.throws(() => rs.putRender({ exists: () => -1 }, release, [manifest('a')]), isError('bucket', /not a size or null/));
  const listingError = /array of \{key, size, modified: \{seconds, nanoseconds\}\}/;
  assert.throws(() => rs.listHistory({ list: () => [1, 2] }, release), isError('bucket', listingError));
  assert.throws(() => rs.listHistory({ list: () => [`${P}history/x`] }, release), isError('bucket', listingError));
  const late = { key: `${P}history/x`, size: 1, modified: { seconds: 0, nanoseconds: 1e9 } };
  assert.throws(() => rs.listHistory({ list: () => [late] }, release), isError('bucket', listingError));
  assert.throws(() => rs.listHistory({}, release), isError('bucket', /has no list method/));
  // Throwing something that is not an Error.
  assert.throws(() => rs.listHistory({ list: () => { throw 'plain string'; } }, release), isError('bucket', /plain string$/));
});

test('an answer that cannot be read is the bucket call\'s failure, never a trap', () => {
  const mem = new MemoryBucket();
  const ref = rs.putRender(mem, release, [manifest('a')]);
  rs.recordHistory(mem, release, { renderRef: ref, syncedAt: { seconds: t0, nanoseconds: 0 }, summary: '' });
  const over = (answers) => ({
    get: (k) => mem.get(k),
    put: (k, v) => mem.put(k, v),
    exists: (k) => mem.exists(k),
    list: (p) => mem.list(p),
    delete: (k) => mem.delete(k),
    ...answers,
  });
  const throwing = (what) => ({ get() { throw new Error(`${what} getter on fire`); } });
  const entry = (p) => mem.list(p)[0];
  // The component's own lead (`<call> <key>: `), then the host's backend-style words.
  const failedAs = (call, key, text) => isError('bucket', new RegExp(`^${call} ${key}: ${call} "${key}": ${text}$`));
  const history = `${P}history/`;
  const blob = `${P}renders/${ref}`;
  const cases = [
    // A listing entry whose properties throw when read.
    ['a key getter', () => rs.listHistory(over({ list: (p) => [Object.defineProperty({ ...entry(p) }, 'key', throwing('key'))] }), release), failedAs('list', history, "the bucket's list answer could not be read: key getter on fire")],
    ['a modified getter', () => rs.gc(over({ list: (p) => [Object.defineProperty({ ...entry(p) }, 'modified', throwing('modified'))] }), release, 1, [], true), failedAs('list', history, "the bucket's list answer could not be read: modified getter on fire")],
    ['a seconds getter', () => rs.gc(over({ list: (p) => [{ ...entry(p), modified: Object.defineProperty({ nanoseconds: 0 }, 'seconds', throwing('seconds')) }] }), release, 1, [], true), failedAs('list', history, "the bucket's list answer could not be read: seconds getter on fire")],
    // A value whose `then` throws, and arrays and bytes behind proxies that throw.
    ['a then getter', () => rs.listHistory(over({ list: () => Object.defineProperty([], 'then', throwing('then')) }), release), failedAs('list', history, "the bucket's list answer could not be read: then getter on fire")],
    ['a proxy of an array', () => rs.listHistory(over({ list: () => new Proxy([], { get() { throw new Error('proxy on fire'); } }) }), release), failedAs('list', history, "the bucket's list answer could not be read: proxy on fire")],
    ['a proxy of bytes', () => rs.getRender(over({ get: (k) => new Proxy(mem.get(k), { get() { throw new Error('bytes on fire'); } }) }), release, ref), failedAs('get', blob, "the bucket's get answer could not be read: bytes on fire")],
    // A size of the wrong type that cannot even be shown.
    ['an unprintable size', () => rs.putRender(over({ exists: () => ({ toString() { throw new Error('no text'); } }) }), release, [manifest('b')]), isError('bucket', /: exists "default\/guestbook\/renders\/sha256:[0-9a-f]{64}": the bucket's exists returned object \[object Object\], not a size or null$/)],
    // Thrown values that cannot be read: a BucketError whose message throws, an object
    // that has no string form.
    ['a BucketError whose message throws', () => rs.listHistory(over({ list: () => { throw Object.defineProperty(new BucketError('denied', 'x'), 'message', throwing('message')); } }), release), failedAs('list', history, 'the bucket threw a value that could not be read: message getter on fire')],
    ['a thrown object without a string form', () => rs.listHistory(over({ list: () => { throw Object.create(null); } }), release), isError('bucket', /^list default\/guestbook\/history\/: \[object Object\]$/)],
    // delete-many's answer, read as the others are.
    ['a deleteMany answer whose length throws', () => rs.deleteRelease(over({ deleteMany: () => new Proxy([], { get(target, name) { if (name === 'length') throw new Error('length on fire'); return target[name]; } }) }), release), isError('bucket', /: delete-many "default\/guestbook\/history\/[^"]+": the bucket's deleteMany answer could not be read: length on fire$/)],
  ];
  for (const [what, run, check] of cases) assert.throws(run, check, what);
  // A getter that answers a string to a check and a number after is read once: the
  // listing is what the first read said.
  let reads = 0;
  const fickle = (p) => [Object.defineProperty({ ...entry(p) }, 'key', { get: () => (reads++ === 0 ? entry(p).key : 7) })];
  assert.deepEqual(rs.listHistory(over({ list: fickle }), release).map((e) => e.renderRef), [ref]);
  assert.equal(reads, 1);
  // Nothing was lost to them, and the next call over the same bucket works.
  assert.deepEqual(rs.listHistory(mem, release).map((e) => e.renderRef), [ref]);
  assert.deepEqual(Buffer.from(rs.getRender(mem, release, ref)), Buffer.from(rs.canonical([manifest('a')])));
});

test('a key outside the release prefix is denied before the bucket, as the Rust host words it', () => {
  const { bucket, calls } = recording(new MemoryBucket());
  const imports = rs.scopedBucket(bucket, 'ns/app');
  // The keys of the Rust host's own test (host/render-store/src/runtime/mod.rs).
  for (const key of ['ns/app2/renders/x', 'ns/ap', 'other/app/x', '', 'ns/app']) {
    for (const [call, args] of [['get', []], ['put', [new Uint8Array([1])]], ['exists', []], ['list', []], ['delete', []]]) {
      assert.throws(() => imports[call](key, ...args), (e) => {
        assert.deepEqual(e.payload, { tag: 'denied', val: `key ${JSON.stringify(key)} lies outside "ns/app/", the prefix of the release being served` });
        return true;
      }, `${call} ${JSON.stringify(key)}`);
    }
  }
  assert.deepEqual(calls, []);
  // The component hands a value to store as a WIT `data`, bytes; the JS bucket gets them.
  imports.put('ns/app/renders/x', new TextEncoder().encode('x'));
  // What the component is given: sizes and times as bigints, an absent object as not-found.
  const listed = imports.list('ns/app/');
  assert.deepEqual(listed.map((o) => [o.key, o.size, typeof o.modified.seconds, typeof o.modified.nanoseconds]), [['ns/app/renders/x', 1n, 'bigint', 'number']]);
  assert.equal(imports.exists('ns/app/renders/x'), 1n);
  assert.throws(() => imports.exists('ns/app/renders/y'), (e) => {
    assert.deepEqual(e.payload, { tag: 'not-found' });
    return true;
  });
  assert.deepEqual(calls, ['put ns/app/renders/x', 'list ns/app/', 'exists ns/app/renders/x', 'exists ns/app/renders/y']);
  imports.put('ns/app/renders/x', new Uint8Array([0xff, 0x0a]));
  assert.deepEqual(imports.get('ns/app/renders/x'), new Uint8Array([0xff, 0x0a]));
  calls.length = 0;
  // Keys are quoted as JSON strings (messages.test.mjs checks hostile ones in every host).
  const odd = 'x"\n\t\\\u0001\u200b\u2028\u007f';
  assert.throws(() => imports.get(odd), (e) => e.payload.val === 'key "x\\"\\n\\t\\\\\\u0001\u200b\u2028\u007f" lies outside "ns/app/", the prefix of the release being served');
});

test('the memory bucket keeps the bucket contract of the Rust host', () => {
  let clock = { seconds: t0, nanoseconds: 5 };
  const mem = new MemoryBucket({ clock: () => clock });
  assert.throws(() => mem.get('a/b'), (e) => e instanceof BucketError && e.kind === 'not-found');
  assert.equal(mem.exists('a/b'), null);
  mem.delete('a/b'); // absent: fine
  for (const key of ['a/é', 'a/b', 'a/B', 'a/\u{1F600}', 'a/\uFFFD', 'ab', 'a/b/c']) mem.put(key, new Uint8Array([1]));
  const keys = (prefix) => mem.list(prefix).map((o) => o.key);
  // Sorted by UTF-8 bytes (not UTF-16 units: U+1F600 sorts after U+FFFD).
  assert.deepEqual(keys('a/'), ['a/B', 'a/b', 'a/b/c', 'a/é', 'a/\uFFFD', 'a/\u{1F600}']);
  assert.deepEqual(keys('a'), ['a/B', 'a/b', 'a/b/c', 'a/é', 'a/\uFFFD', 'a/\u{1F600}', 'ab']);
  assert.deepEqual(keys('a/b'), ['a/b', 'a/b/c']);
  // Each object's size, and its modification time by the bucket's clock at its put.
  clock = { seconds: t0 + 60, nanoseconds: 0 };
  mem.put('a/b', new Uint8Array([1, 2, 3]));
  assert.equal(mem.exists('a/b'), 3);
  assert.deepEqual(mem.list('a/b'), [
    { key: 'a/b', size: 3, modified: { seconds: t0 + 60, nanoseconds: 0 } },
    { key: 'a/b/c', size: 1, modified: { seconds: t0, nanoseconds: 5 } },
  ]);
  // Keys object_store refuses are denied, as in ObjectStoreBucket.
  for (const key of ['', '/a', 'a/', 'a//b', 'a/./b', 'a/../b', 'a/\u0007']) {
    assert.throws(() => mem.put(key, new Uint8Array()), (e) => e.kind === 'denied' && e.message === `${JSON.stringify(key)} is not a valid object key (empty, \`.\` or \`..\` components, or control characters)`, key);
  }
  assert.throws(() => mem.list('a//b/'), (e) => e.kind === 'denied');
  // Stored bytes are copies.
  const value = new Uint8Array([1, 2, 3]);
  mem.put('c', value);
  value[0] = 9;
  assert.deepEqual([...mem.get('c')], [1, 2, 3]);
});

test('the pure logic export', () => {
  const t = { seconds: 1_700_000_000, nanoseconds: 120_000_000 };
  assert.equal(rs.formatKeyTime(t), '20231114T221320.120000000Z');
  assert.deepEqual(rs.parseKeyTime('20231114T221320.120000000Z'), t);
  assert.equal(rs.formatSyncedAt(t), '2023-11-14T22:13:20.12Z');
  assert.deepEqual(rs.parseSyncedAt('2023-11-14T23:13:20.12+01:00'), t);
  assert.equal(rs.releasePrefix(release), P);
  const ref = rs.renderRef([manifest('a')]);
  assert.equal(rs.renderKey(release, ref), `${P}renders/${ref}`);
  assert.deepEqual(rs.parseKey(release, `${P}renders/${ref}`), { render: ref });
  assert.equal(rs.parseKey(release, `${P}renders/${ref}#1`), undefined);
  assert.equal(rs.validateRenderRef(ref), undefined);
  assert.throws(() => rs.validateRenderRef(ref.toUpperCase()), isError('invalid-input'));
  const diff = rs.diffRenders(rs.canonical([manifest('a'), manifest('b')]), rs.canonical([manifest('a', { k: 'v' }), manifest('c')]));
  assert.deepEqual(diff.added.map((o) => o.id.name), ['c']);
  assert.deepEqual(diff.removed.map((o) => o.id.name), ['b']);
  // Added and removed objects whole, in the diff's form.
  assert.match(diff.added[0].text, /name: c\n/);
  assert.match(diff.removed[0].text, /name: b\n/);
  assert.deepEqual(diff.changed.map((c) => c.id.name), ['a']);
  assert.ok(diff.changed[0].lines.some((l) => l.startsWith('+') && l.includes('k: v')), diff.changed[0].lines.join('\n'));
  const asJson = rs.diffRenders(rs.canonical([manifest('a')]), rs.canonical([manifest('a', { k: 'v' })]), 'json');
  assert.ok(asJson.changed[0].lines.some((l) => l.startsWith('+') && l.includes('"k": "v"')), asJson.changed[0].lines.join('\n'));
  assert.throws(() => rs.diffRenders('', '', 'toml'), isError('invalid-input'));
  // Each hunk says where its change is; a whole context shows the object whole.
  const wide = (k) => rs.canonical([manifest('a', Object.fromEntries([...'abcdefghij'].map((c) => [c, c === k ? 'x' : c])))]);
  const short = rs.diffRenders(wide('a'), wide('j'));
  const heads = (d) => d.changed[0].lines.filter((l) => l.startsWith('@@'));
  assert.equal(heads(short).length, 2, short.changed[0].lines.join('\n'));
  assert.ok(heads(short)[0].endsWith(' data.a') && heads(short)[1].endsWith(' data.j'), heads(short).join('\n'));
  const whole = rs.diffRenders(wide('a'), wide('j'), 'yaml', { context: 0xffffffff });
  assert.deepEqual(heads(whole).map((h) => h.split(' @@ ')[1]), ['data.a', 'data.j']);
  assert.ok(whole.changed[0].lines.length > short.changed[0].lines.length);
  assert.throws(() => rs.diffRenders(wide('a'), wide('j'), 'yaml', { context: -1 }), TypeError);
  assert.equal(diff.unchanged, 0);
  assert.throws(() => rs.diffRenders('not json\n', ''), isError('invalid-input'));
  // The store's diff reads both renders in the component and answers the same.
  const { bucket, calls } = recording(new MemoryBucket());
  const oldRef = rs.putRender(bucket, release, [manifest('a'), manifest('b')]);
  const newRef = rs.putRender(bucket, release, [manifest('a', { k: 'v' }), manifest('c')]);
  calls.length = 0;
  assert.deepEqual(rs.store(bucket).diffRenders(release, oldRef, newRef), diff);
  assert.deepEqual(calls, [`get ${P}renders/${oldRef}`, `get ${P}renders/${newRef}`]);
  assert.throws(() => rs.diffStored(bucket, release, oldRef, rs.renderRef([manifest('z')])), isError('not-found'));
  // History pages: newest first, only the page's entries read, a cursor back to the start.
  const s = new rs.RenderStore(bucket);
  s.recordHistory(release, { renderRef: oldRef, syncedAt: { seconds: 1767225600, nanoseconds: 0 }, summary: 'old' });
  s.recordHistory(release, { renderRef: newRef, syncedAt: { seconds: 1767225601, nanoseconds: 0 }, summary: 'new' });
  calls.length = 0;
  const first = s.listHistoryPage(release, 1);
  assert.deepEqual(first.entries.map((e) => e.summary), ['new']);
  assert.equal(calls.filter((c) => c.startsWith('get ')).length, 1);
  const second = s.listHistoryPage(release, 1, first.nextBefore);
  assert.deepEqual(second.entries.map((e) => e.summary), ['old']);
  assert.equal(second.nextBefore, undefined);
  assert.throws(() => s.listHistoryPage(release, 1, `${P}renders/x`), isError('invalid-input'));
  assert.throws(() => s.listHistoryPage(release, 0), TypeError);
  const shown = rs.showObjects(rs.canonical([manifest('a', { k: 'v' }), manifest('b')]));
  assert.deepEqual(shown.map((o) => o.id.name), ['a', 'b']);
  assert.ok(shown[0].text.includes('k: v\n'), shown[0].text);
  assert.throws(() => rs.showObjects('[1]\n'), isError('invalid-input'));
  const other = `sha256:${'b'.repeat(64)}`;
  const summary = rs.summarizeHistory(release, [
    `${P}history/20240501T120000.000000000Z-${other}`,
    `${P}history/notes.txt`,
    `${P}history/20240401T120000.000000000Z-${ref}`,
  ]);
  assert.equal(summary.entries, 2);
  assert.equal(summary.newest.renderRef, other);
  assert.equal(rs.formatSyncedAt(summary.newest.syncedAt), '2024-05-01T12:00:00Z');
  assert.deepEqual(rs.summarizeHistory(release, []), { entries: 0, newest: undefined });
  assert.throws(() => rs.summarizeHistory({ namespace: 'Bad_NS', name: 'x' }, []), isError('invalid-input'));
});

test('GC and delete-release use a bucket\'s deleteMany, 1,000 keys a call, in key order', () => {
  const mem = new MemoryBucket();
  const batches = [];
  const bucket = {
    get: (k) => mem.get(k),
    put: (k, v) => mem.put(k, v),
    exists: (k) => mem.exists(k),
    list: (p) => mem.list(p),
    delete: () => assert.fail('a bucket with deleteMany gets no single delete'),
    deleteMany: (keys) => (batches.push(keys), keys.map((k) => mem.delete(k))),
  };
  const s = rs.store(bucket);
  const live = s.putRender(release, [manifest('live')]);
  s.recordHistory(release, { renderRef: live, syncedAt: { seconds: t0, nanoseconds: 0 } });
  for (let i = 1; i <= 2500; i++) mem.objects.set(`${P}renders/sha256:${i.toString(16).padStart(64, '0')}`, new Uint8Array());
  const plan = s.gc(release, 1, [], false, { graceSeconds: 0 });
  assert.equal(plan.deleteRenders.length, 2500);
  assert.deepEqual(batches.map((b) => b.length), [1000, 1000, 500], 'three batch calls, not 2,500 deletes');
  assert.deepEqual(batches.flat(), plan.deleteRenders);
  assert.equal(mem.objects.size, 2);

  batches.splice(0);
  for (let i = 0; i < 1200; i++) mem.objects.set(`${P}x/${String(i).padStart(4, '0')}`, new Uint8Array());
  assert.equal(s.deleteRelease(release), 1202);
  assert.deepEqual(batches.map((b) => b.length), [1, 1000, 201], 'the entry alone, first');
  const all = batches.flat();
  assert.deepEqual(all, [...all].sort(rs.compareKeys));
  assert.equal(mem.objects.size, 0);
});

test('a batch with failed keys names each and stops; the scope denies keys one by one', () => {
  const mem = new MemoryBucket();
  for (let i = 0; i < 1500; i++) mem.objects.set(`${P}k/${String(i).padStart(4, '0')}`, new Uint8Array());
  const batches = [];
  const bucket = {
    get: (k) => mem.get(k),
    put: (k, v) => mem.put(k, v),
    exists: (k) => mem.exists(k),
    list: (p) => mem.list(p),
    delete: (k) => mem.delete(k),
    deleteMany: (keys) => (batches.push(keys), keys.map((k) => (k.endsWith('/0003') || k.endsWith('/0900') ? new BucketError('failed', `delete ${JSON.stringify(k)}: access denied`) : mem.delete(k)))),
  };
  assert.throws(() => rs.deleteRelease(bucket, release), (e) => {
    isError('bucket', /^delete-many: 2 of 1000 keys could not be deleted: /)(e);
    return [`${P}k/0003: `, `${P}k/0900: `, 'access denied'].every((part) => e.message.includes(part));
  });
  assert.equal(batches.length, 1, 'no batch after the failed one');
  assert.equal(mem.objects.size, 2 + 500);

  // The scope: a key outside the release is denied alone; the others reach the bucket.
  batches.splice(0);
  const scoped = rs.scopedBucket(bucket, release);
  const answers = scoped.deleteMany([`${P}k/1400`, 'other/app/x', `${P}k/1401`]);
  assert.deepEqual(answers.map((a) => a.tag), ['ok', 'err', 'ok']);
  assert.deepEqual(answers[1].val, { tag: 'denied', val: rs.messages.outsidePrefix('other/app/x', P) });
  assert.deepEqual(batches, [[`${P}k/1400`, `${P}k/1401`]]);

  // A deleteMany answering the wrong number of entries fails the whole request.
  const short = { ...bucket, deleteMany: () => [] };
  assert.throws(() => rs.deleteRelease(short, release), isError('bucket', /returned 0 entries for 500 keys/));
});

test('canonical renders come back as bytes, whatever form the input was given in', () => {
  const object = '{"b":1,"a":"é"}';
  const want = '{"a":"é","b":1}\n';
  const yaml = 'b: 1\na: é\n';
  const bucket = new MemoryBucket();
  for (const given of [object, new TextEncoder().encode(object)]) {
    const canonical = rs.canonical([given]);
    assert.ok(canonical instanceof Uint8Array);
    assert.equal(Buffer.from(canonical).toString('utf8'), want);
    const ref = rs.putRender(bucket, 'ns/app', [given]);
    const back = rs.getRender(bucket, 'ns/app', ref);
    assert.ok(back instanceof Uint8Array);
    assert.deepEqual(Buffer.from(back), Buffer.from(want));
  }
  for (const given of [yaml, new TextEncoder().encode(yaml)]) {
    const canonical = rs.yamlCanonical(given);
    assert.ok(canonical instanceof Uint8Array);
    assert.equal(Buffer.from(canonical).toString('utf8'), want);
  }
});
