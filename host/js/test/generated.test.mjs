// The functions render-store-bindgen generates from the WIT (api.generated.mjs): every
// function of the exports logic, store and trace is reachable from the package under its
// camelCase name, and the generated ones run for real against a memory bucket, their
// values checked against the hand-written functions and the component's own answers.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as rs from '@convoy/render-store';
import { REPO } from './helpers.mjs';

const { MemoryBucket, RenderStoreError } = rs;
const NAME = 'prod/web';
const P = `${NAME}/`;
const release = { namespace: 'prod', name: 'web' };
const t0 = 1_767_225_600; // 2026-01-01T00:00:00Z
const decode = (bytes) => new TextDecoder().decode(bytes);

/** The one export the package names otherwise: `diffRenders` is logic.diff-renders. */
const RENAMED = { 'store.diff-renders': 'diffStored' };
const camel = (name) => name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());

/** A Deployment `web` whose container `app` runs `image`, and a ConfigMap. */
function render(image, mode = 'blue') {
  return [
    JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'prod' }, spec: { replicas: 2, template: { spec: { containers: [{ name: 'app', image }] } } } }),
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'prod' }, data: { mode } }),
  ];
}

/** A memory store with three renders and their entries, an hour apart: nginx 1.25, then
 *  1.26, then 1.26 again with the ConfigMap changed. */
function threeSyncs(keyring = []) {
  const bucket = new MemoryBucket();
  const renders = [render('nginx:1.25'), render('nginx:1.26'), render('nginx:1.26', 'green')];
  const refs = renders.map((objects, i) => {
    const ref = rs.putRender(bucket, release, objects, keyring);
    rs.recordHistory(bucket, release, { renderRef: ref, syncedAt: { seconds: t0 + i * 3600, nanoseconds: 0 }, summary: `sync ${i}` }, keyring);
    return ref;
  });
  return { bucket, renders, refs };
}

const isError = (kind, pattern) => (e) => {
  assert.ok(e instanceof RenderStoreError, `expected a RenderStoreError, got ${e}`);
  assert.equal(e.kind, kind, e.message);
  if (pattern) assert.match(e.message, pattern);
  return true;
};

test('every function of logic, store and trace is a function of the package, under its camelCase name', async () => {
  const { WORLD } = await import(pathToFileURL(join(REPO, 'host/js/generated/js/component.js')).href);
  const missing = [];
  let count = 0;
  for (const iface of ['logic', 'store', 'trace']) {
    for (const fn of Object.keys(WORLD.exports[iface].functions)) {
      const name = RENAMED[`${iface}.${fn}`] ?? camel(fn);
      count += 1;
      if (typeof rs[name] !== 'function') missing.push(`${iface}.${fn} (${name})`);
    }
  }
  assert.deepEqual(missing, []);
  assert.ok(count > 50, `${count} functions`);
  // The generated ones are the browser entry's too.
  const core = await import('@convoy/render-store/core');
  for (const name of ['blameObject', 'releaseImages', 'indexObjects', 'parseKeys', 'outcomeJson', 'writeTrace']) {
    assert.equal(core[name], rs[name], name);
  }
});

test('store.blame-object names the entry that last changed each field', () => {
  const { bucket, refs } = threeSyncs();
  const blame = rs.blameObject(bucket, NAME, 'deployment/web', undefined, 'masked');
  assert.deepEqual(blame.object, { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'prod', name: 'web' });
  assert.deepEqual(blame.entries, refs.map((renderRef, i) => ({ syncedAt: { seconds: BigInt(t0 + i * 3600), nanoseconds: 0 }, renderRef })));
  assert.equal(blame.newest, 2);
  const fields = Object.fromEntries(blame.fields.map((f) => [f.path, [f.value, f.entry]]));
  assert.deepEqual(fields['spec.template.spec.containers[name=app].image'], ['"nginx:1.26"', 1]);
  assert.deepEqual(fields['spec.replicas'], ['2', 0]);
  assert.deepEqual(fields.kind, ['"Deployment"', 0]);
  // Under one field only; an object no render holds is not-found.
  const under = rs.blameObject(bucket, release, 'prod/Deployment/web', 'spec.template', 'masked');
  assert.deepEqual(under.fields.map((f) => f.path), ['spec.template.spec.containers[name=app].image', 'spec.template.spec.containers[name=app].name']);
  assert.throws(() => rs.blameObject(bucket, release, 'deployment/nope', undefined, 'masked'), isError('not-found'));
  // An argument abi.mjs cannot lower is a TypeError, before any call.
  assert.throws(() => rs.blameObject(bucket, release, 'deployment/web', undefined, 'hidden'), TypeError);
});

test('store.release-images gives each image its interval; store.render-objects each render its objects', () => {
  const { bucket, refs, renders } = threeSyncs();
  const at = (i) => ({ seconds: BigInt(t0 + i * 3600), nanoseconds: 0 });
  assert.deepEqual(rs.releaseImages(bucket, release), [
    { image: 'docker.io/library/nginx:1.25', from: at(0), until: at(1), renderRefs: [refs[0]] },
    { image: 'docker.io/library/nginx:1.26', from: at(1), until: undefined, renderRefs: [refs[1], refs[2]] },
  ]);
  assert.deepEqual(rs.releaseImages(bucket, release, 'nginx:1.25').map((i) => i.image), ['docker.io/library/nginx:1.25']);
  // The window: only what meets [since, until).
  assert.deepEqual(rs.releaseImages(bucket, release, undefined, at(2), undefined).map((i) => i.image), ['docker.io/library/nginx:1.26']);
  assert.throws(() => rs.releaseImages(bucket, release, '::'), isError('invalid-input', /image pattern/));

  const objects = rs.renderObjects(bucket, release, [refs[1], refs[0]]);
  assert.deepEqual(objects.map((o) => o.renderRef), [refs[1], refs[0]]);
  // The same rows logic.index-objects gives for the render's canonical bytes, each
  // object's hash the SHA-256 of its canonical line.
  assert.deepEqual(objects[1].objects, rs.indexObjects(rs.canonical(renders[0])));
  const [deployment, configMap] = objects[0].objects;
  assert.deepEqual(deployment.id, { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'prod', name: 'web' });
  assert.deepEqual(deployment.images, ['docker.io/library/nginx:1.26']);
  assert.deepEqual(configMap.images, []);
  const lines = decode(rs.canonical(renders[1])).trimEnd().split('\n');
  assert.deepEqual([deployment.hash, configMap.hash], lines.map((l) => rs.sha256Hex(l)));
});

test('store.check-index and store.rebuild-index see the release index as index-release leaves it', () => {
  const { bucket } = threeSyncs();
  assert.deepEqual(rs.checkIndex(bucket, release), { present: false, unusable: undefined, disagreeing: [], read: 0 });
  const made = rs.indexRelease(bucket, release);
  assert.equal(made.indexed, 3);
  assert.equal(made.written, true);
  assert.ok(bucket.objects.has(rs.indexKey(release)));
  assert.equal(rs.indexKey(NAME), `${P}index/v1`);
  assert.deepEqual(rs.checkIndex(bucket, release), { present: true, unusable: undefined, disagreeing: [], read: 3 });
  // A stored index that is not one is unusable; rebuilding reads every render again.
  bucket.put(`${P}index/v1`, new TextEncoder().encode('not an index'));
  const broken = rs.checkIndex(bucket, release);
  assert.equal(broken.present, true);
  assert.equal(typeof broken.unusable, 'string');
  const rebuilt = rs.rebuildIndex(bucket, release);
  assert.deepEqual([rebuilt.renders, rebuilt.indexed, rebuilt.read, rebuilt.pruned, rebuilt.written], [3, 3, 3, 0, true]);
  assert.equal(rs.checkIndex(bucket, release).unusable, undefined);
});

test('store.list-history-page, then store.read-history-entries of the keys it gave', () => {
  const { bucket, refs } = threeSyncs();
  const first = rs.listHistoryPage(bucket, release, 2);
  assert.deepEqual(first.entries.map((e) => e.renderRef), [refs[2], refs[1]]);
  const second = rs.listHistoryPage(bucket, release, 2, first.nextBefore);
  assert.deepEqual(second.entries.map((e) => e.renderRef), [refs[0]]);
  assert.equal(second.nextBefore, undefined);

  const keys = [...first.entries, ...second.entries].map((e) => e.key);
  bucket.delete(keys[1]);
  const read = rs.readHistoryEntries(bucket, release, keys);
  assert.deepEqual(read.map((r) => r.tag), ['entry', 'gone', 'entry']);
  assert.deepEqual(read[0].val, { key: keys[0], renderRef: refs[2], syncedAt: { seconds: BigInt(t0 + 7200), nanoseconds: 0 }, summary: 'sync 2', trust: { tag: 'unchecked' } });
  assert.throws(() => rs.readHistoryEntries(bucket, release, ['other/app/history/x']), isError('invalid-input'));
});

test('store.stored-changes and store.show-render-page read stored renders', () => {
  const { bucket, refs } = threeSyncs();
  const changes = rs.storedChanges(bucket, release, [[undefined, refs[0]], [refs[0], refs[1]], [refs[1], refs[2]]]);
  assert.equal(changes.length, 3);
  assert.deepEqual(changes[0].added.map((o) => o.name), ['web', 'settings']);
  assert.deepEqual(changes[1].changed.map((o) => o.kind), ['Deployment']);
  assert.deepEqual(changes[1].images.map((c) => [c.container, c.old, c.new]), [['app', 'nginx:1.25', 'nginx:1.26']]);
  assert.deepEqual(changes[2].changed.map((o) => o.kind), ['ConfigMap']);
  assert.deepEqual(changes[2].images, []);
  // The same as logic.summarize-changes of the canonical bytes.
  assert.deepEqual(changes[1], rs.summarizeChanges(rs.getRender(bucket, release, refs[0]), rs.getRender(bucket, release, refs[1])));

  const page = rs.showRenderPage(bucket, release, refs[2], 'json', 'masked', 1_000_000n, 1);
  assert.equal(page.objects, 2);
  assert.equal(page.pages, 1);
  assert.equal(page.size, BigInt(rs.getRender(bucket, release, refs[2]).length));
  // Listed by kind: the ConfigMap first.
  assert.deepEqual(page.shown.map((o) => [o.index, o.id.kind]), [[1, 'ConfigMap'], [0, 'Deployment']]);
  assert.equal(JSON.parse(page.shown[0].text).data.mode, 'green');
  assert.equal(page.shown[0].fullLen, BigInt(new TextEncoder().encode(page.shown[0].text).length));
});

test('generated store functions take the keyring and options.encryptionRequired', () => {
  const keyring = rs.parseKeyring(`k1 ${Buffer.alloc(32, 7).toString('base64')}\n`);
  const { bucket, refs } = threeSyncs(keyring);
  // Sealed renders read only with the keyring.
  assert.throws(() => rs.renderObjects(bucket, release, [refs[0]]), isError('encryption-key', /k1/));
  assert.equal(rs.renderObjects(bucket, release, [refs[0]], keyring, { encryptionRequired: true })[0].objects.length, 2);
  assert.throws(() => rs.checkIndex(bucket, release, [], { encryptionRequired: true }), isError('invalid-input', /keyring is empty/));
  assert.throws(() => rs.checkIndex(bucket, release, [], { encryptionRequired: 'yes' }), TypeError);

  // Entries recorded without a keyring, authenticated afterwards under it (vouched for).
  const plain = threeSyncs();
  assert.throws(() => rs.authenticateHistory(plain.bucket, release, true), isError('invalid-input'));
  // Without `vouch`, entries with no MAC are left as they are, each named.
  const left = rs.authenticateHistory(plain.bucket, release, false, keyring);
  assert.deepEqual([left.rewritten, left.kept], [0, 0]);
  assert.deepEqual(left.left.map((l) => l.split(': ')[0]), rs.listHistory(plain.bucket, release).map((e) => e.key));
  assert.ok(rs.listHistory(plain.bucket, release, keyring).every((e) => 'unauthenticated' in e.trust));
  assert.deepEqual(rs.authenticateHistory(plain.bucket, release, true, keyring), { rewritten: 3, kept: 0, left: [] });
  assert.deepEqual(rs.listHistory(plain.bucket, release, keyring).map((e) => e.trust), [1, 2, 3].map(() => ({ authenticated: 'k1' })));
  assert.deepEqual(rs.authenticateHistory(plain.bucket, release, false, keyring), { rewritten: 0, kept: 3, left: [] });
});

test('logic.index-objects, logic.parse-keys and the other generated logic functions', () => {
  const objects = render('ghcr.io/org/app:2');
  const canonical = rs.canonical(objects);
  const indexed = rs.indexObjects(canonical);
  assert.deepEqual(indexed.map((o) => [o.id.kind, o.images]), [['Deployment', ['ghcr.io/org/app:2']], ['ConfigMap', []]]);
  assert.deepEqual(indexed.map((o) => o.hash), decode(canonical).trimEnd().split('\n').map((l) => rs.sha256Hex(l)));
  assert.deepEqual(rs.renderImages(canonical), [{ image: 'ghcr.io/org/app:2', object: indexed[0].id, container: 'app' }]);

  // jsonObjects and jsonObjectEnds split the canonical stream back into its objects.
  const ends = rs.jsonObjectEnds(canonical);
  assert.equal(ends.length, 2);
  assert.equal(ends[1], canonical.length);
  assert.deepEqual(rs.jsonObjects(canonical).map(decode), decode(canonical).trimEnd().split('\n'));
  assert.throws(() => rs.jsonObjects(new TextEncoder().encode('[1]\n')), isError('invalid-object'));

  const ref = rs.renderRef(objects);
  const time = { seconds: t0, nanoseconds: 5 };
  const keys = [rs.renderKey(release, ref), rs.historyKey(release, time, ref), `${P}renders/nope`, 'other/app/renders/x'];
  const parsed = rs.parseKeys(NAME, keys);
  assert.deepEqual(parsed, [
    { tag: 'render', val: ref },
    { tag: 'history', val: { syncedAt: { seconds: BigInt(t0), nanoseconds: 5 }, renderRef: ref } },
    undefined,
    undefined,
  ]);
  // The same answers as parseKey, key by key, in the WIT's shape.
  assert.deepEqual(keys.map((k) => rs.parseKey(release, k)), [{ render: ref }, { history: { syncedAt: time, renderRef: ref } }, undefined, undefined]);

  assert.deepEqual(rs.formatSyncedAtAll([{ seconds: BigInt(t0), nanoseconds: 5 }, { seconds: 0n, nanoseconds: 0 }]), [rs.formatSyncedAt(time), '1970-01-01T00:00:00Z']);
  assert.equal(rs.checkImagePattern('*/nginx:1.*'), undefined);
  assert.throws(() => rs.checkImagePattern('nginx:'), isError('invalid-input'));
  assert.deepEqual(rs.defaults(), { keepHistory: BigInt(rs.DEFAULTS.keepHistory), gcGraceSeconds: BigInt(rs.DEFAULTS.gcGraceSeconds), gcFutureToleranceSeconds: BigInt(rs.DEFAULTS.gcFutureToleranceSeconds) });
  assert.equal(rs.wordBucketMessage({ tag: 'outside-prefix', val: { key: 'a/b', prefix: P } }), rs.messages.outsidePrefix('a/b', P));
  assert.equal(rs.wordBucketMessage({ tag: 'left-out', val: { path: new TextEncoder().encode('x/y'), why: 'odd-name' } }), rs.messages.leftOut('x/y', 'odd-name'));
  assert.throws(() => rs.indexKey({ namespace: 'Bad_NS', name: 'web' }), isError('invalid-input'));
});

test('trace.write-trace writes what record writes; trace.outcome-json the result line', () => {
  const bucket = new MemoryBucket();
  rs.putRender(bucket, release, [render('nginx:1.25')[1]]);
  const recorded = rs.record(() => rs.deleteRelease(bucket, release));
  assert.equal(recorded.value, 1);
  assert.equal(bucket.objects.size, 0);

  // The same trace, written from its parts: the listing the component got, the
  // delete-many of its one key, and the count.
  const listed = JSON.parse(recorded.trace.split('\n')[1]).answer.ok;
  const calls = [
    {
      tag: 'list',
      val: {
        prefix: P,
        answer: { tag: 'ok', val: listed.map((o) => ({ key: o.key, size: BigInt(o.size), modified: { seconds: BigInt(o.modified.seconds), nanoseconds: o.modified.nanoseconds } })) },
      },
    },
    { tag: 'delete-many', val: { keys: [listed[0].key], answer: { tag: 'ok', val: [{ tag: 'ok' }] } } },
  ];
  const outcome = { tag: 'delete-release', val: { tag: 'ok', val: 1 } };
  const written = rs.writeTrace({ tag: 'delete-release', val: release }, [], false, calls, outcome);
  assert.equal(written, recorded.trace);
  assert.equal(rs.replay(written).matches, true);

  assert.equal(rs.outcomeJson(outcome), JSON.stringify(JSON.parse(recorded.trace.trimEnd().split('\n').at(-1)).result));
  assert.equal(rs.outcomeJson(outcome), '{"ok":{"deleted":1}}');
  assert.equal(rs.outcomeJson({ tag: 'get-render', val: { tag: 'err', val: { tag: 'not-found', val: 'gone' } } }), '{"error":{"kind":"not-found","message":"gone"}}');
  assert.equal(rs.outcomeJson({ tag: 'trap', val: 'stopped' }), '{"error":{"kind":"trap","message":"stopped"}}');
  // Key ids and the rule reach the header.
  const header = JSON.parse(rs.writeTrace({ tag: 'list-history', val: release }, ['k1'], true, [], { tag: 'list-history', val: { tag: 'ok', val: [] } }).split('\n')[0]);
  assert.deepEqual([header.keyIds, header.encryptionRequired, header.operation], [['k1'], true, 'list-history']);
});
