// Encryption at rest in the Node host: a keyring file seals render blobs in the
// component exactly as in the Rust host, so the CLI reads what Node sealed and Node
// what the CLI sealed; a missing key is named; traces name the key ids, never a key.

import assert from 'node:assert/strict';
import { chmodSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';
import { cli, fileUrl, tempDir } from './helpers.mjs';

const VALUE = 'Hq4Zr8Wm2Tx6Lb9Nc3Vk7Pd5Gs1Fj0Ya';
const release = { namespace: 'ns', name: 'app' };
const secret = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'ns' }, stringData: { password: VALUE } });

/** A keyring file of `ids`, each key 32 copies of its id's last character, mode 0600. */
function keyringFile(dir, ids, mode = 0o600) {
  const path = join(dir, `keys-${ids.join('-')}`);
  writeFileSync(path, ids.map((id) => `${id} ${Buffer.alloc(32, id.at(-1)).toString('base64')}\n`).join(''));
  chmodSync(path, mode);
  return path;
}

function filesUnder(dir) {
  return readdirSync(dir, { recursive: true }).map((f) => join(dir, f)).filter((f) => statSync(f).isFile());
}

test('a folder store sealed by Node holds no Secret byte, and the CLI and Node read each other', (t) => {
  const dir = tempDir(t);
  const work = tempDir(t);
  const keys = keyringFile(work, ['k1']);
  const store = new rs.RenderStore(new rs.FolderBucket(dir), { keyring: rs.readKeyringFile(keys) });
  const ref = store.putRender(release, [secret]);
  assert.equal(ref, rs.renderRef([secret]));
  for (const f of filesUnder(dir)) {
    for (let i = 0; i + 8 <= VALUE.length; i++) assert.ok(!readFileSync(f).includes(VALUE.slice(i, i + 8)), f);
  }
  assert.ok(Buffer.from(store.getRender(release, ref)).includes(VALUE));
  const url = fileUrl(dir);
  assert.ok(cli(['--encryption-keys', keys, 'get', 'ns/app', ref], { url }).stdout.includes(VALUE));
  const failed = cli(['get', 'ns/app', ref], { url, status: 1 });
  assert.match(failed.stderr, /"k1"/);
  const file = join(work, 'cm.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } }));
  const cliRef = cli(['--encryption-keys', keys, 'put', 'ns/app', file], { url }).stdout.toString().trim();
  assert.ok(Buffer.from(store.getRender(release, cliRef)).includes('ConfigMap'));
  const plain = new rs.RenderStore(new rs.FolderBucket(dir));
  assert.throws(() => plain.getRender(release, ref), (e) => e.kind === 'encryption-key' && e.message.includes('"k1"'));
});

test('rekey moves blobs to the first key; a trace names the key ids and replays only with them', (t) => {
  const work = tempDir(t);
  const bucket = new rs.MemoryBucket();
  const old = new rs.RenderStore(bucket, { keyring: rs.readKeyringFile(keyringFile(work, ['k1'])) });
  const ref = old.putRender(release, [secret]);
  const rotated = rs.readKeyringFile(keyringFile(work, ['k2', 'k1']));
  const store = new rs.RenderStore(bucket, { keyring: rotated });
  assert.deepEqual(store.rekeyRelease(release), { rewritten: 1, kept: 0 });
  assert.deepEqual(store.rekeyRelease(release), { rewritten: 0, kept: 1 });
  assert.throws(() => old.getRender(release, ref), (e) => e.kind === 'encryption-key');
  const { trace } = rs.record(() => store.getRender(release, ref));
  assert.ok(trace.includes('"keyIds":["k2","k1"]') && !trace.includes(VALUE.slice(0, 8)));
  assert.equal(rs.replay(trace, rotated).matches, true);
  assert.throws(() => rs.replay(trace), (e) => e instanceof rs.TraceError && e.line === 1 && e.message.includes('"k2"'));
  assert.throws(() => new rs.RenderStore(bucket).rekeyRelease(release), (e) => e.kind === 'invalid-input');
});

test('a keyring file others can read, or a bad line, is refused without quoting a key', (t) => {
  const work = tempDir(t);
  assert.throws(() => rs.readKeyringFile(keyringFile(work, ['k1'], 0o644)), /mode 0644/);
  assert.throws(() => rs.parseKeyring('k1 not-base64\n'), (e) => e.kind === 'invalid-input' && /line 1/.test(e.message));
  const key = Buffer.alloc(16, 1).toString('base64');
  assert.throws(() => rs.parseKeyring(`k1 ${key}\n`), (e) => /16 bytes/.test(e.message) && !e.message.includes(key));
});

test('encryptionRequired refuses a plaintext blob planted over a sealed one, as the CLI does', (t) => {
  const dir = tempDir(t);
  const work = tempDir(t);
  const keys = keyringFile(work, ['k1']);
  const keyring = rs.readKeyringFile(keys);
  const sealed = new rs.RenderStore(new rs.FolderBucket(dir), { keyring });
  const ref = sealed.putRender(release, [secret]);
  const blob = join(dir, 'ns', 'app', 'renders', ref);
  const sealedBytes = readFileSync(blob);
  // A writer without the key plants the plaintext: read by default, refused under the rule.
  writeFileSync(blob, rs.canonical([secret]));
  assert.ok(Buffer.from(sealed.getRender(release, ref)).includes(VALUE));
  const strict = new rs.RenderStore(new rs.FolderBucket(dir), { keyring, encryptionRequired: true });
  assert.equal(strict.encryptionRequired, true);
  const plaintext = (e) => e.kind === 'corrupt' && e.message.includes('encryption is required') && e.message.includes('is plaintext');
  assert.throws(() => strict.getRender(release, ref), plaintext);
  assert.throws(() => rs.getRender(new rs.FolderBucket(dir), release, ref, keyring, { encryptionRequired: true }), plaintext);
  const cliRefused = cli(['--encryption-keys', keys, '--encryption-required', 'get', 'ns/app', ref], { url: fileUrl(dir), status: 1 });
  assert.match(cliRefused.stderr.toString(), /is plaintext/);
  // Traced, the header says so, and the replay refuses it again.
  const { trace, error } = rs.record(() => strict.getRender(release, ref));
  assert.ok(plaintext(error) && trace.includes('"encryptionRequired":true'));
  assert.equal(rs.replay(trace, keyring).matches, true);
  // A put under the rule seals it again.
  strict.putRender(release, [secret]);
  assert.deepEqual(readFileSync(blob), sealedBytes);
  assert.ok(Buffer.from(strict.getRender(release, ref)).includes(VALUE));
  // The rule needs a keyring: the component refuses it before any bucket call.
  const bucket = new rs.MemoryBucket();
  const keyless = new rs.RenderStore(bucket, { encryptionRequired: true });
  assert.throws(() => keyless.putRender(release, [secret]), (e) => e.kind === 'invalid-input' && /the keyring is empty/.test(e.message));
  assert.deepEqual(bucket.list(''), []);
  assert.throws(() => new rs.RenderStore(bucket, { keyring, encryptionRequired: 'yes' }), TypeError);
});

test('with a keyring entries authenticate, the CLI agrees, and a planted entry keeps no sync out', (t) => {
  const dir = tempDir(t);
  const work = tempDir(t);
  const keys = keyringFile(work, ['k1']);
  const keyring = rs.readKeyringFile(keys);
  const strict = new rs.RenderStore(new rs.FolderBucket(dir), { keyring, encryptionRequired: true });
  const ref = strict.putRender(release, [secret]);
  // A writer of the bucket records the render first, with no MAC.
  const bucket = new rs.FolderBucket(dir);
  const planted = `ns/app/history/20250101T000000.000000000Z-${ref}`;
  bucket.put(planted, Buffer.from(JSON.stringify({ renderRef: ref, syncedAt: '2025-01-01T00:00:00Z', summary: 'planted' })));
  assert.equal(strict.recordHistory(release, { renderRef: ref, syncedAt: { seconds: 1735693200, nanoseconds: 0 }, summary: 'real' }), true);
  const entries = strict.listHistory(release);
  assert.deepEqual(entries.map((e) => e.summary), ['planted', 'real']);
  assert.match(entries[0].trust.unauthenticated, /no MAC/);
  assert.deepEqual(entries[1].trust, { authenticated: 'k1' });
  // The CLI judges the same entries the same way (the body Node wrote carries the MAC).
  const verify = cli(['--encryption-keys', keys, 'verify', 'ns/app', '-o', 'json'], { url: fileUrl(dir), status: 1 });
  const problems = JSON.parse(verify.stdout).problems;
  assert.deepEqual(problems.map((p) => [p.kind, p.key]), [['unauthenticated', planted]]);
  // keep 1 counts the authenticated entry; the planted one is past retention.
  const plan = strict.gc(release, 1, [], true, { graceSeconds: 0 });
  assert.deepEqual(plan.deleteHistory, [planted]);
  assert.equal(plan.unauthenticatedHistory, undefined);
  // Without a keyring nothing is judged.
  assert.ok(new rs.RenderStore(new rs.FolderBucket(dir)).listHistory(release).every((e) => e.trust === undefined));
});
