// The folder bucket against the Rust host's file:// store: a store written by Node is
// read back by the Rust CLI and the reverse, with the same keys, bytes and history; the
// listing agrees with `render-store ls` (staging files, FIFOs, odd names, prefixes);
// links are never followed; a listing that cannot see everything fails, so GC and
// delete-release lose nothing, and refuses in the Rust CLI's words; GC's grace period
// and the rewrite of a truncated blob; diffs of stored Secrets masked as the CLI masks
// them.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';
import { SECRET_VALUES, cli, cliJson, diffAsCliPrints, fileUrl, manifest, objectFiles, putAndRecordWithCli, secretRenders, tempDir } from './helpers.mjs';

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

/** `tree` with each entry's permission bits: `path 700`. */
const modes = (dir) => tree(dir).map((path) => `${path} ${(lstatSync(join(dir, path)).mode & 0o777).toString(8)}`);

/** The keys of a listing. */
const keysOf = (listed) => listed.map((o) => o.key);

/** A FolderBucket whose warnings are collected in `warnings`. */
function quietBucket(dir) {
  const warnings = [];
  const bucket = new rs.FolderBucket(dir, { warn: (m) => warnings.push(m) });
  return { bucket, warnings };
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
  // Keep two entries and protect the first render (a pin), without a grace period: GC
  // deletes two entries and one render.
  const plan = rs.gc(bucket, release, 2, [refs[0]], false, { graceSeconds: 0 });
  assert.equal(plan.deleteHistory.length, 2);
  assert.deepEqual(plan.deleteRenders, [`${P}renders/${refs[1]}`]);

  // The same keys: Node's listing, the Rust CLI's, and the plan's kept keys.
  const keys = keysOf(bucket.list(''));
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
  assert.deepEqual(keysOf(bucket.list('')), cliJson(['ls'], { url }));
  assert.deepEqual(rs.listHistory(bucket, release).map((e) => [e.renderRef, rs.formatSyncedAt(e.syncedAt), e.summary]), [
    [refs[0], '2024-03-01T12:00:00Z', 'release 0'],
    [refs[1], '2024-03-02T12:00:00.1Z', 'release 1'],
    [refs[2], '2024-03-03T12:00:00.2Z', 'release 2'],
  ]);
  assert.deepEqual(asRust(rs.listHistory(bucket, release)), rustHistory(url));
  // Node's dry run plans what the Rust GC then does (both without a grace period).
  const planned = rs.gc(bucket, release, 1, [refs[1]], true, { graceSeconds: 0 });
  const done = cliJson(['gc', NAME, '--keep', '1', '--protect', refs[1], '--grace', '0'], { url });
  assert.deepEqual(done, { dryRun: false, ...planned });
  assert.deepEqual(done.deleteRenders, [`${P}renders/${refs[0]}`]);
  // After GC: Node reads what is left, byte for byte.
  const keys = keysOf(bucket.list(P));
  assert.deepEqual(keys, cliJson(['ls', P], { url }));
  // The release index the CLI's record wrote and its GC pruned (CONTRACT.md §3).
  assert.deepEqual(keys, [...done.keepHistory, ...done.keepRenders, `${P}index/v1`].sort());
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
  const url = fileUrl(dir);
  const { bucket, warnings } = quietBucket(dir);
  const ref = rs.putRender(bucket, release, [manifest('a')]);
  const file = (rel, text = 'x') => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  // Staging files (`<name>#<pid>.<n>`, or any name with `#`) are plain files: listed.
  file(`${P}renders/${ref}#1`);
  file(`${P}renders/${ref}#4242.7`, 'torn');
  file(`${P}history/x#b#1`);
  file(`${P}history/y#`);
  file(`${P}history/z#1x`);
  file(`${P}notes/a b%20c ü.txt`);
  file(`${P}notes/\ufeffbom`); // a leading U+FEFF is part of the name
  file(`${P}deep/er/still/deeper/k`);
  file('default/guestbook2/renders/other');
  file('default/guest');
  file('top');
  mkdirSync(join(dir, P, 'empty-dir'), { recursive: true });
  // Files that cannot be keys are left out, and the listing still answers: a FIFO, and
  // names that are not UTF-8 or hold control characters.
  assert.equal(spawnSync('mkfifo', [join(dir, P, 'notes', 'fifo')]).status, 0);
  file(`${P}notes/tab\there`);
  file(`${P}notes/c1\u0085`);
  writeFileSync(Buffer.concat([Buffer.from(join(dir, P, 'notes/')), Buffer.from([0x6e, 0xff, 0x6f])]), 'not UTF-8');

  const prefixes = ['', 'default/', 'default/guest', P, `${P}renders/`, `${P}ren`, `${P}history/`, `${P}notes/a`, `${P}notes/`, `${P}deep/er/`, `${P}empty-dir/`, 'nothing/here/', 'zzz', '/x', `${P}renders/${ref}`];
  for (const prefix of prefixes) {
    assert.deepEqual(keysOf(bucket.list(prefix)), cliJson(['ls', prefix], { url }), `prefix ${JSON.stringify(prefix)}`);
  }
  const listed = bucket.list('');
  const all = keysOf(listed);
  assert.ok(all.includes(`${P}history/x#b#1`) && all.includes(`${P}history/y#`) && all.includes(`${P}history/z#1x`));
  assert.ok(all.includes(`${P}notes/\ufeffbom`), all.join('\n'));
  assert.ok(all.includes(`${P}renders/${ref}#1`) && all.includes(`${P}renders/${ref}#4242.7`), all.join('\n'));
  assert.deepEqual(all.filter((k) => /fifo|tab|c1|n.o$/.test(k)), []);
  assert.deepEqual(all, [...all].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  // Each object's size and modification time, as the file system has them.
  for (const o of listed) {
    const st = statSync(join(dir, o.key), { bigint: true });
    assert.equal(o.size, Number(st.size), o.key);
    assert.equal(BigInt(o.modified.seconds) * 1_000_000_000n + BigInt(o.modified.nanoseconds), st.mtimeNs, o.key);
  }
  assert.equal(listed.find((o) => o.key === `${P}renders/${ref}#4242.7`).size, 4);
  // Each entry left out is reported once.
  for (const what of ['notes/fifo', 'notes/tab\there', 'notes/c1\u0085', 'notes/n\uFFFDo']) {
    assert.equal(warnings.filter((w) => w.includes(`: ${JSON.stringify(P + what)} is `)).length, 1, `${what}\n${warnings.join('\n')}`);
  }
  // A folder and a FIFO are not blobs (a folder is no key at all, as on every backend);
  // a staging file can be read, not written.
  assert.throws(() => bucket.get(`${P}notes`), (e) => e.kind === 'denied' && /not a regular file/.test(e.message));
  assert.equal(bucket.exists(`${P}notes`), null);
  assert.throws(() => bucket.get(`${P}notes/fifo`), (e) => e.kind === 'denied' && e.message === rs.messages.notPlainFile(`${P}notes/fifo`));
  assert.equal(Buffer.from(bucket.get(`${P}renders/${ref}#4242.7`)).toString(), 'torn');
  assert.throws(() => bucket.put(`${P}renders/${ref}#2`, new Uint8Array()), (e) => e.kind === 'denied'
    && e.message === `"${P}renders/${ref}#2" holds "#", which a file:// store reserves for staging files`);
  // The component leaves the unparsable keys alone, in both hosts.
  const { dryRun, ...rustPlan } = cliJson(['gc', NAME, '--keep', '1', '--dry-run', '--grace', '0'], { url });
  assert.equal(dryRun, true);
  const plan = rs.gc(bucket, release, 1, [], true, { graceSeconds: 0 });
  assert.deepEqual(plan, rustPlan);
  assert.deepEqual(plan.ignored, [`${P}history/x#b#1`, `${P}history/y#`, `${P}history/z#1x`, `${P}renders/${ref}#1`, `${P}renders/${ref}#4242.7`]);
  assert.deepEqual(plan.deleteRenders, [`${P}renders/${ref}`]);
});

test('a listing that meets a link inside its prefix fails naming it; one that does not reach it answers', (t) => {
  const dir = tempDir(t);
  const outside = tempDir(t);
  const { bucket, warnings } = quietBucket(dir);
  const ref = rs.putRender(bucket, release, [manifest('a')]);
  bucket.put(`${P}notes/keep`, new Uint8Array([1]));
  writeFileSync(join(outside, 'target'), 'linked');
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'inside'), 'linked too');
  // Links of every kind: to a file, to a folder, broken, a loop. None is followed.
  const links = { 'notes/link': join(outside, 'target'), 'linked-dir': join(outside, 'dir'), 'notes/broken': join(outside, 'missing'), 'notes/loop': 'loop' };
  for (const [at, target] of Object.entries(links)) symlinkSync(target, join(dir, P, at));
  const refusedBy = (prefix, linked) => linked.map((at) => rs.messages.unwalkable(prefix, `${P}${at}`, rs.messages.UNWALKABLE.link));
  const notes = ['notes/link', 'notes/broken', 'notes/loop'];
  // Each prefix and the links it reaches (the listing names the first it meets).
  const reaching = [
    ['', [...notes, 'linked-dir']],
    ['default/', [...notes, 'linked-dir']],
    ['default/guest', [...notes, 'linked-dir']],
    [P, [...notes, 'linked-dir']],
    [`${P}notes/`, notes],
    [`${P}notes/l`, ['notes/link', 'notes/loop']],
    [`${P}notes/link`, ['notes/link']],
    [`${P}linked`, ['linked-dir']],
    // A link on the way to the prefix's folder, whatever follows it.
    [`${P}linked-dir/`, ['linked-dir']],
    [`${P}linked-dir/in`, ['linked-dir']],
    [`${P}linked-dir/a/b/`, ['linked-dir']],
  ];
  for (const [prefix, linked] of reaching) {
    assert.throws(() => bucket.list(prefix), (e) => {
      assert.ok(e instanceof rs.BucketError && e.kind === 'denied', String(e));
      assert.ok(refusedBy(prefix, linked).includes(e.message), `prefix ${JSON.stringify(prefix)}: ${e.message}`);
      return true;
    }, `prefix ${JSON.stringify(prefix)}`);
  }
  // Listings that do not reach a link are whole.
  assert.deepEqual(keysOf(bucket.list(`${P}renders/`)), [`${P}renders/${ref}`]);
  assert.deepEqual(keysOf(bucket.list(`${P}notes/k`)), [`${P}notes/keep`]);
  assert.deepEqual(keysOf(bucket.list(`${P}notes/x`)), []);
  assert.deepEqual(keysOf(bucket.list('default/guestbook2')), []);
  // A refusal is an answer, not a log line; nothing was followed or touched.
  assert.deepEqual(warnings, []);
  assert.throws(() => bucket.get(`${P}notes/link`), (e) => e.kind === 'denied' && /symbolic link/.test(e.message));
  assert.throws(() => bucket.exists(`${P}notes/link`), (e) => e.kind === 'denied' && /symbolic link/.test(e.message));
  assert.deepEqual(readdirSync(outside).sort(), ['dir', 'target']);
  assert.deepEqual(readdirSync(join(outside, 'dir')), ['inside']);
});

test('a listing whose prefix needs a folder where a file or FIFO is fails naming it; a missing folder is empty', (t) => {
  const dir = tempDir(t);
  const { bucket } = quietBucket(dir);
  bucket.put(`${P}history`, new TextEncoder().encode('a file'));
  assert.equal(spawnSync('mkfifo', [join(dir, P, 'renders')]).status, 0);
  const notFolder = (prefix, path) => (e) => e instanceof rs.BucketError && e.kind === 'denied' && e.message === rs.messages.unwalkable(prefix, path, rs.messages.UNWALKABLE.notFolder);
  assert.throws(() => bucket.list(`${P}history/`), notFolder(`${P}history/`, `${P}history`));
  assert.throws(() => bucket.list(`${P}history/2024`), notFolder(`${P}history/2024`, `${P}history`));
  assert.throws(() => bucket.list(`${P}history/a/b/`), notFolder(`${P}history/a/b/`, `${P}history`));
  assert.throws(() => bucket.list(`${P}renders/`), notFolder(`${P}renders/`, `${P}renders`));
  // The folder above lists the file as a key and leaves the FIFO out, as ever.
  assert.deepEqual(keysOf(bucket.list(P)), [`${P}history`]);
  assert.deepEqual(bucket.list(`${P}missing/`), []);
  assert.deepEqual(bucket.list('nowhere/at/all/'), []);
});

test('a key through a symbolic link is refused by both hosts, and the target survives', (t) => {
  const dir = tempDir(t);
  const outside = tempDir(t);
  const work = tempDir(t);
  const url = fileUrl(dir);
  writeFileSync(join(outside, 'victim'), 'keep');
  mkdirSync(join(outside, 'renders'));
  mkdirSync(join(dir, 'default'));
  symlinkSync(outside, join(dir, P.slice(0, -1)));
  const { bucket, warnings } = quietBucket(dir);
  const crosses = (e) => e instanceof rs.BucketError && e.kind === 'denied' && e.message === `key "${P}victim" crosses "guestbook", which is a symbolic link or not a folder; a file:// store never follows links: remove it`;
  assert.throws(() => bucket.get(`${P}victim`), crosses);
  assert.throws(() => bucket.put(`${P}victim`, new Uint8Array([1])), crosses);
  assert.throws(() => bucket.exists(`${P}victim`), crosses);
  assert.throws(() => bucket.delete(`${P}victim`), crosses);
  // Listings that meet the link fail: what lies beyond it is not "nothing".
  const refused = (prefix) => (e) => e instanceof rs.BucketError && e.kind === 'denied' && e.message === rs.messages.unwalkable(prefix, 'default/guestbook', rs.messages.UNWALKABLE.link);
  assert.throws(() => bucket.list('default/'), refused('default/'));
  assert.throws(() => bucket.list(P), refused(P));
  assert.throws(() => bucket.list(`${P}renders/`), refused(`${P}renders/`));
  assert.deepEqual(warnings, []);
  // Through the component: the store operations fail with the bucket's refusal.
  assert.throws(() => rs.putRender(bucket, release, [manifest('a')]), (e) => e.kind === 'bucket' && /crosses "guestbook"/.test(e.message));
  assert.throws(() => rs.listHistory(bucket, release), (e) => e.kind === 'bucket' && /meets "default\/guestbook", a symbolic link/.test(e.message));
  assert.throws(() => rs.deleteRelease(bucket, release), (e) => e.kind === 'bucket' && /meets "default\/guestbook", a symbolic link/.test(e.message));
  // The Rust CLI refuses the same way.
  const rust = cli(['put', NAME, ...objectFiles(work, [manifest('a')])], { url, status: 1 });
  assert.match(rust.stderr, /crosses "guestbook", which is a symbolic link/);
  assert.deepEqual(readdirSync(outside).sort(), ['renders', 'victim']);
  assert.deepEqual(readdirSync(join(outside, 'renders')), []);
  assert.equal(readFileSync(join(outside, 'victim'), 'utf8'), 'keep');
});

/** A release with two stored renders, each in a history entry, on a FolderBucket in a
 *  folder of its own: {dir, bucket, refs, blobs (the renders' file paths)}. */
function releaseWithHistory(t) {
  const dir = tempDir(t);
  const bucket = new rs.FolderBucket(dir, { warn: () => {} });
  const refs = [[manifest('one')], [manifest('two')]].map((objects) => rs.putRender(bucket, release, objects));
  refs.forEach((ref, i) => rs.recordHistory(bucket, release, { renderRef: ref, syncedAt: { seconds: 1_704_067_200 + i, nanoseconds: 0 }, summary: `v${i}` }));
  // Both renders are referenced: GC, seeing the whole history, deletes nothing.
  assert.deepEqual(rs.gc(bucket, release, 2, [], true, { graceSeconds: 0 }).deleteRenders, []);
  return { dir, bucket, refs, blobs: refs.map((ref) => join(dir, P, 'renders', ref)) };
}

/** The component's words for a bucket's `denied` of `list <prefix>` meeting `path`. */
const refusedListing = (prefix, path, what, fix) => `list ${prefix}: denied: list "${prefix}" meets "${path}", ${what}; a listing fails rather than leave out what it cannot see: ${fix}`;
const LINK = ['a symbolic link, which a file:// store never follows', 'remove the link, or move back what it points to'];
const NOT_FOLDER = ['which is not a folder, though the prefix needs one there', 'remove it, or move back the folder'];
const UNREADABLE = ['a folder this user cannot read', 'make it readable by this user'];

test('GC fails, deleting nothing, when history/ was moved away and replaced by a link', (t) => {
  const { dir, bucket, blobs } = releaseWithHistory(t);
  const moved = join(tempDir(t), 'history');
  renameSync(join(dir, P, 'history'), moved);
  symlinkSync(moved, join(dir, P, 'history'));
  const before = tree(dir);
  assert.throws(() => rs.gc(bucket, release, 2, [], false, { graceSeconds: 0 }), (e) => {
    assert.equal(e.kind, 'bucket', e.message);
    assert.equal(e.message, refusedListing(`${P}history/`, `${P}history`, ...LINK));
    return true;
  });
  for (const blob of blobs) assert.ok(existsSync(blob), `${blob} was deleted`);
  // delete-release fails as well, and deletes nothing: not the renders, not the entries
  // in the folder the link points to.
  assert.throws(() => rs.deleteRelease(bucket, release), (e) => e.kind === 'bucket' && e.message === refusedListing(P, `${P}history`, ...LINK));
  assert.deepEqual(tree(dir), before);
  for (const blob of blobs) assert.ok(existsSync(blob), `${blob} was deleted`);
  assert.equal(readdirSync(moved).length, 2);
});

test('GC fails, deleting nothing, when history/ was replaced by a file', (t) => {
  const { dir, bucket, blobs } = releaseWithHistory(t);
  renameSync(join(dir, P, 'history'), join(tempDir(t), 'history'));
  writeFileSync(join(dir, P, 'history'), 'not a folder');
  assert.throws(() => rs.gc(bucket, release, 2, [], false, { graceSeconds: 0 }), (e) => {
    assert.equal(e.kind, 'bucket', e.message);
    assert.equal(e.message, refusedListing(`${P}history/`, `${P}history`, ...NOT_FOLDER));
    return true;
  });
  for (const blob of blobs) assert.ok(existsSync(blob), `${blob} was deleted`);
});

/** How to run a process that cannot read a mode-000 folder: root reads one anyway
 *  (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so as root the child loses both; null when
 *  that is not possible here. */
function withoutDacOverride() {
  if (process.getuid?.() !== 0) return [];
  const caps = '-dac_override,-dac_read_search';
  const setpriv = ['setpriv', '--bounding-set', caps, '--inh-caps', caps];
  return spawnSync(setpriv[0], [...setpriv.slice(1), 'true']).status === 0 ? setpriv : null;
}

test('GC fails, deleting nothing, when history/ cannot be read', (t) => {
  const { dir, blobs } = releaseWithHistory(t);
  const prefix = withoutDacOverride();
  if (prefix === null) return t.skip('running as root without setpriv: no process here would be refused the folder');
  const history = join(dir, P, 'history');
  chmodSync(history, 0);
  // GC in a child process, over the store as this package opens it.
  const child = `
    import { readdirSync } from 'node:fs';
    const rs = await import(process.argv[1]);
    const [dir, history] = process.argv.slice(2);
    let readable = true;
    try { readdirSync(history); } catch { readable = false; }
    const outcome = (fn) => {
      try {
        return { value: fn() };
      } catch (e) {
        return { kind: e.kind, message: e.message };
      }
    };
    const bucket = new rs.FolderBucket(dir);
    const release = ${JSON.stringify(release)};
    const gc = outcome(() => rs.gc(bucket, release, 2, [], false, { graceSeconds: 0 }));
    const deleteRelease = outcome(() => rs.deleteRelease(bucket, release));
    console.log(JSON.stringify({ readable, gc, deleteRelease }));`;
  const command = [...prefix, process.execPath, '--input-type=module', '-e', child, import.meta.resolve('@convoy/render-store'), dir, history];
  let run;
  try {
    run = spawnSync(command[0], command.slice(1), { encoding: 'utf8' });
  } finally {
    // So that the folder can be removed (and checked) by this user.
    chmodSync(history, 0o700);
  }
  assert.equal(run.status, 0, run.stderr);
  const got = JSON.parse(run.stdout);
  assert.equal(got.readable, false, 'the child could read the mode-000 folder: the test proves nothing');
  assert.deepEqual(got.gc, { kind: 'bucket', message: refusedListing(`${P}history/`, `${P}history`, ...UNREADABLE) });
  // delete-release meets the folder inside the prefix it lists.
  assert.deepEqual(got.deleteRelease, { kind: 'bucket', message: refusedListing(P, `${P}history`, ...UNREADABLE) });
  for (const blob of blobs) assert.ok(existsSync(blob), `${blob} was deleted`);
});

/** A release with a history entry moved out of its history/ folder and a symbolic link
 *  to it left in its place: {dir, bucket, url, at (the link's would-be key)}. */
function historyWithPlantedLink(t) {
  const { dir, bucket } = releaseWithHistory(t);
  const [entry] = readdirSync(join(dir, P, 'history'));
  const moved = join(tempDir(t), entry);
  renameSync(join(dir, P, 'history', entry), moved);
  symlinkSync(moved, join(dir, P, 'history', entry));
  return { dir, bucket, url: fileUrl(dir), at: `${P}history/${entry}` };
}

/** Prefixes whose listing reaches the history folder, down to the folder itself. */
const REACHING_HISTORY = ['', 'default/', P, `${P}history/`, `${P}history/2024`];

test('a link planted in history/: the folder listing and `render-store ls` refuse with the same sentence', (t) => {
  const { bucket, url, at } = historyWithPlantedLink(t);
  for (const prefix of REACHING_HISTORY) {
    const sentence = rs.messages.unwalkable(prefix, at, rs.messages.UNWALKABLE.link);
    assert.throws(() => bucket.list(prefix), (e) => e instanceof rs.BucketError && e.kind === 'denied' && e.message === sentence, `prefix ${JSON.stringify(prefix)}`);
    for (const args of [['ls', prefix], ['--json', 'ls', prefix]]) {
      const rust = cli(args, { url, status: 1 });
      // Nothing listed: the CLI too fails rather than print a shorter listing.
      assert.equal(rust.stdout.length, 0, `${args.join(' ')} printed ${rust.stdout}`);
      if (args[0] === '--json') {
        // Under --json the error is a JSON object with the same sentence.
        assert.deepEqual(JSON.parse(rust.stderr), { error: { kind: 'bucket', message: sentence } }, args.join(' '));
      } else {
        assert.equal(rust.stderr, `render-store: ${sentence}\n`, args.join(' '));
      }
    }
  }
  // The listings that do not reach the link still answer, in both hosts alike.
  assert.deepEqual(keysOf(bucket.list(`${P}renders/`)), cliJson(['ls', `${P}renders/`], { url }));
});

test('diffs of stored Secrets: masked as `render-store diff` masks them, and shown alike when asked', (t) => {
  const dir = tempDir(t);
  const work = tempDir(t);
  const url = fileUrl(dir);
  const store = new rs.RenderStore(new rs.FolderBucket(dir));
  const renders = secretRenders();
  const [oldRef, newRef] = [renders.old, renders.new].map((objects) => store.putRender('prod/db', objects));
  const local = objectFiles(work, renders.new, 'local');
  for (const showSecrets of [false, true]) {
    const flag = showSecrets ? ['--show-secrets'] : [];
    for (const form of ['yaml', 'json']) {
      const what = `${form}, showSecrets ${showSecrets}`;
      const ours = diffAsCliPrints(store.diffRenders('prod/db', oldRef, newRef, form, { showSecrets }));
      const rust = JSON.parse(cli(['--json', ...flag, 'diff', 'prod/db', oldRef, newRef, '--form', form], { url, status: 1 }).stdout.toString());
      assert.deepEqual(ours, rust, what);
      // The logic export against `diff --local` (exit status 1: the renders differ).
      const logic = rs.diffRenders(store.getRender('prod/db', oldRef), rs.canonical(renders.new), form, { showSecrets });
      const preview = cli(['--json', ...flag, 'diff', 'prod/db', '--local', ...local, '--against', oldRef, '--form', form], { url, status: 1 });
      assert.deepEqual(diffAsCliPrints(logic), JSON.parse(preview.stdout.toString()), `--local, ${what}`);
      // So that equal diffs are not two that both show, or both hide, the values.
      const text = JSON.stringify(rust);
      assert.equal(text.includes(SECRET_VALUES.passwordAfter), showSecrets, what);
      assert.equal(text.includes('*** (after)'), !showSecrets, what);
    }
  }
  // Neither host rewrote the blobs: the CLI's get is the render as put.
  assert.deepEqual(cli(['get', 'prod/db', newRef], { url }).stdout, Buffer.from(store.getRender('prod/db', newRef)));
  assert.deepEqual(cli(['get', 'prod/db', newRef], { url }).stdout, Buffer.from(rs.canonical(renders.new)));
});

test('put is atomic through a staging file, files are private, delete removes emptied folders', (t) => {
  // Two identical stores with a stale staging file, one written by each host.
  const objects = [manifest('a'), manifest('b')];
  const ref = rs.renderRef(objects);
  const stores = ['node', 'rust'].map((who) => {
    const dir = tempDir(t, `render-store-${who}-`);
    mkdirSync(join(dir, P, 'renders'), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, 'default'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, P, 'renders', `${ref}#1.0`), 'half-written', { mode: 0o600 });
    mkdirSync(join(dir, 'other', 'app'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'other', 'app', 'keep'), 'x', { mode: 0o600 });
    return dir;
  });
  const [nodeDir, rustDir] = stores;
  const bucket = new rs.FolderBucket(nodeDir);
  assert.equal(rs.putRender(bucket, release, objects), ref);
  rs.recordHistory(bucket, release, { renderRef: ref, syncedAt: { seconds: 0, nanoseconds: 0 }, summary: '' });
  // What the CLI's record does after an added entry: the release index.
  assert.equal(rs.indexRelease(bucket, release).read, 1);
  const work = tempDir(t);
  assert.equal(cli(['put', NAME, ...objectFiles(work, objects)], { url: fileUrl(rustDir) }).stdout.toString().trim(), ref);
  cli(['record', NAME, ref, '--synced-at', '1970-01-01T00:00:00Z'], { url: fileUrl(rustDir) });
  // Both hosts staged their writes in files of their own and renamed them, leaving the
  // stale one as it was: the same files, the same bytes, folders 0700 and files 0600.
  assert.deepEqual(modes(nodeDir), modes(rustDir));
  assert.deepEqual(modes(nodeDir).filter((m) => m.startsWith(P)), [
    `${P} 700`,
    `${P}history/ 700`,
    `${P}history/19700101T000000.000000000Z-${ref} 600`,
    `${P}index/ 700`,
    `${P}index/v1 600`,
    `${P}renders/ 700`,
    `${P}renders/${ref} 600`,
    `${P}renders/${ref}#1.0 600`,
  ]);
  for (const dir of stores) assert.equal(readFileSync(join(dir, P, 'renders', `${ref}#1.0`), 'utf8'), 'half-written');
  // The stale staging file is listed by both (GC leaves it alone: it is no key).
  const keys = keysOf(bucket.list(''));
  assert.deepEqual(keys, cliJson(['ls'], { url: fileUrl(rustDir) }));
  assert.ok(keys.includes(`${P}renders/${ref}#1.0`), keys.join('\n'));
  for (const key of keys) assert.deepEqual(readFileSync(join(nodeDir, key)), readFileSync(join(rustDir, key)), key);
  // delete-release in each: the same count (the staging file too), and the release's
  // folders all go.
  assert.equal(rs.deleteRelease(bucket, release), 4);
  assert.deepEqual(cliJson(['delete-release', NAME], { url: fileUrl(rustDir) }), { deleted: 4 });
  assert.deepEqual(tree(nodeDir), tree(rustDir));
  assert.deepEqual(tree(nodeDir), ['other/', 'other/app/', 'other/app/keep']);
  // A delete stops climbing at the first folder that is not empty.
  const b = new rs.FolderBucket(nodeDir);
  b.put(`${P}renders/r`, new Uint8Array([1]));
  b.put(`${P}history/h`, new Uint8Array([1]));
  b.delete(`${P}renders/r`);
  assert.deepEqual(tree(nodeDir), ['default/', `${P}`, `${P}history/`, `${P}history/h`, 'other/', 'other/app/', 'other/app/keep']);
  assert.throws(() => b.delete(`${P}history`), (e) => e.kind === 'denied' && /is a folder, not a blob/.test(e.message));
});

test('GC through the component spares a blob younger than the grace period, as the Rust CLI does', (t) => {
  const dir = tempDir(t);
  const url = fileUrl(dir);
  const bucket = new rs.FolderBucket(dir);
  const [kept, young] = [[manifest('kept')], [manifest('young')]].map((objects) => rs.putRender(bucket, release, objects));
  rs.recordHistory(bucket, release, { renderRef: kept, syncedAt: { seconds: 1_704_067_200, nanoseconds: 0 }, summary: '' });
  const youngKey = `${P}renders/${young}`;
  const modified = bucket.list(youngKey)[0].modified;
  const sinceWritten = (seconds) => ({ now: { seconds: modified.seconds + seconds, nanoseconds: modified.nanoseconds }, graceSeconds: 600 });

  // Written just now: the default grace period (10 minutes) spares it, in both hosts.
  const dry = rs.gc(bucket, release, 1, [], true);
  assert.deepEqual([dry.deleteRenders, dry.keepRenders, dry.recentRenders], [[], [`${P}renders/${kept}`], [youngKey]]);
  assert.deepEqual(cliJson(['gc', NAME, '--keep', '1', '--dry-run'], { url }), { dryRun: true, ...dry });
  const real = rs.gc(bucket, release, 1);
  assert.deepEqual(real, dry);
  assert.deepEqual(cliJson(['gc', NAME, '--keep', '1'], { url }), { dryRun: false, ...dry });
  assert.deepEqual(keysOf(bucket.list(`${P}renders/`)), [`${P}renders/${kept}`, youngKey].sort());
  // Judged by the bucket's modification time against `now`: 599 s old is spared,
  // 600 s old is not.
  assert.deepEqual(rs.gc(bucket, release, 1, [], true, sinceWritten(599)).recentRenders, [youngKey]);
  assert.deepEqual(rs.gc(bucket, release, 1, [], true, sinceWritten(600)).deleteRenders, [youngKey]);

  // Grace 0: deleted whatever its age, by Node; the Rust CLI then finds nothing to do.
  const none = rs.gc(bucket, release, 1, [], false, { graceSeconds: 0 });
  assert.deepEqual([none.deleteRenders, none.recentRenders], [[youngKey], []]);
  assert.deepEqual(keysOf(bucket.list(`${P}renders/`)), [`${P}renders/${kept}`]);
  assert.throws(() => rs.getRender(bucket, release, young), (e) => e.kind === 'not-found');
  const after = cliJson(['gc', NAME, '--keep', '1', '--grace', '0'], { url });
  assert.deepEqual([after.deleteRenders, after.recentRenders], [[], []]);
});

test('put-render rewrites a truncated blob, in both hosts', (t) => {
  const dir = tempDir(t);
  const work = tempDir(t);
  const url = fileUrl(dir);
  const objects = [manifest('web', { replicas: '3' }), manifest('db')];
  const canonical = Buffer.from(rs.canonical(objects));
  const calls = [];
  const folder = new rs.FolderBucket(dir);
  const bucket = {
    get: (k) => (calls.push(`get ${k}`), folder.get(k)),
    put: (k, v) => (calls.push(`put ${k}`), folder.put(k, v)),
    exists: (k) => (calls.push(`exists ${k}`), folder.exists(k)),
    list: (p) => (calls.push(`list ${p}`), folder.list(p)),
    delete: (k) => (calls.push(`delete ${k}`), folder.delete(k)),
  };
  const ref = rs.putRender(bucket, release, objects);
  const key = `${P}renders/${ref}`;
  const path = join(dir, P, 'renders', ref);
  assert.deepEqual(calls.splice(0), [`exists ${key}`, `put ${key}`]);
  assert.equal(folder.exists(key), canonical.length);
  // A blob of the canonical size is not written again.
  assert.equal(rs.putRender(bucket, release, objects), ref);
  assert.deepEqual(calls.splice(0), [`exists ${key}`]);

  // Torn by a crash: half of it is left. Reading it fails as corrupt; exists tells the
  // size, so put-render writes it again, and it reads back whole.
  truncateSync(path, Math.floor(canonical.length / 2));
  assert.equal(folder.exists(key), Math.floor(canonical.length / 2));
  assert.throws(() => rs.getRender(bucket, release, ref), (e) => e.kind === 'corrupt');
  calls.splice(0);
  assert.equal(rs.putRender(bucket, release, objects), ref);
  assert.deepEqual(calls.splice(0), [`exists ${key}`, `put ${key}`]);
  assert.deepEqual(Buffer.from(rs.getRender(bucket, release, ref)), canonical);
  assert.deepEqual(readFileSync(path), canonical);
  assert.deepEqual(cli(['get', NAME, ref], { url }).stdout, canonical);

  // An empty blob, repaired by the Rust CLI's put, read back by Node.
  truncateSync(path, 0);
  assert.throws(() => rs.getRender(folder, release, ref), (e) => e.kind === 'corrupt');
  assert.equal(cli(['put', NAME, ...objectFiles(work, objects)], { url }).stdout.toString().trim(), ref);
  assert.deepEqual(Buffer.from(rs.getRender(folder, release, ref)), canonical);
});

test('FolderBucket opens like file:// does', (t) => {
  const dir = tempDir(t);
  assert.throws(() => new rs.FolderBucket(join(dir, 'missing')), /does not exist/);
  const created = new rs.FolderBucket(`${fileUrl(dir)}/new/store`, { createDir: true });
  assert.ok(statSync(join(dir, 'new', 'store')).isDirectory());
  assert.deepEqual(created.list(''), []);
  assert.equal(statSync(join(dir, 'new')).mode & 0o777, 0o700);
});
