// Traces recorded by the Rust CLI (--trace) replayed in the Node host: the same report
// as `render-store replay --json`, field for field; edited traces lead both hosts to the
// same different decision; hand-written traces exercise each replay rule of TRACES.md.
// Traces Node records replay in the Rust CLI to the same report (JSON and text), and the
// same operation on two copies of a store gives the same trace text from the CLI and Node.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as rs from '@convoy/render-store';
import { REPO, cli, fileUrl, manifest, objectFiles, putAndRecordWithCli, tempDir } from './helpers.mjs';

const NAME = 'default/guestbook';
const P = `${NAME}/`;
const release = { namespace: 'default', name: 'guestbook' };

/** A file store with three renders and three history entries, written by the Rust CLI. */
function rustStore(t) {
  const dir = tempDir(t);
  const work = tempDir(t);
  const url = fileUrl(dir);
  const renders = [[manifest('web')], [manifest('web', { v: '2' }), manifest('db')], [manifest('web', { v: '3' })]];
  const refs = putAndRecordWithCli(url, work, NAME, renders, (i) => [`2024-05-0${i + 1}T08:00:00.00${i}Z`, `v${i}`]);
  let n = 0;
  /** Runs a CLI store command with --trace; returns the trace's text and its file. */
  const trace = (args, status = 0) => {
    const file = join(work, `trace-${(n += 1)}.jsonl`);
    cli([...args, '--trace', file], { url, status });
    return { file, text: readFileSync(file, 'utf8') };
  };
  return { dir, work, url, refs, renders, trace };
}

/** `render-store replay --json FILE` (exit 0 when it matches, 1 when not). */
function rustReplay(file, extra = []) {
  const r = cli(['replay', '--json', ...extra, file], { status: null });
  assert.ok(r.status === 0 || r.status === 1, r.stderr);
  const report = JSON.parse(r.stdout.toString());
  assert.equal(r.status === 0, report.matches);
  return report;
}

const lines = (text) => text.trimEnd().split('\n').map((l) => JSON.parse(l));
const unlines = (values) => `${values.map((v) => JSON.stringify(v)).join('\n')}\n`;
/** Edits a trace's parsed lines with `edit` and writes it beside the original. */
function edited(trace, name, edit) {
  const values = lines(trace.text);
  edit(values);
  const file = trace.file.replace(/\.jsonl$/, `-${name}.jsonl`);
  const text = unlines(values);
  writeFileSync(file, text);
  return { file, text };
}

/** Replays in Node and in Rust; both reports must be equal. Returns Node's. */
function bothReplay(trace) {
  const node = rs.replay(trace.text);
  assert.deepEqual(node, rustReplay(trace.file));
  return node;
}

test('traces of every CLI store operation replay in Node as they were recorded', async (t) => {
  const s = rustStore(t);
  const fresh = [manifest('fresh')];
  const freshFiles = objectFiles(s.work, fresh, 'fresh');
  const cases = {
    'put (new render)': s.trace(['put', NAME, ...freshFiles]),
    'put (already stored)': s.trace(['put', NAME, ...freshFiles]),
    'put (invalid object)': s.trace(['put', NAME, ...objectFiles(s.work, [manifest('ok'), '{"bad":'], 'bad')], 1),
    'record (added)': s.trace(['record', NAME, rs.renderRef(fresh), '--synced-at', '2024-06-01T00:00:00+02:00', '--summary', 'fresh ✓']),
    'record (already recorded)': s.trace(['record', NAME, s.refs[0], '--synced-at', '2024-06-02T00:00:00Z']),
    'record (invalid renderRef)': s.trace(['record', NAME, 'sha256:nope', '--synced-at', '2024-06-02T00:00:00Z'], 1),
    history: s.trace(['history', NAME]),
    get: s.trace(['get', NAME, s.refs[1]]),
    'get (not stored)': s.trace(['get', NAME, rs.renderRef([manifest('never')])], 1),
    'gc (dry run, a young blob spared)': s.trace(['gc', NAME, '--keep', '2', '--dry-run']),
    'gc (keep <= 0)': s.trace(['gc', NAME, '--keep', '0']),
    'gc (within the grace period)': s.trace(['gc', NAME, '--keep', '2', '--protect', s.refs[0], '--grace', '1h']),
    gc: s.trace(['gc', NAME, '--keep', '2', '--protect', s.refs[0], '--grace', '0']),
    'delete-release': s.trace(['delete-release', NAME]),
    // A release with a render and no entry (with no key at all the CLI refuses to read).
    'history (empty)': (cli(['put', 'default/empty', ...freshFiles], { url: s.url }), s.trace(['history', 'default/empty'])),
  };
  const operations = new Set();
  for (const [name, trace] of Object.entries(cases)) {
    await t.test(name, () => {
      const recorded = lines(trace.text);
      operations.add(recorded[0].operation);
      const report = bothReplay(trace);
      assert.equal(report.matches, true, JSON.stringify(report.firstDifference));
      assert.equal(report.resultMatches, true);
      assert.equal(report.firstDifference, null);
      assert.equal(report.calls, recorded.length - 2);
      assert.deepEqual(report.result, recorded.at(-1).result);
    });
  }
  assert.deepEqual([...operations].sort(), ['delete-release', 'gc', 'get-render', 'list-history', 'put-render', 'record-history']);
  // A few of the results, to be sure the traces hold what they claim.
  assert.deepEqual(lines(cases['put (invalid object)'].text).at(-1).result.error.kind, 'invalid-object');
  assert.equal(lines(cases['get (not stored)'].text).at(-1).result.error.kind, 'not-found');
  // A grace period of an hour spares the young unreferenced blob; without one, it goes.
  const graced = lines(cases['gc (within the grace period)'].text).at(-1).result.ok;
  assert.equal(graced.deleteHistory.length, 2);
  assert.deepEqual([graced.deleteRenders, graced.recentRenders], [[], [`${P}renders/${s.refs[1]}`]]);
  // The CLI's GC records the time it ran at and its grace period (default 10 minutes).
  const dryHeader = lines(cases['gc (dry run, a young blob spared)'].text)[0];
  assert.equal(dryHeader.version, 6);
  assert.equal(dryHeader.arguments.graceSeconds, 600);
  assert.ok(Math.abs(dryHeader.arguments.now.seconds - Date.now() / 1000) < 600, JSON.stringify(dryHeader.arguments.now));
  assert.equal(lines(cases['gc (within the grace period)'].text)[0].arguments.graceSeconds, 3600);
  assert.deepEqual(lines(cases.gc.text).at(-1).result.ok.deleteRenders, [`${P}renders/${s.refs[1]}`]);
  // exists answers the size; a listing, each object's size and modification time.
  const putAgain = lines(cases['put (already stored)'].text);
  assert.equal(putAgain[1].call, 'exists');
  assert.equal(putAgain[1].answer.ok, Buffer.from(rs.canonical(fresh)).length);
  assert.deepEqual(Object.keys(lines(cases.history.text)[1].answer.ok[0]).sort(), ['key', 'modified', 'size']);
  const deleting = lines(cases['delete-release'].text);
  assert.deepEqual(deleting.at(-1).result, { ok: { deleted: deleting[1].answer.ok.length } });
});

/** A listing entry as a trace holds it. */
const listed = (key, size = 10, seconds = 1_700_000_000) => ({ key, size, modified: { seconds, nanoseconds: 0 } });

test('an edited GC trace: one more key in a list answer', (t) => {
  const s = rustStore(t);
  const dry = s.trace(['gc', NAME, '--keep', '2', '--dry-run', '--grace', '0']);
  const gc = s.trace(['gc', NAME, '--keep', '2', '--grace', '0']);
  const original = rs.replay(gc.text);
  assert.equal(original.matches, true);
  assert.equal(original.result.ok.deleteHistory.length, 1);

  // A newer entry in the first history listing: keeping 2 now deletes two entries, so the
  // third call (after the two listings), the batch delete of the old entries, has one
  // key more.
  const newer = `${P}history/20240509T000000.000000000Z-${s.refs[2]}`;
  const moreHistory = edited(gc, 'history', (v) => v[1].answer.ok.push(listed(newer)));
  const a = bothReplay(moreHistory);
  assert.equal(a.matches, false);
  assert.equal(a.resultMatches, false);
  assert.equal(a.firstDifference.position, 3);
  const twoOldest = lines(gc.text)[1].answer.ok.slice(0, 2).map((o) => o.key);
  assert.deepEqual(a.firstDifference.recorded, { call: 'delete-many', keys: twoOldest.slice(0, 1), answer: { ok: [{ ok: null }] } });
  assert.deepEqual(a.firstDifference.replayed, { call: 'delete-many', keys: twoOldest, answer: { ok: [{ ok: null }, { ok: null }] } });
  assert.equal(a.result.ok.deleteHistory.length, 2);

  // An extra blob in the render listing: nothing names it, so it is deleted, a call past
  // the end of the trace (answered ok, as an unrecorded delete is).
  const stray = `${P}renders/${rs.renderRef([manifest('stray')])}`;
  const renderList = lines(gc.text).findIndex((l) => l.call === 'list' && l.key === `${P}renders/`);
  const blobBatch = lines(gc.text).findIndex((l) => l.call === 'delete-many' && l.keys[0].startsWith(`${P}renders/`));
  const moreRenders = edited(gc, 'renders', (v) => v[renderList].answer.ok.push(listed(stray)));
  const b = bothReplay(moreRenders);
  assert.equal(b.matches, false);
  // Blobs are deleted in one batch, in key order: the stray one lands where its key sorts.
  const deletes = [...original.result.ok.deleteRenders, stray].sort();
  assert.equal(b.firstDifference.position, blobBatch);
  assert.deepEqual(b.firstDifference.replayed, { call: 'delete-many', keys: deletes, answer: { ok: deletes.map(() => ({ ok: null })) } });
  assert.deepEqual(b.firstDifference.recorded, lines(gc.text)[blobBatch]);
  assert.equal(b.firstDifference.recorded.call, 'delete-many');
  assert.ok(b.result.ok.deleteRenders.includes(stray));

  // The same edit on a dry run (recorded before the GC): the same calls, another plan.
  const c = bothReplay(edited(dry, 'history', (v) => v[1].answer.ok.push(listed(newer))));
  assert.equal(c.matches, false);
  assert.equal(c.firstDifference, null);
  assert.equal(c.resultMatches, false);
  assert.equal(c.result.ok.deleteHistory.length, 2);

  // The same GC with the default grace period: every unreferenced blob, written moments
  // (or, the stray one, a second) before the GC's `now`, is spared.
  const recent = edited(gc, 'recent', (v) => {
    v[0].arguments.graceSeconds = 600;
    v[renderList].answer.ok.push({ key: stray, size: 10, modified: { seconds: v[0].arguments.now.seconds - 1, nanoseconds: 0 } });
  });
  const d = bothReplay(recent);
  assert.deepEqual(d.result.ok.recentRenders, deletes);
  assert.deepEqual(d.result.ok.deleteRenders, []);
});

test('an edited GC trace: a protected ref removed', (t) => {
  const s = rustStore(t);
  // Keeping one entry, refs[0] survives only because it is protected.
  const gc = s.trace(['gc', NAME, '--keep', '1', '--protect', s.refs[0], '--grace', '0']);
  const recorded = lines(gc.text);
  assert.ok(recorded.at(-1).result.ok.keepRenders.includes(`${P}renders/${s.refs[0]}`));
  const unprotected = edited(gc, 'unprotected', (v) => {
    v[0].arguments.protected = [];
  });
  const report = bothReplay(unprotected);
  assert.equal(report.matches, false);
  assert.equal(report.resultMatches, false);
  assert.deepEqual(report.result.ok.deleteRenders, [s.refs[0], s.refs[1]].map((r) => `${P}renders/${r}`).sort());
  // The first call that differs is the batch delete of the renders: the recorded trace
  // has the other render alone there.
  const position = report.firstDifference.position;
  assert.deepEqual(report.firstDifference.replayed.call, 'delete-many');
  assert.deepEqual(report.firstDifference.replayed.keys, report.result.ok.deleteRenders);
  assert.deepEqual(report.firstDifference.recorded.keys, [`${P}renders/${s.refs[1]}`]);
  assert.ok(position > recorded.findIndex((l) => l.call === 'list' && l.key === `${P}renders/`));
});

test('a recorded trap is compared by its kind only, and a stopped replay fails in both hosts', (t) => {
  // A trace whose call the sandbox stopped: its message is the host's own.
  const objects = [manifest('a')];
  const trap = handTrace(t, 'put-render', { objects: objects.map((o) => Buffer.from(o).toString('base64')) }, [],
    { error: { kind: 'trap', message: 'the render-store component was stopped: somewhere else' } });
  // Replayed without that bound, the call ends otherwise: a difference in both hosts.
  const report = bothReplay(trap);
  assert.equal(report.resultMatches, false);
  assert.equal(report.result.error.kind, 'bucket');
  // A replay the sandbox stops itself cannot be reported by the component: both hosts
  // say so and fail.
  const s = rustStore(t);
  // Within the cap as a file (a replay reads no trace larger than its memory cap), over
  // it once replayed.
  const big = [JSON.stringify({ kind: 'ConfigMap', data: { x: 'y'.repeat(1 << 20) } })];
  const traced = s.trace(['put', NAME, ...objectFiles(s.work, big, 'big')]);
  const rust = cli(['replay', '--memory-cap-mib', '4', traced.file], { status: null });
  assert.equal(rust.status, 1);
  assert.match(rust.stderr.toString(), /replay stopped: .*memory cap/);
  const module = fileURLToPath(import.meta.resolve('@convoy/render-store'));
  const child = spawnSync(process.execPath, [
    '--wasm-max-mem-pages=64', // 4 MiB per linear memory
    '--input-type=module', '-e',
    `import { replay } from ${JSON.stringify(module)}; import { readFileSync } from 'node:fs';
     try { replay(readFileSync(${JSON.stringify(traced.file)}, 'utf8')); process.exit(0); }
     catch (e) { process.stdout.write(JSON.stringify({ kind: e.kind })); process.exit(1); }`,
  ], { encoding: 'utf8' });
  assert.equal(child.status, 1, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), { kind: 'trap' });
});

/** A hand-written trace, per TRACES.md, written to a file for the Rust CLI too. Version 2,
 *  as the build before batch deletes wrote them (one `delete` a key): it still replays,
 *  with the calls and errors of that build. */
function handTrace(t, operation, args, calls, result) {
  const header = { format: 'render-store-trace', version: 2, operation, arguments: { release: { namespace: 'default', name: 'guestbook' }, ...args } };
  const text = unlines([header, ...calls, { result }]);
  const file = join(tempDir(t), `${operation}.jsonl`);
  writeFileSync(file, text);
  return { file, text };
}

const b64 = (s) => Buffer.from(s).toString('base64');

test('hand-written traces: each replay rule, in both hosts', (t) => {
  const objects = [manifest('a')];
  const ref = rs.renderRef(objects);
  const blob = Buffer.from(rs.canonical(objects));
  const renderKey = `${P}renders/${ref}`;

  // A recorded put answer is given back: a failed put fails the operation.
  const failedPut = handTrace(t, 'put-render', { objects: objects.map(b64) }, [
    { call: 'exists', key: renderKey, answer: { ok: null } },
    { call: 'put', key: renderKey, value: blob.toString('base64'), answer: { error: { kind: 'failed', message: 'disk full' } } },
  ], { error: { kind: 'bucket', message: `put ${renderKey}: disk full` } });
  const a = bothReplay(failedPut);
  assert.equal(a.matches, true, JSON.stringify(a));

  // A read the trace never saw fails with "not in the trace".
  const unseen = handTrace(t, 'get-render', { renderRef: ref }, [], { ok: { render: blob.toString('base64') } });
  const b = bothReplay(unseen);
  assert.equal(b.matches, false);
  assert.deepEqual(b.firstDifference, { position: 1, recorded: null, replayed: { call: 'get', key: renderKey, answer: { error: { kind: 'failed', message: 'not in the trace' } } } });
  assert.deepEqual(b.result, { error: { kind: 'bucket', message: `get ${renderKey}: not in the trace` } });

  // Answers of the same call and key are used in trace order, then the last again: a
  // real GC lists history twice; with one recorded listing, the second call gets it
  // again, so the entry deleted in between still counts as live.
  const old = `${P}history/20240101T000000.000000000Z-${ref}`;
  const other = rs.renderRef([manifest('b')]);
  const noGrace = { now: { seconds: 1_704_153_600, nanoseconds: 0 }, graceSeconds: 0 };
  const at = (key) => listed(key, 100, 1_704_067_200);
  const newer = `${P}history/20240102T000000.000000000Z-${other}`;
  const gcOnce = handTrace(t, 'gc', { keep: 1, protected: [], dryRun: false, ...noGrace }, [
    { call: 'list', key: `${P}history/`, answer: { ok: [at(old), at(newer)] } },
    { call: 'delete', key: old, answer: { ok: null } },
    { call: 'list', key: `${P}renders/`, answer: { ok: [at(renderKey), at(`${P}renders/${other}`)] } },
  ], { ok: { deleteHistory: [old], keepHistory: [newer], deleteRenders: [renderKey], keepRenders: [`${P}renders/${other}`], ignored: [], recentRenders: [] } });
  const c = bothReplay(gcOnce);
  assert.equal(c.matches, false);
  assert.deepEqual(c.firstDifference.position, 3);
  assert.deepEqual(c.firstDifference.replayed, { call: 'list', key: `${P}history/`, answer: { ok: [at(old), at(newer)] } });
  assert.deepEqual(c.result.ok.keepHistory, [old, newer]);
  assert.deepEqual(c.result.ok.deleteRenders, []);

  // The same GC with both listings recorded: the second listing is used second.
  const gcTwice = handTrace(t, 'gc', { keep: 1, protected: [], dryRun: false, ...noGrace }, [
    { call: 'list', key: `${P}history/`, answer: { ok: [at(old), at(newer)] } },
    { call: 'delete', key: old, answer: { ok: null } },
    { call: 'list', key: `${P}history/`, answer: { ok: [at(newer)] } },
    { call: 'list', key: `${P}renders/`, answer: { ok: [at(renderKey), at(`${P}renders/${other}`)] } },
    { call: 'delete', key: renderKey, answer: { ok: null } },
  ], { ok: { deleteHistory: [old], keepHistory: [newer], deleteRenders: [renderKey], keepRenders: [`${P}renders/${other}`], ignored: [], recentRenders: [] } });
  assert.equal(bothReplay(gcTwice).matches, true);

  // The same GC with a grace period of two days at `now`: the blob, a day old, is spared.
  const gcGrace = edited(gcTwice, 'grace', (v) => {
    v[0].arguments.graceSeconds = 2 * 86400;
    v.splice(5, 1);
    v.at(-1).result.ok = { ...v.at(-1).result.ok, deleteRenders: [], recentRenders: [renderKey] };
  });
  const g = bothReplay(gcGrace);
  assert.equal(g.matches, true, JSON.stringify(g));
  assert.equal(g.calls, 4);

  // An unrecorded delete is answered ok; a recorded failing one fails the GC.
  const failingDelete = edited(gcTwice, 'failing-delete', (v) => {
    v[2].answer = { error: { kind: 'denied', message: 'read-only bucket' } };
  });
  const d = bothReplay(failingDelete);
  assert.deepEqual(d.result, { error: { kind: 'bucket', message: `delete ${old}: denied: read-only bucket` } });
  assert.equal(d.firstDifference.position, 3);
  assert.equal(d.firstDifference.replayed, null);

  // The same GC as the version 3 build recorded it: deletes in batches, each answered
  // per key; a key that failed is named in the error, and no call follows.
  const batched = edited(gcTwice, 'batched', (v) => {
    v[0].version = 3;
    v[2] = { call: 'delete-many', keys: [old], answer: { ok: [{ ok: null }] } };
    v[5] = { call: 'delete-many', keys: [renderKey], answer: { ok: [{ ok: null }] } };
  });
  assert.equal(bothReplay(batched).matches, true);
  const failingKey = edited(batched, 'failing-key', (v) => {
    v[2].answer = { ok: [{ error: { kind: 'denied', message: 'read-only bucket' } }] };
  });
  const f = bothReplay(failingKey);
  assert.deepEqual(f.result, { error: { kind: 'bucket', message: `delete-many: 1 of 1 keys could not be deleted: ${old}: denied: read-only bucket` } });
  assert.equal(f.firstDifference.position, 3);
  assert.equal(f.firstDifference.replayed, null);

  // Integers beyond 2^53 in the header are read exactly (keep = i64::MAX keeps all).
  const hugeKeep = handTrace(t, 'gc', { keep: 0, protected: [], dryRun: true, ...noGrace }, [
    { call: 'list', key: `${P}history/`, answer: { ok: [at(old), at(newer)] } },
    { call: 'list', key: `${P}renders/`, answer: { ok: [at(renderKey)] } },
  ], { ok: { deleteHistory: [], keepHistory: [old, newer], deleteRenders: [], keepRenders: [renderKey], ignored: [], recentRenders: [] } });
  hugeKeep.text = hugeKeep.text.replace('"keep":0', '"keep":9223372036854775807');
  writeFileSync(hugeKeep.file, hugeKeep.text);
  assert.equal(bothReplay(hugeKeep).matches, true);
});

test('malformed traces are refused, as the Rust CLI refuses them', (t) => {
  const good = handTrace(t, 'list-history', {}, [{ call: 'list', key: `${P}history/`, answer: { ok: [] } }], { ok: { entries: [] } });
  assert.equal(bothReplay(good).matches, true);
  // Blank lines and CRLF are fine.
  assert.equal(rs.replay(`\n${good.text.replace(/\n/g, '\r\n')}\n\n`).matches, true);
  const bad = {
    'version 1': (v) => { v[0].version = 1; },
    'another format': (v) => { v[0].format = 'x'; },
    'unknown operation': (v) => { v[0].operation = 'copy'; },
    'unknown call': (v) => { v[1].call = 'head'; },
    'value on a list': (v) => { v[1].value = ''; },
    'wrong answer shape': (v) => { v[1].answer = { ok: true }; },
    'a version 1 listing': (v) => { v[1].answer = { ok: [`${P}history/x`] }; },
    'a listing without modified': (v) => { v[1].answer = { ok: [{ key: `${P}history/x`, size: 1 }] }; },
    'nanoseconds of 10^9': (v) => { v[1].answer = { ok: [{ key: `${P}history/x`, size: 1, modified: { seconds: 0, nanoseconds: 1e9 } }] }; },
    'a negative size': (v) => { v[1].answer = { ok: [{ key: `${P}history/x`, size: -1, modified: { seconds: 0, nanoseconds: 0 } }] }; },
    'unknown bucket error': (v) => { v[1].answer = { error: { kind: 'gone' } }; },
    'no result line': (v) => { v.pop(); v.pop(); },
  };
  for (const [name, edit] of Object.entries(bad)) {
    const trace = edited(good, name.replace(/[ ^]/g, '-'), edit);
    assert.throws(() => rs.replay(trace.text), /^TraceError: trace line \d+: /, name);
    const r = cli(['replay', '--json', trace.file], { status: null });
    assert.notEqual(r.status, 0, name);
    assert.match(r.stderr, /trace line \d+: /, name);
  }
  // A version 1 trace is refused in the same words by both hosts.
  const v1 = edited(good, 'v1', (v) => { v[0].version = 1; });
  const message = 'trace line 1: trace version 1 is not supported: this build reads versions 2 to 6';
  assert.throws(() => rs.replay(v1.text), (e) => e.message === message);
  assert.match(cli(['replay', '--json', v1.file], { status: null }).stderr, new RegExp(message));
  // A GC trace needs the time it ran at and its grace period.
  const gcTrace = handTrace(t, 'gc', { keep: 1, protected: [], dryRun: true, now: { seconds: 0, nanoseconds: 0 }, graceSeconds: 0 }, [], { ok: {} });
  for (const [name, edit] of Object.entries({
    'no now': (v) => { delete v[0].arguments.now; },
    'no graceSeconds': (v) => { delete v[0].arguments.graceSeconds; },
    'a negative graceSeconds': (v) => { v[0].arguments.graceSeconds = -1; },
    'now past its second': (v) => { v[0].arguments.now.nanoseconds = 1e9; },
  })) {
    const trace = edited(gcTrace, name.replace(/ /g, '-'), edit);
    assert.throws(() => rs.replay(trace.text), /^TraceError: trace line 1: /, name);
    assert.match(cli(['replay', '--json', trace.file], { status: null }).stderr, /trace line 1: /, name);
  }
});

/**
 * Gives every file under `target` the modification time of its twin under `source`, to
 * the nanosecond: the bucket's clock is the file system's, and listings put each
 * object's time in the trace. (fs.utimes takes a double of seconds, which cannot hold
 * nanoseconds of today's times; GNU touch sets them exactly.)
 */
function copyMtimes(source, target) {
  for (const entry of readdirSync(target, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    let twin;
    try {
      twin = statSync(join(source, relative(target, path)), { bigint: true });
    } catch {
      continue; // a file only this copy has
    }
    const ns = twin.mtimeNs % 1_000_000_000n;
    const at = `@${twin.mtimeNs / 1_000_000_000n}.${String(ns).padStart(9, '0')}`;
    const r = spawnSync('touch', ['-c', '-m', '-d', at, path], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
}

test('the same operation on two copies of a store: the CLI and Node write the same trace, byte for byte', (t) => {
  const s = rustStore(t);
  const nodeDir = tempDir(t);
  cpSync(s.dir, nodeDir, { recursive: true });
  const bucket = new rs.FolderBucket(nodeDir);
  t.after(() => bucket.close());
  // Not a canonical encoding (keys unsorted, spaces, a non-ASCII value): the trace holds
  // the objects as given.
  const fresh = ['{ "kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "same-trace"}, "data": {"ü": "✓"} }', manifest('web')];
  const freshRef = rs.renderRef(fresh);
  const gcAt = (args) => ({ now: args.now, graceSeconds: args.graceSeconds });
  const runs = [
    [['put', NAME, ...objectFiles(s.work, fresh, 'same')], () => rs.putRender(bucket, NAME, fresh)],
    [['get', NAME, s.refs[2]], () => rs.getRender(bucket, NAME, s.refs[2])],
    [['history', NAME], () => rs.listHistory(bucket, NAME)],
    [['record', NAME, freshRef, '--synced-at', '2024-06-01T00:00:00.25Z', '--summary', 'again ✓'],
      () => rs.recordHistory(bucket, NAME, { renderRef: freshRef, syncedAt: { seconds: 1_717_200_000, nanoseconds: 250_000_000 }, summary: 'again ✓' })],
    [['gc', NAME, '--keep', '1', '--protect', s.refs[1], '--dry-run'], (a) => rs.gc(bucket, NAME, 1, [s.refs[1]], true, gcAt(a))],
    [['gc', NAME, '--keep', '2'], (a) => rs.gc(bucket, NAME, 2, [], false, gcAt(a))],
    [['gc', NAME, '--keep', '1', '--grace', '0'], (a) => rs.gc(bucket, NAME, 1, [], false, gcAt(a))],
    [['delete-release', NAME], () => rs.deleteRelease(bucket, NAME)],
  ];
  const results = [];
  for (const [args, op] of runs) {
    const fromRust = s.trace(args);
    // Both copies hold the same files; give Node's the times the CLI's have.
    copyMtimes(s.dir, nodeDir);
    const recorded = lines(fromRust.text)[0];
    const { trace, error } = rs.record(() => op(recorded.arguments));
    assert.equal(error, undefined, args.join(' '));
    assert.equal(trace, fromRust.text, args.join(' '));
    results.push(lines(trace).at(-1).result);
    // What the CLI does after a record and after a GC that deleted something: keep
    // the release index (CONTRACT.md §3), a call of its own outside the trace.
    if (args[0] === 'record') rs.indexRelease(bucket, NAME);
    if (args[0] === 'gc' && !args.includes('--dry-run')) rs.indexRelease(bucket, NAME, [], { readMissing: false });
    // The next CLI run may delete the files whose times the next copy would take.
    copyMtimes(s.dir, nodeDir);
  }
  // The sequence did what it says, so the equal traces are of real work: the first GC
  // deleted entries and spared young blobs, the last deleted blobs, all keys went.
  assert.equal(results[0].ok.renderRef, freshRef);
  assert.equal(results[2].ok.entries.length, 3);
  assert.deepEqual(results[3], { ok: { added: true } });
  assert.equal(results[5].ok.deleteHistory.length, 2);
  assert.ok(results[5].ok.recentRenders.length > 0, JSON.stringify(results[5]));
  assert.ok(results[6].ok.deleteRenders.length > 0, JSON.stringify(results[6]));
  assert.ok(results[7].ok.deleted > 0);
  assert.deepEqual(bucket.list(''), []);
});

/** Writes a trace Node recorded to a file, for the CLI. */
function traceFile(t, name, text) {
  const file = join(tempDir(t), `${name}.jsonl`);
  writeFileSync(file, text);
  return { file, text };
}

test('traces Node records replay in the Rust CLI to the same report, JSON and text', (t) => {
  let tick = 1_700_000_000;
  // A clock that moves a second per write: listings carry distinct times.
  const bucket = new rs.MemoryBucket({ clock: () => ({ seconds: (tick += 1), nanoseconds: 123_456_789 }) });
  const s = rs.store(bucket);
  const renders = [[manifest('a')], [manifest('b'), manifest('c', { 'line\nbreak': 'tab\there' })], [manifest('d')]];
  const refs = renders.map((r) => s.putRender(NAME, r));
  // Synced before the GCs' `now` (later entries would not count: CONTRACT.md §5).
  refs.forEach((ref, i) => s.recordHistory(NAME, { renderRef: ref, syncedAt: { seconds: 1_699_000_000 + i * 3600, nanoseconds: i }, summary: `node ${i}` }));
  const at = { now: { seconds: tick + 30, nanoseconds: 5 }, graceSeconds: 60 };
  const ops = {
    'put-render': () => s.putRender(NAME, [manifest('e'), manifest('a')]),
    'put-render (invalid object)': () => s.putRender(NAME, [manifest('ok'), '{"x": [1, 2,]}']),
    'get-render': () => s.getRender(NAME, refs[1]),
    'get-render (not stored)': () => s.getRender(NAME, rs.renderRef([manifest('never')])),
    'has-history-ref': () => s.hasHistoryRef(NAME, refs[2]),
    'record-history': () => s.recordHistory(NAME, { renderRef: refs[0], syncedAt: { seconds: 1_800_000_000, nanoseconds: 7 }, summary: 'ü\u0007' }),
    'record-history (invalid renderRef)': () => s.recordHistory(NAME, { renderRef: 'sha256:nope', syncedAt: { seconds: 0, nanoseconds: 0 } }),
    'list-history': () => s.listHistory(NAME),
    'gc (dry run)': () => s.gc(NAME, 1, [refs[0], ''], true, at),
    'gc (grace)': () => s.gc(NAME, 1, [refs[0]], false, at),
    'gc (no grace)': () => s.gc(NAME, 1, [], false, { now: at.now, graceSeconds: 0 }),
    'delete-release': () => s.deleteRelease(NAME),
  };
  const traces = {};
  for (const [name, op] of Object.entries(ops)) {
    const { trace, error } = rs.record(op);
    assert.equal(error !== undefined, / \((invalid|not stored)/.test(name), name);
    traces[name] = traceFile(t, name.replace(/\W+/g, '-'), trace);
  }
  // An edited trace too: its report names a difference, and both hosts word it alike.
  // (keeping all three entries, the GC deletes none: its calls and plan differ)
  const keepAll = (l, i) => (i === 0 ? { ...l, arguments: { ...l.arguments, keep: 3 } } : l);
  traces['gc (edited)'] = traceFile(t, 'gc-edited', unlines(lines(traces['gc (grace)'].text).map(keepAll)));
  for (const [name, trace] of Object.entries(traces)) {
    const node = rs.replayReport(trace.text);
    const json = cli(['replay', '--json', trace.file], { status: null });
    assert.equal(json.status, node.matches ? 0 : 1, `${name}: ${json.stderr}`);
    assert.deepEqual(JSON.parse(json.stdout.toString()), JSON.parse(node.json), name);
    const text = cli(['replay', trace.file], { status: null });
    assert.equal(text.stdout.toString(), node.text, name);
    assert.equal(node.matches, name !== 'gc (edited)', `${name}: ${node.text}`);
  }
  const edited = rs.replay(traces['gc (edited)'].text);
  assert.equal(edited.resultMatches, false);
  assert.notEqual(edited.firstDifference, null);
  assert.deepEqual(edited.result.ok.deleteHistory, []);
  assert.deepEqual(bucket.list(''), []);
});

// tests/vectors/traces/gc-skipped-entries.jsonl (written by guest/tests/trace.rs): a GC over
// ten planted far-future entries, an entry of a replica whose clock ran ahead and an
// entry whose render is missing. It replays as recorded in Node and in the Rust CLI, and
// no real entry was pushed out (CONTRACT.md §5).
test('the GC conformance trace replays as recorded, in both hosts', () => {
  const file = join(REPO, 'tests/vectors/traces/gc-skipped-entries.jsonl');
  const report = rs.replay(readFileSync(file, 'utf8'));
  assert.equal(report.matches, true, JSON.stringify(report.firstDifference));
  assert.deepEqual(report, rustReplay(file));
  const plan = report.result.ok;
  assert.deepEqual(
    ['deleteHistory', 'keepHistory', 'futureHistory', 'danglingHistory'].map((k) => plan[k].length),
    [1, 16, 11, 1],
  );
});

// tests/vectors/traces/record-authenticated.jsonl (written by guest/tests/trace.rs): a
// record-history with encryption required over an entry a writer of the bucket planted.
// Node replays it with the keyring it was recorded with, as the Rust CLI does.
test('the authenticated record trace replays with its keyring, in both hosts', (t) => {
  const file = join(REPO, 'tests/vectors/traces/record-authenticated.jsonl');
  const work = tempDir(t);
  const keys = join(work, 'keys');
  writeFileSync(keys, `k1 ${Buffer.alloc(32, '1').toString('base64')}\n`, { mode: 0o600 });
  const report = rs.replay(readFileSync(file, 'utf8'), rs.readKeyringFile(keys));
  assert.equal(report.matches, true, JSON.stringify(report.firstDifference));
  assert.deepEqual(report.result.ok, { added: true });
  assert.deepEqual(report, rustReplay(file, ['--encryption-keys', keys]));
  writeFileSync(keys, `k1 ${Buffer.alloc(32, '2').toString('base64')}\n`, { mode: 0o600 });
  assert.equal(rs.replay(readFileSync(file, 'utf8'), rs.readKeyringFile(keys)).matches, false);
});
