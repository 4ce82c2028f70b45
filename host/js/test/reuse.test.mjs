// Instances are reused only when made as good as new (core.mjs, "Instances"): nothing a
// call saw (a Secret's value) is left in an idle instance's memory, and a call that
// failed in the guest or used much memory leaves no instance behind.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';

const { MemoryBucket, RenderStore, RenderStoreError, idleInstanceMemories } = rs;
const release = { namespace: 'default', name: 'vault' };
const ENCODER = new TextEncoder();

/** Whether `needle` occurs in `haystack` (both bytes). */
function contains(haystack, needle) {
  const first = needle[0];
  for (let i = haystack.indexOf(first); i !== -1 && i + needle.length <= haystack.length; i = haystack.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return true;
  }
  return false;
}

const secretValue = 'c2VjcmV0LXBhc3N3b3JkLTk0MzE3LXVuaXF1ZQ';
const secret = ENCODER.encode(JSON.stringify({
  apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'default' }, data: { password: secretValue },
}));

test('no idle instance holds a Secret a call saw', () => {
  const store = new RenderStore(new MemoryBucket());
  const ref = store.putRender(release, [secret]);
  const got = store.getRender(release, ref);
  assert.ok(contains(got, ENCODER.encode(secretValue)), 'the render read back holds the Secret');
  rs.canonical([secret]);
  rs.yamlRenderRef(`kind: Secret\napiVersion: v1\nmetadata: {name: db}\ndata: {password: ${secretValue}}\n`);
  store.diffRenders(release, ref, ref);
  const memories = idleInstanceMemories();
  assert.ok(memories.length >= 1, 'the calls left an instance to reuse');
  for (const memory of memories) {
    assert.equal(contains(memory, ENCODER.encode(secretValue)), false, 'an idle instance still holds the Secret');
  }
});

test('every idle instance is back to one image after calls that returned values and errors', () => {
  rs.renderRef([secret]);
  assert.throws(() => rs.renderRef([ENCODER.encode('{"a":')]), (e) => e instanceof RenderStoreError && e.kind === 'invalid-object');
  assert.throws(() => new RenderStore(new MemoryBucket()).getRender(release, 'sha256:' + '0'.repeat(64)), (e) => e instanceof RenderStoreError && e.kind === 'not-found');
  const memories = idleInstanceMemories();
  assert.ok(memories.length >= 1);
  // Instances made at different times start from the same image (memories that grew are
  // zero above it), so they agree.
  const image = Math.min(...memories.map((m) => m.length));
  for (const memory of memories) {
    assert.deepEqual(memory.subarray(0, image), memories[0].subarray(0, image));
    assert.ok(memory.subarray(image).every((b) => b === 0), 'an idle instance holds bytes above its image');
  }
  // A fresh instance's memory ends with zeros above the guest's data: nothing written
  // by a call sits in the last page.
  const last = memories[0].subarray(memories[0].length - 65536);
  assert.ok(last.every((b) => b === 0), 'the top page of an idle instance is not zero');
});

test('an instance whose memory grew large is not kept', () => {
  const before = idleInstanceMemories().length;
  const big = ENCODER.encode(JSON.stringify({ kind: 'ConfigMap', data: { blob: 'x'.repeat(24 << 20) } }));
  rs.renderRef([big]);
  const after = idleInstanceMemories();
  assert.ok(after.length <= before, `${after.length} idle instances after a 24 MiB call, ${before} before`);
  for (const memory of after) assert.ok(memory.length <= 16 << 20, `an idle instance of ${memory.length} bytes`);
});

test('a bucket that calls the package from inside a call gets its own instance', () => {
  const inner = new MemoryBucket();
  const bucket = {
    get: (k) => inner.get(k),
    put: (k, v) => {
      // Re-entry: the outer call's instance is busy, so this one is another.
      assert.match(rs.renderRef([secret]), /^sha256:[0-9a-f]{64}$/);
      return inner.put(k, v);
    },
    exists: (k) => inner.exists(k),
    list: (p) => inner.list(p),
    delete: (k) => inner.delete(k),
  };
  const ref = new RenderStore(bucket).putRender(release, [secret]);
  assert.equal(ref, rs.renderRef([secret]));
});

test('a reused instance keeps its largest call\'s size instead of growing by each call', () => {
  const objects = Array.from({ length: 50 }, (_, i) => ENCODER.encode(JSON.stringify({ kind: 'ConfigMap', metadata: { name: `c${i}` }, data: { v: 'y'.repeat(20_000) } })));
  const size = () => Math.max(0, ...idleInstanceMemories().map((m) => m.length));
  rs.renderRef(objects);
  new RenderStore(new MemoryBucket()).putRender(release, objects);
  const first = size();
  for (let i = 0; i < 8; i++) {
    rs.renderRef(objects);
    new RenderStore(new MemoryBucket()).putRender(release, objects);
  }
  assert.ok(first > 0);
  assert.equal(size(), first, 'the idle instance grew with calls of the same size');
});
