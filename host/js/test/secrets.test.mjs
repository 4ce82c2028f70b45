// Secret values stay out of the views made for people: diffRenders,
// showObjects, diffStored and RenderStore#diffRenders ask the component to mask them
// unless the caller passes {showSecrets: true}; getRender is the blob as stored. The
// masking itself is the component's; what is checked here is what the package asks for.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';
import { SECRET_VALUES, secretRenders } from './helpers.mjs';

const release = 'prod/db';
const VALUES = Object.values(SECRET_VALUES);

/** The text of a diff's changed objects, or of shown objects, as one string. */
const diffText = (diff) => diff.changed.map((c) => c.lines.join('\n')).join('\n');
const objectsText = (shown) => shown.map((o) => o.text).join('\n');

function assertMasked(what, text) {
  for (const value of VALUES) assert.ok(!text.includes(value), `${what} shows ${value}:\n${text}`);
}

/** A store holding both renders: {store, bucket, oldRef, newRef, renders}. */
function stored() {
  const renders = secretRenders();
  const bucket = new rs.MemoryBucket();
  const store = new rs.RenderStore(bucket);
  return { store, bucket, renders, oldRef: store.putRender(release, renders.old), newRef: store.putRender(release, renders.new) };
}

test('diffs mask Secret values by default and say which changed', () => {
  const { store, bucket, renders, oldRef, newRef } = stored();
  const old = rs.canonical(renders.old);
  const now = rs.canonical(renders.new);
  const diffs = {
    diffRenders: rs.diffRenders(old, now),
    'diffRenders yaml': rs.diffRenders(old, now, 'yaml'),
    'diffRenders, empty options': rs.diffRenders(old, now, 'yaml', {}),
    'diffRenders, showSecrets false': rs.diffRenders(old, now, undefined, { showSecrets: false }),
    diffStored: rs.diffStored(bucket, release, oldRef, newRef),
    'RenderStore#diffRenders': store.diffRenders(release, oldRef, newRef),
  };
  for (const [what, diff] of Object.entries(diffs)) {
    assert.deepEqual(diff.changed.map((c) => `${c.id.kind} ${c.id.name}`), ['Secret db', 'Secret applied', 'ConfigMap settings'], what);
    assert.equal(diff.unchanged, 1, what);
    const [db, applied, settings] = diff.changed.map((c) => c.lines);
    assertMasked(what, diffText(diff));
    // kubectl diff's markers: a changed data and stringData value, an unchanged one.
    for (const line of ["-  password: '*** (before)'", "+  password: '*** (after)'", "   user: '***'", "-  token: '*** (before)'", "+  token: '*** (after)'"]) {
      assert.ok(db.includes(line), `${what}: no ${JSON.stringify(line)} in\n${db.join('\n')}`);
    }
    // A change inside the annotation alone is still a change, and shows no value.
    assert.ok(applied.some((l) => l.startsWith('-') && l.includes('"password":"*** (before)"')), applied.join('\n'));
    assert.ok(applied.some((l) => l.startsWith('+') && l.includes('"password":"*** (after)"')), applied.join('\n'));
    // Only Secrets are masked.
    assert.ok(settings.includes('-  mode: blue') && settings.includes('+  mode: green'), settings.join('\n'));
  }
  assert.deepEqual(diffs.diffStored, diffs.diffRenders);
  assert.deepEqual(diffs['RenderStore#diffRenders'], diffs.diffRenders);
  // The positional form keeps working, masked too.
  const asJson = rs.diffRenders(old, now, 'json');
  assertMasked('diffRenders json', diffText(asJson));
  assert.ok(asJson.changed[0].lines.includes('-    "password": "*** (before)",'), asJson.changed[0].lines.join('\n'));
  assert.deepEqual(store.diffRenders(release, oldRef, newRef, 'json'), asJson);
  assert.deepEqual(rs.diffStored(bucket, release, oldRef, newRef, 'json', {}), asJson);
});

test('{showSecrets: true} shows the values in every diff', () => {
  const { store, bucket, renders, oldRef, newRef } = stored();
  const old = rs.canonical(renders.old);
  const now = rs.canonical(renders.new);
  const shown = { showSecrets: true };
  for (const form of ['yaml', 'json']) {
    const diffs = {
      diffRenders: rs.diffRenders(old, now, form, shown),
      diffStored: rs.diffStored(bucket, release, oldRef, newRef, form, shown),
      'RenderStore#diffRenders': store.diffRenders(release, oldRef, newRef, form, shown),
    };
    for (const [what, diff] of Object.entries(diffs)) {
      const text = diffText(diff);
      const { passwordBefore, passwordAfter, user, tokenBefore, tokenAfter, appliedBefore, appliedAfter } = SECRET_VALUES;
      for (const value of [passwordBefore, passwordAfter, user, tokenBefore, tokenAfter, appliedBefore, appliedAfter]) {
        assert.ok(text.includes(value), `${what} (${form}) hides ${value}:\n${text}`);
      }
      assert.ok(!text.includes('***'), `${what} (${form}) masks:\n${text}`);
      assert.equal(diff.unchanged, 1);
    }
    assert.deepEqual(diffs.diffStored, diffs.diffRenders);
    assert.deepEqual(diffs['RenderStore#diffRenders'], diffs.diffRenders);
  }
  // With no form given (undefined takes the default, YAML).
  assert.deepEqual(rs.diffRenders(old, now, undefined, shown), rs.diffRenders(old, now, 'yaml', shown));
  assert.ok(diffText(store.diffRenders(release, oldRef, newRef, undefined, shown)).includes("password: czNjcjN0IQ=="));
});

test('showObjects masks Secret values unless asked; the stored render is the blob as stored', () => {
  const { store, bucket, renders, newRef } = stored();
  const canonical = rs.canonical(renders.new);
  for (const form of ['yaml', 'json']) {
    const masked = rs.showObjects(canonical, form);
    assert.deepEqual(masked.map((o) => o.id.name), ['db', 'applied', 'tls', 'settings']);
    assertMasked(`showObjects ${form}`, objectsText(masked));
    // One render has no before and after: every value is `***`.
    assert.ok(!objectsText(masked).includes('(before)') && !objectsText(masked).includes('(after)'));
    assert.deepEqual(rs.showObjects(canonical, form, { showSecrets: false }), masked);
    assert.ok(objectsText(masked).includes(form === 'yaml' ? 'mode: green' : '"mode": "green"'));
  }
  const yaml = rs.showObjects(canonical);
  assert.ok(yaml[0].text.includes("password: '***'") && yaml[0].text.includes("token: '***'"), yaml[0].text);
  assert.ok(yaml[1].text.includes('"password":"***"'), yaml[1].text);
  assert.ok(yaml[2].text.includes("tls.key: '***'"), yaml[2].text);

  const shown = objectsText(rs.showObjects(canonical, 'yaml', { showSecrets: true }));
  const { passwordAfter, user, tokenAfter, appliedAfter, appliedData, tls } = SECRET_VALUES;
  for (const value of [passwordAfter, user, tokenAfter, appliedAfter, appliedData, tls]) {
    assert.ok(shown.includes(value), `showObjects with showSecrets hides ${value}:\n${shown}`);
  }
  assert.ok(!shown.includes('***'), shown);

  // getRender and the bucket keep the bytes as they were put, values and all, after
  // masked views of them.
  store.diffRenders(release, newRef, newRef);
  const blob = store.getRender(release, newRef);
  assert.deepEqual(blob, canonical);
  assert.deepEqual(bucket.objects.get(rs.renderKey(release, newRef)), canonical);
  for (const value of [passwordAfter, user, tokenAfter, appliedAfter, tls]) assert.ok(Buffer.from(blob).includes(value), value);
});

test('only showSecrets: true shows values; anything else that is not an options object is refused', () => {
  const { store, bucket, renders, oldRef, newRef } = stored();
  const old = rs.canonical(renders.old);
  const now = rs.canonical(renders.new);
  // null reads as no options (masked); a value that would be truthy as a flag is refused.
  assertMasked('null options', diffText(rs.diffRenders(old, now, 'yaml', null)));
  for (const bad of [{ showSecrets: 'true' }, { showSecrets: 'false' }, { showSecrets: 1 }]) {
    for (const [what, call] of [
      ['diffRenders', () => rs.diffRenders(old, now, 'yaml', bad)],
      ['showObjects', () => rs.showObjects(now, 'yaml', bad)],
      ['diffStored', () => rs.diffStored(bucket, release, oldRef, newRef, 'yaml', bad)],
      ['RenderStore#diffRenders', () => store.diffRenders(release, oldRef, newRef, 'yaml', bad)],
    ]) {
      assert.throws(call, (e) => e instanceof TypeError && /showSecrets: expected a boolean/.test(e.message), `${what} ${JSON.stringify(bad)}`);
    }
  }
  for (const bad of [true, 'shown']) {
    assert.throws(() => rs.diffRenders(old, now, 'yaml', bad), (e) => e instanceof TypeError && /expected an options object/.test(e.message), String(bad));
    assert.throws(() => rs.showObjects(now, 'yaml', bad), TypeError, String(bad));
  }
  // A misplaced options object is a bad form, as any other non-form.
  assert.throws(() => rs.diffRenders(old, now, { showSecrets: true }), (e) => e.kind === 'invalid-input');
  assert.throws(() => rs.showObjects(now, 'toml', { showSecrets: true }), (e) => e.kind === 'invalid-input');
});

test('Secrets in lists are masked in every view: a SecretList inside a List, items naming no kind', () => {
  const listed = (password) => JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [{ apiVersion: 'v1', kind: 'SecretList', items: [{ metadata: { name: 'listed', namespace: 'prod' }, data: { password } }] }],
  });
  const [before, after] = ['bGlzdGVkLW9sZA==', 'bGlzdGVkLW5ldw=='];
  const old = rs.canonical([listed(before)]);
  const now = rs.canonical([listed(after)]);
  for (const form of ['yaml', 'json']) {
    const diff = diffText(rs.diffRenders(old, now, form));
    assert.ok(!diff.includes(before) && !diff.includes(after), diff);
    assert.ok(diff.includes('*** (before)') && diff.includes('*** (after)'), diff);
    const shown = objectsText(rs.showObjects(now, form));
    assert.ok(!shown.includes(after) && shown.includes('***'), shown);
  }
  assert.ok(objectsText(rs.showObjects(now, 'yaml', { showSecrets: true })).includes(after));
});
