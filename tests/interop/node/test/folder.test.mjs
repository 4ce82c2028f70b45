// The folder bucket against the Rust host's file:// store: a store written by Node is
// read back by the Rust CLI and the reverse, with the same keys, bytes and history; and
// the listing agrees with `render-store ls` (staging files, symlinks, prefixes).

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as rs from '../render-store.mjs';
import { cli, cliJson, fileUrl, manifest, objectFiles, putAndRecordWithCli, tempDir } from './helpers.mjs';

const release = { namespace: 'default', name: 'guestbook' };
const NAME = 'default/guestbook';
const P = `${NAME}/`;

/** Every file and folder under `dir`, as relative paths (folders end in /). */
function tree(dir, rel = '') {
  return readdirSync(join(dir, rel)).sort().flatMap((name) => {
    const path = rel ? `${rel}/${name}` : name;
    return statSync(join(dir, path)).isDirectory() ? [`${path}/`, ...tree(dir, path)] : [path];
  });
}

/** The Rust CLI's history, with Node's entries put in its shape (syncedAt as RFC 3339). */
const rustHistory = (url) => cliJson(['history', NAME], { url });
const asRust = (entries) => entries.map((e) => ({ key: e.key, renderRef: e.renderRef, summary: e.summary, syncedAt: rs.formatSyncedAt(e.syncedAt) }));

test('a store written by the Node host is read back by the Rust CLI', (t) => {
  const dir = tempDir(t);
  const url = fileUrl(dir);
  const bucket = new rs.FolderBucket(dir);
  const renders = [
    [manifest('web'), manifest('db')],
    [manifest('web', { replicas: '2' }), manifest('db')],
    [manifest('web', { replicas: '3' })],
    [manifest('web', { replicas: '4' }), '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"é":"\u{1F600}"}}'],
  ];
  const refs = renders.map((objects) => rs.putRender(bucket, release, objects));
  refs.forEach((ref, i) => {
    assert.equal(rs.recordHistory(bucket, release, { renderRef: ref, syncedAt: { seconds: 1_704_067_200 + i * 3600, nanoseconds: i * 250_000_000 }, summary: `deploy ${i} ✓` }), true);
  });
  // Keep two entries and protect the first render (a pin): GC deletes two entries and one render.
  const plan = rs.gc(bucket, release, 2, [refs[0]]);
  assert.equal(plan.deleteHistory.length, 2);
  assert.deepEqual(plan.deleteRenders, [`${P}renders/${refs[1]}`]);

  // The same keys: Node's listing, the Rust CLI's, and the plan's kept keys.
  const keys = bucket.list('');
  assert.deepEqual(cliJson(['ls'], { url }), keys);
  assert.deepEqual(keys, [...plan.keepHistory, ...plan.keepRenders].sort());
  // The same bytes: every render through the CLI, every blob on disk as Node reads it.
  for (const [i, ref] of refs.entries()) {
    if (i === 1) {
      assert.match(cli(['get', NAME, ref], { url, status: 1 }).stderr, /is not in the store/);
      continue;
    }
    const bytes = cli(['get', NAME, ref], { url }).stdout;
    assert.deepEqual(bytes, Buffer.from(rs.canonical(renders[i])));
    assert.deepEqual(bytes, Buffer.from(rs.getRender(bucket, release, ref)));
  }
  for (const key of keys) assert.deepEqual(readFileSync(join(dir, ...key.split('/'))), bucket.get(key));
  // The same history.
  const history = rs.listHistory(bucket, release);
  assert.deepEqual(history.map((e) => e.renderRef), [refs[2], refs[3]]);
  assert.deepEqual(rustHistory(url), asRust(history));
  // The Rust CLI's GC plans nothing more, as Node's dry run does.
  const dry = cliJson(['gc', NAME, '--keep', '2', '--protect', refs[0], '--dry-run'], { url });
  assert.deepEqual(dry, { dryRun: true, ...rs.gc(bucket, release, 2, [refs[0]], true) });
  assert.deepEqual(dry.deleteHistory, []);
  assert.deepEqual(dry.deleteRenders, []);
  // The Rust CLI adds to the Node store, and Node sees it.
  assert.deepEqual(cliJson(['record', NAME, refs[0], '--synced-at', '2024-02-01T00:00:00.000000001+02:00', '--summary', 'rollback'], { url }), { added: true });
  const after = rs.listHistory(bucket, release);
  assert.equal(after.length, 3);
  assert.deepEqual(after[2], {
    key: `${P}history/20240131T220000.000000001Z-${refs[0]}`,
    renderRef: refs[0],
    syncedAt: rs.parseSyncedAt('2024-01-31T22:00:00.000000001Z'),
    summary: 'rollback',
  });
  assert.deepEqual(rustHistory(url), asRust(after));
});

test('a store written by the Rust CLI is read back by the Node host', (t) => {
  const dir = tempDir(t);
  const work = tempDir(t);
  const url = fileUrl(dir);
  const renders = [[manifest('api')], [manifest('api', { v: '2' }), manifest('cache')], [manifest('api', { v: '3' })]];
  const refs = putAndRecordWithCli(url, work, NAME, renders, (i) => [`2024-03-0${i + 1}T12:00:00.${i}Z`, `release ${i}`]);
  assert.deepEqual(refs, renders.map((objects) => rs.renderRef(objects)));
  const bucket = new rs.FolderBucket(url);
  // Before GC: the same keys, bytes and history.
  assert.deepEqual(bucket.list(''), cliJson(['ls'], { url }));
  assert.deepEqual(rs.listHistory(bucket, release).map((e) => [e.renderRef, rs.formatSyncedAt(e.syncedAt), e.summary]), [
    [refs[0], '2024-03-01T12:00:00Z', 'release 0'],
    [refs[1], '2024-03-02T12:00:00.1Z', 'release 1'],
    [refs[2], '2024-03-03T12:00:00.2Z', 'release 2'],
  ]);
  assert.deepEqual(asRust(rs.listHistory(bucket, release)), rustHistory(url));
  // Node's dry run plans what the Rust GC then does.
  const planned = rs.gc(bucket, release, 1, [refs[1]], true);
  const done = cliJson(['gc', NAME, '--keep', '1', '--protect', refs[1]], { url });
  assert.deepEqual(done, { dryRun: false, ...planned });
  assert.deepEqual(done.deleteRenders, [`${P}renders/${refs[0]}`]);
  // After GC: Node reads what is left, byte for byte.
  const keys = bucket.list(P);
  assert.deepEqual(keys, cliJson(['ls', P], { url }));
  assert.deepEqual(keys, [...done.keepHistory, ...done.keepRenders].sort());
  for (const [i, ref] of refs.entries()) {
    if (i === 0) {
      assert.throws(() => rs.getRender(bucket, release, ref), (e) => e.kind === 'not-found');
      continue;
    }
    const bytes = Buffer.from(rs.getRender(bucket, release, ref));
    assert.deepEqual(bytes, Buffer.from(rs.canonical(renders[i])));
    assert.deepEqual(bytes, cli(['get', NAME, ref], { url }).stdout);
    assert.deepEqual(bytes, readFileSync(join(dir, P, 'renders', ref)));
  }
  const history = rs.listHistory(bucket, release);
  assert.deepEqual(history.map((e) => e.renderRef), [refs[2]]);
  assert.deepEqual(asRust(history), rustHistory(url));
  assert.equal(rs.hasHistoryRef(bucket, release, refs[0]), false);
  assert.equal(rs.hasHistoryRef(bucket, release, refs[2]), true);
  // Node writes into the Rust store: the CLI sees the entry; a second record adds nothing.
  assert.equal(rs.recordHistory(bucket, release, { renderRef: refs[1], syncedAt: rs.parseSyncedAt('2024-03-04T00:00:00Z'), summary: 'node' }), true);
  assert.deepEqual(cliJson(['record', NAME, refs[1], '--synced-at', '2024-03-05T00:00:00Z'], { url }), { added: false });
  assert.deepEqual(rustHistory(url).map((e) => e.summary), ['release 2', 'node']);
});

test('the folder listing agrees with `render-store ls`', (t) => {
  const dir = tempDir(t);
  const outside = tempDir(t);
  const url = fileUrl(dir);
  const bucket = new rs.FolderBucket(dir);
  const ref = rs.putRender(bucket, release, [manifest('a')]);
  const file = (rel, text = 'x') => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  // Staging files of object_store's local store (a name with `#` and digits only after
  // its first `#`) are not keys; other names with `#` are.
  file(`${P}renders/${ref}#1`);
  file(`${P}renders/${ref}#12`);
  file(`${P}history/x#b#1`);
  file(`${P}history/y#`);
  file(`${P}history/z#1x`);
  file(`${P}notes/a b%20c ü.txt`);
  file(`${P}deep/er/still/deeper/k`);
  file('default/guestbook2/renders/other');
  file('default/guest');
  file('top');
  mkdirSync(join(dir, P, 'empty-dir'), { recursive: true });
  // Symlinks are followed; a broken one is left out.
  writeFileSync(join(outside, 'target'), 'linked');
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'inside'), 'linked too');
  symlinkSync(join(outside, 'target'), join(dir, P, 'notes', 'link'));
  symlinkSync(join(outside, 'dir'), join(dir, P, 'linked-dir'));
  symlinkSync(join(outside, 'missing'), join(dir, P, 'notes', 'broken'));

  const prefixes = ['', 'default/', 'default/guest', P, `${P}renders/`, `${P}ren`, `${P}history/`, `${P}notes/a`, `${P}deep/er/`, 'nothing/here/', 'zzz', `${P}renders/${ref}`];
  for (const prefix of prefixes) {
    assert.deepEqual(bucket.list(prefix), cliJson(['ls', prefix], { url }), `prefix ${JSON.stringify(prefix)}`);
  }
  const all = bucket.list('');
  assert.ok(all.includes(`${P}history/x#b#1`) && all.includes(`${P}history/y#`) && all.includes(`${P}history/z#1x`));
  assert.ok(!all.includes(`${P}renders/${ref}#1`) && !all.includes(`${P}renders/${ref}#12`), all.join('\n'));
  assert.ok(all.includes(`${P}linked-dir/inside`) && all.includes(`${P}notes/link`) && !all.includes(`${P}notes/broken`));
  assert.deepEqual(Buffer.from(bucket.get(`${P}notes/link`)).toString(), 'linked');
  // A folder is not a key; a staging name cannot be addressed.
  assert.throws(() => bucket.get(`${P}notes`), (e) => e.kind === 'not-found');
  assert.equal(bucket.exists(`${P}notes`), false);
  assert.throws(() => bucket.get(`${P}renders/${ref}#1`), (e) => e.kind === 'failed' && /not supported/.test(e.message));
  // The component leaves the unparsable keys alone, in both hosts.
  const { dryRun, ...rustPlan } = cliJson(['gc', NAME, '--keep', '1', '--dry-run'], { url });
  assert.equal(dryRun, true);
  const plan = rs.gc(bucket, release, 1, [], true);
  assert.deepEqual(plan, rustPlan);
  assert.deepEqual(plan.ignored, [`${P}history/x#b#1`, `${P}history/y#`, `${P}history/z#1x`]);
});

test('put is atomic the way object_store does it; delete removes emptied folders', (t) => {
  // Two identical stores with a stale staging file, one written by each host.
  const objects = [manifest('a'), manifest('b')];
  const ref = rs.renderRef(objects);
  const stores = ['node', 'rust'].map((who) => {
    const dir = tempDir(t, `render-store-${who}-`);
    mkdirSync(join(dir, P, 'renders'), { recursive: true });
    writeFileSync(join(dir, P, 'renders', `${ref}#1`), 'half-written');
    mkdirSync(join(dir, 'other', 'app'), { recursive: true });
    writeFileSync(join(dir, 'other', 'app', 'keep'), 'x');
    return dir;
  });
  const [nodeDir, rustDir] = stores;
  const bucket = new rs.FolderBucket(nodeDir);
  assert.equal(rs.putRender(bucket, release, objects), ref);
  rs.recordHistory(bucket, release, { renderRef: ref, syncedAt: { seconds: 0, nanoseconds: 0 }, summary: '' });
  const work = tempDir(t);
  assert.equal(cli(['put', NAME, ...objectFiles(work, objects)], { url: fileUrl(rustDir) }).stdout.toString().trim(), ref);
  cli(['record', NAME, ref, '--synced-at', '1970-01-01T00:00:00Z'], { url: fileUrl(rustDir) });
  // Both hosts wrote beside the stale `#1` (a put stages in the first free `#N`),
  // leaving it as it was, unlisted: the same files, the same bytes.
  assert.deepEqual(tree(nodeDir), tree(rustDir));
  for (const dir of stores) assert.equal(readFileSync(join(dir, P, 'renders', `${ref}#1`), 'utf8'), 'half-written');
  assert.ok(!bucket.list('').some((k) => k.includes('#')));
  for (const key of bucket.list('')) assert.deepEqual(readFileSync(join(nodeDir, key)), readFileSync(join(rustDir, key)), key);
  // delete-release in each: the same count, the same folders left (object_store's
  // automatic cleanup removes the folders a delete empties; the staging file stays).
  assert.equal(rs.deleteRelease(bucket, release), 2);
  assert.deepEqual(cliJson(['delete-release', NAME], { url: fileUrl(rustDir) }), { deleted: 2 });
  assert.deepEqual(tree(nodeDir), tree(rustDir));
  assert.deepEqual(tree(nodeDir), ['default/', 'default/guestbook/', 'default/guestbook/renders/', `${P}renders/${ref}#1`, 'other/', 'other/app/', 'other/app/keep']);
  // Without the staging file, the release's folders all go.
  for (const dir of stores) {
    const b = new rs.FolderBucket(dir);
    rs.putRender(b, release, objects);
  }
  rs.deleteRelease(new rs.FolderBucket(nodeDir), release);
  cli(['delete-release', NAME], { url: fileUrl(rustDir) });
  assert.deepEqual(tree(nodeDir), tree(rustDir));
});

test('FolderBucket opens like file:// does', (t) => {
  const dir = tempDir(t);
  assert.throws(() => new rs.FolderBucket(join(dir, 'missing')), /does not exist/);
  const created = new rs.FolderBucket(`${fileUrl(dir)}/new/store`, { createDir: true });
  assert.ok(statSync(join(dir, 'new', 'store')).isDirectory());
  assert.deepEqual(created.list(''), []);
});
