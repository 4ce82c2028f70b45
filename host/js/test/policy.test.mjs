// The controller's defaults and rules come from the component (logic.defaults,
// effective-keep-history, history-count, protected-refs, pin-decision): the same answers
// the Rust host's render_store::controller gives, which the C ABI, Go and Python use.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as rs from '@convoy/render-store';

test('the defaults are the component\'s, and gc uses its grace period', () => {
  assert.deepEqual({ ...rs.DEFAULTS }, { keepHistory: 10, gcGraceSeconds: 600, gcFutureToleranceSeconds: 300 });
  assert.equal(rs.GC_GRACE_SECONDS, rs.DEFAULTS.gcGraceSeconds);
  // A blob written a minute ago that nothing refers to survives a GC with the default
  // grace period, and goes with none.
  const minuteAgo = rs.now();
  minuteAgo.seconds -= 60;
  const bucket = new rs.MemoryBucket({ clock: () => minuteAgo });
  const ref = rs.putRender(bucket, 'ns/app', ['{"kind":"ConfigMap"}']);
  const kept = rs.gc(bucket, 'ns/app', 1, []);
  assert.deepEqual(kept.recentRenders, [`ns/app/renders/${ref}`]);
  const gone = rs.gc(bucket, 'ns/app', 1, [], false, { graceSeconds: 0 });
  assert.deepEqual(gone.deleteRenders, [`ns/app/renders/${ref}`]);
});

test('keepHistory: unset is the default, 0 or less turns GC off, and no store counts none', () => {
  assert.equal(rs.effectiveKeepHistory(undefined), rs.DEFAULTS.keepHistory);
  assert.equal(rs.effectiveKeepHistory(3), 3);
  assert.equal(rs.effectiveKeepHistory(0), 0);
  assert.equal(rs.effectiveKeepHistory(-5n), 0);
  assert.equal(rs.historyCount(true, null), rs.DEFAULTS.keepHistory);
  assert.equal(rs.historyCount(false, 7), 0);
  assert.throws(() => rs.effectiveKeepHistory(1.5), TypeError);
});

test('protected renders are distinct, sorted and never empty', () => {
  assert.deepEqual(
    rs.protectedRefs('sha256:c', { lastSuccessful: 'sha256:b', lastAttempted: '', pin: 'sha256:a', lastHealthy: 'sha256:b' }),
    ['sha256:a', 'sha256:b', 'sha256:c'],
  );
  assert.deepEqual(rs.protectedRefs(null), []);
});

test('a pin to another render needs a store', () => {
  assert.deepEqual(rs.pinDecision(undefined, 'sha256:1', false), { apply: 'current' });
  assert.deepEqual(rs.pinDecision('sha256:1', 'sha256:1', false), { apply: 'current' });
  assert.deepEqual(rs.pinDecision('sha256:0', 'sha256:1', true), { apply: 'pinned', renderRef: 'sha256:0' });
  const { refused } = rs.pinDecision('sha256:0', 'sha256:1', false);
  assert.match(refused, /pinned to sha256:0, which is not the current render sha256:1, and there is no render store/);
});

test('an entry dated past the tolerance after now does not count, and is kept', () => {
  const bucket = new rs.MemoryBucket();
  const ref = rs.putRender(bucket, 'ns/app', ['{"kind":"ConfigMap"}']);
  const now = rs.now();
  const at = (seconds) => ({ seconds: now.seconds + seconds, nanoseconds: now.nanoseconds });
  rs.recordHistory(bucket, 'ns/app', { renderRef: ref, syncedAt: at(-60), summary: 'real' });
  const ahead = rs.putRender(bucket, 'ns/app', ['{"kind":"Secret"}']);
  const tolerance = rs.DEFAULTS.gcFutureToleranceSeconds;
  rs.recordHistory(bucket, 'ns/app', { renderRef: ahead, syncedAt: at(tolerance + 1), summary: 'ahead' });
  const plan = rs.gc(bucket, 'ns/app', 1, [], false, { now, graceSeconds: 0 });
  assert.equal(plan.deleteHistory.length, 0);
  assert.equal(plan.futureHistory.length, 1);
  assert.ok(plan.futureHistory[0].endsWith(ahead));
  assert.equal(plan.keepHistory.length, 2);
  assert.deepEqual(plan.deleteRenders, []);
});
