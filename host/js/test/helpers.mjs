// Shared by the tests: the Rust CLI, temporary folders, the golden vectors.

import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's root (RENDER_STORE_REPO when run.sh runs these tests against the
 *  installed package from a copy of this folder). */
export const REPO = resolve(process.env.RENDER_STORE_REPO || join(here, '../../..'));
/** The Rust CLI: RENDER_STORE_BIN, or target/debug/render-store of this checkout. */
export const BIN = resolve(process.env.RENDER_STORE_BIN || join(REPO, 'target/debug/render-store'));

/** The CLI's environment: this one without the variables that would stand in for a
 *  test's own flags (a store URL, or RENDER_STORE_SHOW_SECRETS unmasking every diff). */
function cliEnv() {
  const env = { ...process.env };
  delete env.RENDER_STORE_URL;
  delete env.RENDER_STORE_SHOW_SECRETS;
  // The objects here are the hosts' test objects, not all named as Kubernetes objects;
  // the CLI's input rule is the Rust suite's (tests/e2e/operator.rs).
  env.RENDER_STORE_VALIDATE = 'false';
  return env;
}

/**
 * Runs the Rust CLI. `url`: the store (--render-store-url). Fails the test when the exit
 * status is not `status` (default 0). Returns {status, stdout (Buffer), stderr (string)}.
 */
export function cli(args, { url, status = 0 } = {}) {
  const full = url === undefined ? args : ['--render-store-url', url, ...args];
  const env = cliEnv();
  // Standard input is closed: with no FILE, `ref`, `canonical` and `put` read it, and
  // the test runner's would never end.
  const r = spawnSync(BIN, full, { env, maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) throw r.error;
  const out = { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
  if (status !== null && r.status !== status) {
    throw new Error(`render-store ${full.join(' ')}: exit status ${r.status}, expected ${status}\n${out.stderr}`);
  }
  return out;
}

/** `cli` without blocking, for tests that run the CLI many times at once; any exit status. */
export function cliAsync(args) {
  const env = cliEnv();
  return new Promise((resolvePromise, reject) => {
    const child = execFile(BIN, args, { env, encoding: 'buffer', maxBuffer: 256 << 20 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolvePromise({ status: error ? error.code : 0, stdout, stderr: stderr.toString() });
    });
    // An empty standard input (see `cli`).
    child.stdin.end();
  });
}

/** The CLI's --json output, parsed. */
export const cliJson = (args, opts) => JSON.parse(cli(['--json', ...args], opts).stdout.toString());

/** A temporary folder removed after the test. */
export function tempDir(t, name = 'render-store-node-') {
  const dir = mkdtempSync(join(tmpdir(), name));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The file:// URL of a folder, as the Rust CLI takes it. */
export const fileUrl = (dir) => pathToFileURL(dir).href;

/** Writes each object to its own file (what `render-store put/ref/canonical` read). */
export function objectFiles(dir, objects, stem = 'object') {
  return objects.map((o, i) => {
    const path = join(dir, `${stem}-${i}.json`);
    writeFileSync(path, o);
    return path;
  });
}

/**
 * Stores each render of `renders` for `release` (NAMESPACE/NAME) with the Rust CLI's `put`
 * and records it with `record`, at `entry(i)` = [RFC 3339 time, summary]; object files go
 * to `work`. Returns the renderRefs the CLI printed.
 */
export function putAndRecordWithCli(url, work, release, renders, entry) {
  return renders.map((objects, i) => {
    const ref = cli(['put', release, ...objectFiles(work, objects, `r${i}`)], { url }).stdout.toString().trim();
    const [syncedAt, summary] = entry(i);
    cli(['record', release, ref, '--synced-at', syncedAt, '--summary', summary], { url });
    return ref;
  });
}

/** tests/vectors/render-ref.json, with each vector's objects as bytes. */
export function vectors() {
  const all = JSON.parse(readFileSync(join(REPO, 'tests/vectors/render-ref.json'), 'utf8'));
  return all.map((v) => ({
    ...v,
    bytes: v.objects
      ? v.objects.map((s) => Buffer.from(s, 'utf8'))
      : v.objects_b64.map((b) => Buffer.from(b, 'base64')),
  }));
}

/** A few Kubernetes objects, as JSON text. */
export function manifest(name, data = {}) {
  return JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name, namespace: 'default' }, data });
}

/**
 * Two renders of release prod/db with Secrets in them, as JSON text ({old, new}), and
 * every Secret value they hold (SECRET_VALUES): `db` changes a `data` value
 * (password), keeps one (user) and changes a `stringData` one (token); `applied`
 * changes only inside its last-applied-configuration annotation; `tls` is the same in
 * both; the ConfigMap `settings` changes too, and is never masked.
 */
export const SECRET_VALUES = Object.freeze({
  passwordBefore: 'aHVudGVyMg==',
  passwordAfter: 'czNjcjN0IQ==',
  user: 'YWRtaW4=',
  tokenBefore: 'old-token',
  tokenAfter: 's3cr3t!',
  appliedBefore: 'b2xkLXRva2Vu',
  appliedAfter: 'bmV3LXRva2Vu',
  appliedData: 'c2FtZQ==',
  tls: 'dW50b3VjaGVk',
});

export function secretRenders() {
  const v = SECRET_VALUES;
  const meta = (name) => ({ name, namespace: 'prod' });
  const db = (password, token) => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta('db'), data: { password, user: v.user }, stringData: { token } });
  // kubectl's annotation holds the whole Secret as applied, as compact JSON text.
  const applied = (password) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...meta('applied'), annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ apiVersion: 'v1', data: { password }, kind: 'Secret', metadata: meta('applied') }) } },
    data: { password: v.appliedData },
  });
  const tls = { apiVersion: 'v1', kind: 'Secret', metadata: meta('tls'), data: { 'tls.key': v.tls } };
  const settings = (mode) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('settings'), data: { mode } });
  const render = (objects) => objects.map((o) => JSON.stringify(o));
  return {
    old: render([db(v.passwordBefore, v.tokenBefore), applied(v.appliedBefore), tls, settings('blue')]),
    new: render([db(v.passwordAfter, v.tokenAfter), applied(v.appliedAfter), tls, settings('green')]),
  };
}

/** A diff as `render-store --json diff` prints it (render_store::json_view). */
export function diffAsCliPrints(diff) {
  return {
    added: diff.added.map(({ id, text }) => ({ ...id, text })),
    removed: diff.removed.map(({ id, text }) => ({ ...id, text })),
    changed: diff.changed.map(({ id, lines }) => ({ ...id, diff: lines })),
    unchanged: diff.unchanged,
  };
}
