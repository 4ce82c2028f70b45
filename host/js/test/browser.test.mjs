// The package's core in a real browser: headless Chromium (driven over WebDriver by
// chromedriver) loads it from the installed package through an import map, with nothing
// but its own files, and computes the renderRef of each real render from its YAML
// stream and of a JSON object; each must equal Go's (tests/real-renders/expected.json).
//
// Without chromium and chromedriver on PATH the test is skipped, unless
// RENDER_STORE_REQUIRE_BROWSER=1 (as .ci/run sets it): then it fails.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { renderRef } from '@convoy/render-store';
import { REPO } from './helpers.mjs';

const required = process.env.RENDER_STORE_REQUIRE_BROWSER === '1';
const which = (name) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
const chromium = which('chromium') || which('chromium-browser') || which('google-chrome');
const chromedriver = which('chromedriver');
const missing = !chromium || !chromedriver;

const PACKAGE = dirname(fileURLToPath(import.meta.resolve('@convoy/render-store/package.json')));
const TYPES = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.html': 'text/html', '.yaml': 'text/plain', '.json': 'application/json' };
const OBJECT = '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"é"},"data":{"n":1e2}}';

const PAGE = `<!doctype html><meta charset="utf-8"><title>render-store in a browser</title>
<script type="importmap">{"imports": {"@convoy/render-store": "/pkg/core.mjs"}}</script>
<script type="module">
  const out = {};
  try {
    const rs = await import('@convoy/render-store');
    const expected = await (await fetch('/data/expected.json')).json();
    for (const r of expected.renders) {
      out[r.name] = rs.yamlRenderRef(await (await fetch('/data/' + r.yaml)).text());
    }
    out.object = rs.renderRef([${JSON.stringify(OBJECT)}]);
  } catch (e) {
    out.error = String(e && e.stack || e);
  }
  document.body.dataset.result = JSON.stringify(out);
</script>`;

/** Serves the page, the installed package under /pkg/ and tests/real-renders under /data/, on 127.0.0.1. */
function serve() {
  const roots = { '/pkg/': PACKAGE, '/data/': join(REPO, 'tests', 'real-renders') };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const prefix = Object.keys(roots).find((p) => path.startsWith(p));
    const file = prefix && normalize(join(roots[prefix], path.slice(prefix.length)));
    if (!file || !file.startsWith(roots[prefix] + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function webdriver(base, method, path, body) {
  let res;
  // chromedriver can drop a connection while the browser starts on a loaded machine
  // (`fetch failed`); every request here may be repeated, so a few are retried.
  for (let attempt = 1; ; attempt++) {
    try {
      res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
      break;
    } catch (e) {
      if (attempt >= 5 || path === '/session') throw e;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
  const json = await res.json();
  if (!res.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(json.value)}`);
  return json.value;
}

test('the core computes the controller\'s renderRefs in headless Chromium', { skip: missing && !required && 'chromium or chromedriver is not installed' }, async (t) => {
  assert.ok(!missing, `RENDER_STORE_REQUIRE_BROWSER=1 but ${!chromium ? 'chromium' : 'chromedriver'} is not on PATH (apt-get install chromium chromium-driver)`);
  const server = await serve();
  const port = 20000 + Math.floor(Math.random() * 20000);
  const driver = spawn(chromedriver, [`--port=${port}`], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  let session;
  // In this order: chromedriver closes the browser when its session is deleted, and a
  // browser whose driver was killed first would be left running.
  t.after(async () => {
    if (session) await webdriver(base, 'DELETE', `/session/${session.sessionId}`).catch(() => {});
    driver.kill();
    server.close();
  });
  for (let i = 0; !session; i++) {
    try {
      session = await webdriver(base, 'POST', '/session', {
        capabilities: { alwaysMatch: { 'goog:chromeOptions': { binary: chromium, args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] } } },
      });
    } catch (e) {
      if (i >= 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const id = session.sessionId;
  await webdriver(base, 'POST', `/session/${id}/url`, { url: `http://127.0.0.1:${server.address().port}/` });
  let result = null;
  for (let i = 0; i < 300 && result === null; i++) {
    result = await webdriver(base, 'POST', `/session/${id}/execute/sync`, { script: 'return document.body && document.body.dataset.result || null', args: [] });
    if (result === null) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(result, 'the page never finished');
  const out = JSON.parse(result);
  assert.equal(out.error, undefined, out.error);
  const expected = JSON.parse(readFileSync(join(REPO, 'tests', 'real-renders', 'expected.json'), 'utf8'));
  assert.ok(expected.renders.length >= 3);
  for (const r of expected.renders) assert.equal(out[r.name], r.renderRef, r.name);
  // The same bytes in Node give the same renderRef as in the browser.
  assert.equal(out.object, renderRef([OBJECT]));
});
