// The messages this host gives the component (wit/render-store.wit, bucket-error) are
// the Rust and Python hosts' byte for byte: every case of tests/vectors/messages.json
// (which the other two hosts check too), through the functions and through the paths
// that say them, and against the Rust CLI for the same refused call and the same
// left-out file name.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';
import { REPO, cli, fileUrl, tempDir } from './helpers.mjs';

const { BucketError, FolderBucket, MemoryBucket, messages } = rs;
const vectors = JSON.parse(readFileSync(join(REPO, 'tests/vectors/messages.json'), 'utf8'));
const casesOf = (name) => vectors.cases.filter((c) => c.message === name);
const WHY = { link: 'link', 'link-or-file': 'linkOrFile', 'not-plain-file': 'notPlainFile', 'odd-name': 'oddName' };
const UNWALKABLE = { link: 'link', 'not-folder': 'notFolder', unreadable: 'unreadable' };

/** What `fn()` threw: a BucketError of `kind`; its message. */
function refusal(fn, kind) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof BucketError, String(e));
    assert.equal(e.kind, kind, e.message);
    return e.message;
  }
  assert.fail('expected a BucketError');
}

test('every message of the shared vectors, word for word', () => {
  const say = {
    quote: (c) => messages.quote(c.text),
    'no-bucket': () => messages.NO_BUCKET,
    'outside-prefix': (c) => messages.outsidePrefix(c.key, c.prefix),
    'invalid-key': (c) => messages.invalidKey(c.key),
    'read-only': (c) => messages.readOnly(c.call, c.key),
    'too-large': (c) => messages.tooLarge(c.key, c.size, c.limit),
    backend: (c) => messages.backend(c.call, c.key, c.description),
    'crosses-link': (c) => messages.crossesLink(c.key, c.component),
    'not-plain-file': (c) => messages.notPlainFile(c.key),
    'staging-mark': (c) => messages.stagingMark(c.key),
    'folder-not-blob': (c) => messages.folderNotBlob(c.key),
    unwalkable: (c) => messages.unwalkable(c.prefix, c.path, messages.UNWALKABLE[UNWALKABLE[c.why]]),
    miscounted: (c) => messages.miscounted(c.first, c.answered, c.asked),
    'left-out': (c) => {
      const path = c.bytes_b64 !== undefined ? Buffer.from(c.bytes_b64, 'base64') : c.path;
      return messages.leftOut(path, messages.LEFT_OUT[WHY[c.why]], c.component);
    },
  };
  assert.ok(vectors.cases.length >= 20);
  // Each way a listing refuses is worded by a case.
  assert.deepEqual([...new Set(casesOf('unwalkable').map((c) => c.why))].sort(), Object.keys(UNWALKABLE).sort());
  for (const c of vectors.cases) {
    assert.ok(say[c.message], `unknown message ${c.message}`);
    assert.equal(say[c.message](c), c.want, JSON.stringify(c));
  }
  // Every message the WIT specifies has a case.
  assert.deepEqual(Object.keys(say).sort(), [...new Set(vectors.cases.map((c) => c.message))].sort());
});

test('the scope, the memory bucket and the folder bucket refuse in the shared words', (t) => {
  const imports = rs.scopedBucket(new MemoryBucket(), 'ns/app');
  for (const c of casesOf('outside-prefix').filter((c) => c.prefix === 'ns/app/')) {
    for (const call of ['get', 'exists', 'list', 'delete']) {
      assert.throws(() => imports[call](c.key), (e) => {
        assert.deepEqual(e.payload, { tag: 'denied', val: c.want });
        return true;
      });
    }
  }
  const mem = new MemoryBucket();
  const folder = new FolderBucket(tempDir(t), { warn: () => {} });
  for (const c of casesOf('invalid-key')) {
    assert.equal(refusal(() => mem.put(c.key, new Uint8Array([1])), 'denied'), c.want);
    assert.equal(refusal(() => folder.put(c.key, new Uint8Array([1])), 'denied'), c.want);
    assert.equal(refusal(() => folder.delete(c.key), 'denied'), c.want);
  }
  for (const c of casesOf('staging-mark')) {
    assert.equal(refusal(() => folder.put(c.key, new Uint8Array([1])), 'denied'), c.want);
  }
});

test('a lone surrogate, which only a JS string can hold, is quoted as JSON.stringify does, and reaches a message as U+FFFD', () => {
  // Keys from the component are UTF-8 and never hold one; a message is worded by the
  // component, which is given the key as UTF-8.
  assert.equal(messages.quote('a\ud800b\udfff'), '"a\\ud800b\\udfff"');
  assert.equal(messages.quote('\ud83d\ude00'), '"\u{1F600}"');
  assert.equal(messages.invalidKey('\ud800/'), '"\uFFFD/" is not a valid object key (empty, `.` or `..` components, or control characters)');
});

// Hostile, but what the Rust CLI prints unchanged: argv holds no NUL, and the CLI writes
// DEL, C1 and bidirectional controls out for the terminal (the vectors cover those).
const HOSTILE = 'x"q\\b\tn\r\u0001\u001f\u200b\u0301é\u00a0 \u{1F600}\u2028\u2029\ue000';

test('a hostile list prefix is refused in the Rust CLI\'s words, on mem:// and file://', (t) => {
  const dir = tempDir(t);
  const mem = new MemoryBucket();
  const folder = new FolderBucket(dir, { warn: () => {} });
  for (const parent of [`ns/${HOSTILE}`, `ns//${HOSTILE}`, `${HOSTILE}/./x`]) {
    const prefix = `${parent}/y`;
    const want = messages.invalidKey(parent);
    assert.equal(refusal(() => mem.list(prefix), 'denied'), want);
    assert.equal(refusal(() => folder.list(prefix), 'denied'), want);
    for (const url of ['mem://', fileUrl(dir)]) {
      assert.equal(cli(['ls', prefix], { url, status: 1 }).stderr, `render-store: ${want}\n`, url);
    }
  }
  // A bad release name is quoted the same way.
  assert.equal(cli(['history', HOSTILE], { url: 'mem://', status: 1 }).stderr, `render-store: ${messages.quote(HOSTILE)} is not NAMESPACE/NAME\n`);
});

test('a file:// listing reports the entries it leaves out in the Rust CLI\'s words', (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'ns/app'), { recursive: true });
  writeFileSync(join(dir, 'ns/app/ok'), 'x');
  writeFileSync(Buffer.concat([Buffer.from(join(dir, 'ns/app', HOSTILE)), Buffer.from([0xff, 0xc0, 0xaf])]), 'not UTF-8');
  // No control character: left out as a FIFO, not for its name.
  const fifo = 'fifo"q\\\u2028\u2029é\u{1F600}';
  assert.equal(spawnSync('mkfifo', [join(dir, 'ns/app', fifo)]).status, 0);
  const warnings = [];
  const folder = new FolderBucket(dir, { warn: (m) => warnings.push(m) });
  assert.deepEqual(folder.list('').map((o) => o.key), ['ns/app/ok']);
  const lines = warnings.map((w) => w.slice(w.indexOf(': left out of listings: ') + 2));
  assert.equal(lines.length, 2, warnings.join('\n'));
  const rust = cli(['ls'], { url: fileUrl(dir) });
  assert.equal(rust.stdout.toString(), 'ns/app/ok\n');
  for (const line of lines) assert.ok(rust.stderr.includes(`${line} `), `${line}\n${rust.stderr}`);
  assert.deepEqual(lines.sort(), [
    messages.leftOut(`ns/app/${HOSTILE}\uFFFD\uFFFD\uFFFD`, messages.LEFT_OUT.oddName),
    messages.leftOut(`ns/app/${fifo}`, messages.LEFT_OUT.notPlainFile),
  ].sort());
});

test('a file:// listing refuses what it will not walk in the shared words', (t) => {
  // The cases a folder can hold: a name with a control character is an odd name, left
  // out, and an unreadable folder needs a user who cannot read it (folder.test.mjs).
  const plantable = casesOf('unwalkable').filter((c) => c.why !== 'unreadable' && !/\p{Cc}/u.test(c.path));
  assert.ok(plantable.length >= 3);
  for (const c of plantable) {
    const dir = tempDir(t);
    const at = join(dir, ...c.path.split('/'));
    mkdirSync(join(at, '..'), { recursive: true });
    if (c.why === 'link') symlinkSync(tempDir(t), at);
    else writeFileSync(at, 'x');
    const folder = new FolderBucket(dir, { warn: () => {} });
    assert.equal(refusal(() => folder.list(c.prefix), 'denied'), c.want, JSON.stringify(c));
  }
});
