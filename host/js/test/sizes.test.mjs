// The largest render is 64 MiB of canonical bytes: one byte more is refused with the
// component's words, as in every host, and nothing is stored. 64 MiB renders through the
// package: one object of one long string, and 20,000 small
// objects, put, read back byte for byte, and diffed against a render with one object
// changed; and bytes that are not UTF-8 keep Go's handling.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';

const SIZE = 64 << 20;
const enc = new TextEncoder();

/** One canonical object whose canonical render (with its newline) is SIZE bytes. */
function longString() {
  const head = '{"data":"';
  const tail = '"}';
  return [head + 'x'.repeat(SIZE - 1 - head.length - tail.length) + tail];
}

/** 20,000 canonical ConfigMaps whose canonical render is SIZE bytes. */
function smallObjects() {
  const per = Math.floor(SIZE / 20000);
  const extra = SIZE % 20000;
  return Array.from({ length: 20000 }, (_, i) => {
    const head = '{"apiVersion":"v1","data":{"k":"';
    const tail = `"},"kind":"ConfigMap","metadata":{"name":"cm-${String(i).padStart(5, '0')}"}}`;
    const n = per - 1 + (i === 0 ? extra : 0);
    return head + 'v'.repeat(n - head.length - tail.length) + tail;
  });
}

for (const [name, make] of [['one long string', longString], ['20,000 objects', smallObjects]]) {
  test(`a 64 MiB render (${name}) is put, read back and diffed`, () => {
    const objects = make().map((o) => enc.encode(o));
    const canonical = enc.encode(make().map((o) => `${o}\n`).join(''));
    assert.equal(canonical.length, SIZE);
    const bucket = new rs.MemoryBucket();
    const store = new rs.RenderStore(bucket);
    const ref = store.putRender('ns/app', objects);
    assert.equal(ref, `sha256:${rs.sha256Hex(canonical)}`);
    assert.equal(rs.renderRef(objects), ref);
    assert.deepEqual(bucket.objects.get(`ns/app/renders/${ref}`), canonical);
    const back = store.getRender('ns/app', ref);
    assert.deepEqual(back, canonical);
    assert.deepEqual(rs.canonical(objects), canonical);
    // Against the same render with its last object changed (same size).
    const changed = objects.slice();
    const last = new TextDecoder().decode(changed.at(-1));
    changed[changed.length - 1] = enc.encode(name === 'one long string' ? `${last.slice(0, -3)}!"}` : last.replace('cm-19999', 'cm-x9999'));
    const other = store.putRender('ns/app', changed);
    const d = store.diffRenders('ns/app', ref, other, 'json');
    if (name === 'one long string') assert.deepEqual([d.changed.length, d.added.length, d.removed.length, d.unchanged], [1, 0, 0, 0]);
    else assert.deepEqual([d.changed.length, d.added.length, d.removed.length, d.unchanged], [0, 1, 1, objects.length - 1]);
    assert.deepEqual(rs.diffRenders(back, rs.canonical(changed), 'json'), d);
  });
}

test('one byte over the largest render is refused and nothing is stored', () => {
  const head = '{"data":"';
  const tail = '"}';
  const over = [enc.encode(head + 'x'.repeat(SIZE - head.length - tail.length) + tail)];
  const refused = (e) => {
    assert.ok(e instanceof rs.RenderStoreError, String(e));
    assert.equal(e.kind, 'invalid-input');
    assert.ok(e.message.includes('67108864 bytes (64 MiB)') && e.message.includes('largest'), e.message);
    return true;
  };
  assert.throws(() => rs.canonical(over), refused);
  assert.throws(() => rs.renderRef(over), refused);
  const bucket = new rs.MemoryBucket();
  const store = new rs.RenderStore(bucket);
  assert.throws(() => store.putRender('ns/app', over), refused);
  assert.equal(bucket.objects.size, 0);
});

test('bytes that are not UTF-8 keep Go\'s handling', () => {
  // One U+FFFD per invalid byte inside a string, as Go's decoder does.
  const objects = [new Uint8Array([...enc.encode('{"k":"'), 0xe2, 0x82, 0x41, 0xff, ...enc.encode('"}')])];
  assert.equal(new TextDecoder().decode(rs.canonical(objects)), '{"k":"\ufffd\ufffdA\ufffd"}\n');
  assert.equal(rs.renderRef(objects), rs.renderRef(['{"k":"\ufffd\ufffdA\ufffd"}']));
  assert.throws(() => rs.canonical([new Uint8Array([...enc.encode('{"k":1'), 0xff, 0x7d])]), (e) => e.kind === 'invalid-object' && e.index === 0);
  assert.equal(rs.sha256Hex('é'), rs.sha256Hex(new Uint8Array([0xc3, 0xa9])));
  // A stored blob that is not UTF-8 is corrupt.
  const bucket = new rs.MemoryBucket();
  const ref = rs.putRender(bucket, 'ns/app', ['{}']);
  bucket.objects.set(`ns/app/renders/${ref}`, new Uint8Array([0x7b, 0xff, 0x7d, 0x0a]));
  assert.throws(() => rs.getRender(bucket, 'ns/app', ref), (e) => e.kind === 'corrupt');
});
