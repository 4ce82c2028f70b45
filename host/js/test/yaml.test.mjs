// YAML streams through the Node host: every Go vector of tests/vectors/yaml-render-ref.json
// (read as tests/e2e/yaml.rs reads it), the real streams of tests/real-renders and the
// real-world corpus of tests/yaml-corpus give what Go gives, and a stream that is not a
// render is an 'invalid-yaml' RenderStoreError naming its document, line, column and
// stage.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RenderStoreError, canonical, renderRef, yamlCanonical, yamlObjects, yamlRenderRef } from '@convoy/render-store';
import { REPO } from './helpers.mjs';

const VECTORS = JSON.parse(readFileSync(join(REPO, 'tests/vectors/yaml-render-ref.json'), 'utf8'));
const streamOf = (v) => ('yaml' in v ? Buffer.from(v.yaml, 'utf8') : Buffer.from(v.yaml_b64, 'base64'));
const texts = (objects) => objects.map((o) => Buffer.from(o).toString('utf8'));

/** What the host makes of a stream: {objects, canonical, renderRef} or {error}. */
function outcome(stream) {
  try {
    const objects = texts(yamlObjects(stream));
    return { objects, canonical: Buffer.from(yamlCanonical(stream)).toString('utf8'), renderRef: yamlRenderRef(stream) };
  } catch (e) {
    if (!(e instanceof RenderStoreError)) throw e;
    return { error: e };
  }
}

test('the YAML vector file holds the 291 cases the Rust test reads', () => {
  assert.equal(VECTORS.length, 291);
  assert.ok(VECTORS.some((v) => 'outcomes' in v), 'no nondeterministic vector');
  assert.ok(VECTORS.some((v) => 'yaml_b64' in v), 'no raw-bytes vector');
  assert.ok(VECTORS.some((v) => 'error_document_index' in v), 'no failing vector');
});

test('every YAML vector gives what Go gives', async (t) => {
  for (const v of VECTORS) {
    await t.test(v.name, () => {
      const got = outcome(streamOf(v));
      // A nondeterministic case (Go's result depends on map order) lists every outcome
      // Go can give; the component always gives one of them.
      const outcomes = v.outcomes ?? [v];
      const failing = outcomes.filter((o) => 'error_document_index' in o);
      if (got.error) {
        const e = got.error;
        assert.equal(e.kind, 'invalid-yaml', e.message);
        assert.ok(failing.some((o) => o.error_document_index === e.document), `failed at document ${e.document}: ${e.message}`);
        if ('error_stage' in v) assert.equal(e.stage, v.error_stage);
        assert.ok(Number.isInteger(e.line) && e.line >= 1 && Number.isInteger(e.column) && e.column >= 1, `${e.line}:${e.column}`);
        assert.ok(e.message.length > 0);
        // The three functions fail alike.
        for (const f of [yamlObjects, yamlCanonical]) {
          assert.throws(() => f(streamOf(v)), (x) => x.kind === 'invalid-yaml' && x.document === e.document && x.line === e.line);
        }
        return;
      }
      const match = outcomes.find((o) => o.renderRef === got.renderRef);
      assert.ok(match, `renderRef ${got.renderRef} is none of Go's`);
      assert.deepEqual(got.objects, match.objects);
      assert.equal(got.canonical, match.canonical);
      // The one-call forms agree with the JSON path over the objects.
      assert.equal(renderRef(got.objects), got.renderRef);
      assert.equal(Buffer.from(canonical(got.objects)).toString('utf8'), got.canonical);
    });
  }
});

test('the real streams give the renderRefs Go computed', () => {
  const { renders } = JSON.parse(readFileSync(join(REPO, 'tests/real-renders/expected.json'), 'utf8'));
  assert.equal(renders.length, 5);
  for (const r of renders) {
    const stream = readFileSync(join(REPO, 'tests/real-renders', r.yaml));
    assert.equal(yamlRenderRef(stream), r.renderRef, r.yaml);
    const objects = yamlObjects(stream);
    assert.equal(objects.length, r.objects, r.yaml);
    assert.equal(renderRef(objects), r.renderRef, r.yaml);
    assert.equal(yamlCanonical(stream).length, r.canonical_bytes, r.yaml);
  }
});

test('a bad stream names its document, line, column and stage', () => {
  // Two `---` in a row make no empty document: `kind: B` is document 1.
  assert.throws(() => yamlObjects('kind: A\n---\n---\nkind: B\n  bad: indent\n'), (e) => {
    assert.ok(e instanceof RenderStoreError);
    assert.deepEqual([e.kind, e.stage, e.document, e.line], ['invalid-yaml', 'yaml', 1, 5]);
    return true;
  });
  // A skipped `null` document still counts: the sequence is document 2.
  assert.throws(() => yamlRenderRef('kind: A\n---\nnull\n---\n- a\n- b\n'), (e) => e.kind === 'invalid-yaml' && e.stage === 'object' && e.document === 2);
  // An empty stream is the empty render.
  assert.deepEqual(yamlObjects(''), []);
  assert.equal(yamlRenderRef(''), renderRef([]));
  assert.throws(() => yamlObjects(42), TypeError);
});

test('the real-world corpus gives the renderRefs Go computed, or fails where Go fails', () => {
  // tests/yaml-corpus/: streams from public repositories, each with Go's outcome.
  const { files } = JSON.parse(readFileSync(join(REPO, 'tests/yaml-corpus/corpus.json'), 'utf8'));
  assert.ok(files.length >= 2000, `${files.length} streams`);
  const failures = [];
  for (const f of files) {
    const stream = readFileSync(join(REPO, 'tests/yaml-corpus', f.file));
    let got;
    try {
      got = yamlRenderRef(stream);
    } catch (e) {
      if (!(e instanceof RenderStoreError) || e.kind !== 'invalid-yaml') throw e;
      got = `document ${e.document} ${e.stage}`;
    }
    const want = f.renderRef ?? `document ${f.error_document_index} ${f.error_stage}`;
    if (got !== want) failures.push(`${f.file}: ${got}, Go ${want}`);
  }
  assert.deepEqual(failures, []);
});
