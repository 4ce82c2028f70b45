// Every golden vector (tests/vectors/render-ref.json, made by Go's encoding/json) through
// the Node host, compared with the vector and with the Rust CLI (`ref`, `canonical`), as
// tests/e2e/vectors.rs treats them: `objects` are UTF-8 texts, `objects_b64` raw bytes;
// a vector with `error` expects invalid-object at `error_object_index`, others the
// `canonical` bytes and the `renderRef`.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RenderStoreError, canonical, checkObjects, planGc, renderRef, sha256Hex } from '@convoy/render-store';
import { REPO, cliAsync, objectFiles, tempDir, vectors } from './helpers.mjs';

const all = vectors();

test('the vector file holds the cases the Rust tests read', () => {
  assert.ok(all.length >= 100, `only ${all.length} vectors`);
  for (const v of all) {
    assert.ok(typeof v.name === 'string' && typeof v.category === 'string', JSON.stringify(v).slice(0, 80));
    assert.ok(Array.isArray(v.objects) !== Array.isArray(v.objects_b64), `${v.name}: objects or objects_b64`);
    if ('error' in v) assert.ok(Number.isInteger(v.error_object_index), `${v.name}: error_object_index`);
    else assert.ok(typeof v.canonical === 'string' && /^sha256:[0-9a-f]{64}$/.test(v.renderRef), `${v.name}: canonical and renderRef`);
  }
});

const invalidObject = (index) => (e) => {
  assert.ok(e instanceof RenderStoreError, `not a RenderStoreError: ${e}`);
  assert.equal(e.kind, 'invalid-object');
  assert.equal(e.index, index);
  assert.ok(e.message.length > 0);
  return true;
};

test('every vector in the Node host', async (t) => {
  for (const v of all) {
    await t.test(v.name, () => {
      if ('error' in v) {
        assert.throws(() => canonical(v.bytes), invalidObject(v.error_object_index));
        assert.throws(() => renderRef(v.bytes), invalidObject(v.error_object_index));
        return;
      }
      const bytes = canonical(v.bytes);
      assert.ok(bytes instanceof Uint8Array);
      assert.deepEqual(Buffer.from(bytes), Buffer.from(v.canonical, 'utf8'));
      assert.equal(renderRef(v.bytes), v.renderRef);
      // The vector is consistent (an independent SHA-256), and so is sha256-hex.
      assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, v.renderRef);
      assert.equal(`sha256:${sha256Hex(bytes)}`, v.renderRef);
    });
  }
});

// Four CLI processes at a time: each is mostly process start-up.
test('every vector: the Node host and the Rust CLI agree byte for byte', { concurrency: 4 }, async (t) => {
  const dir = tempDir(t);
  await Promise.all(all.map((v, i) => t.test(v.name, async () => {
    const sub = join(dir, String(i));
    mkdirSync(sub);
    const files = objectFiles(sub, v.bytes);
    // Each file is one JSON object, whatever its first byte (`auto` would read an object
    // that does not start with `{` as YAML). No file at all: the CLI reads its empty
    // standard input, the empty render.
    const input = files.length > 0 ? ['--format', 'json', ...files] : ['--allow-empty'];
    const [ref, canon] = await Promise.all([cliAsync(['--json', 'ref', ...input]), cliAsync(['canonical', ...input])]);
    if ('error' in v) {
      let error;
      try {
        renderRef(v.bytes);
      } catch (e) {
        error = e;
      }
      invalidObject(v.error_object_index)(error);
      // The CLI fails the same way, with the same message, naming the file; under
      // --json as a JSON object.
      const message = `in ${files[error.index]}: object ${error.index} of the render is invalid: ${error.message}`;
      for (const r of [ref, canon]) {
        assert.notEqual(r.status, 0);
        assert.equal(r.stdout.length, 0);
      }
      assert.deepEqual(JSON.parse(ref.stderr), { error: { kind: 'invalid-object', message } });
      assert.equal(canon.stderr, `render-store: ${message}\n`);
      return;
    }
    assert.equal(ref.status, 0, ref.stderr);
    assert.equal(canon.status, 0, canon.stderr);
    assert.deepEqual(JSON.parse(ref.stdout.toString()), { renderRef: renderRef(v.bytes) });
    assert.deepEqual(canon.stdout, Buffer.from(canonical(v.bytes)));
  })));
});

// tests/vectors/gc-plan.json: every GC decision through planGc (the component's
// logic.plan-gc), at each case's `now`: the plan, list by list, or the error kind.
test('every GC plan vector in the Node host', async (t) => {
  const { cases } = JSON.parse(readFileSync(join(REPO, 'tests/vectors/gc-plan.json'), 'utf8'));
  assert.ok(cases.length >= 10, `only ${cases.length} cases`);
  for (const c of cases) {
    await t.test(c.name, () => {
      const plan = () => planGc(c.release, c.keep, c.history, c.renders, c.protected, { now: c.now });
      if ('error' in c.want) {
        assert.throws(plan, (e) => e instanceof RenderStoreError && e.kind === c.want.error);
      } else {
        assert.deepEqual(plan(), c.want);
      }
    });
  }
});

// tests/vectors/check-objects.json: the Kubernetes object rule through checkObjects (the
// component's logic.check-objects): taken, or the first object refused and why.
test('every check-objects vector in the Node host', async (t) => {
  const { cases } = JSON.parse(readFileSync(join(REPO, 'tests/vectors/check-objects.json'), 'utf8'));
  assert.ok(cases.length >= 10, `only ${cases.length} cases`);
  for (const c of cases) {
    await t.test(c.name, () => {
      const objects = c.objects.map((o) => Buffer.from(o, 'utf8'));
      if (c.want === 'ok') {
        checkObjects(objects);
        return;
      }
      assert.throws(() => checkObjects(objects), (e) => {
        invalidObject(c.want.index)(e);
        assert.ok(e.message.includes(c.want.message), e.message);
        return true;
      });
    });
  }
});
