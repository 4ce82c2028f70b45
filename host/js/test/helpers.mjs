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

/**
 * Runs the Rust CLI. `url`: the store (--render-store-url). Fails the test when the exit
 * status is not `status` (default 0). Returns {status, stdout (Buffer), stderr (string)}.
 */
export function cli(args, { url, status = 0 } = {}) {
  const full = url === undefined ? args : ['--render-store-url', url, ...args];
  const env = { ...process.env };
  delete env.RENDER_STORE_URL;
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
  const env = { ...process.env };
  delete env.RENDER_STORE_URL;
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
