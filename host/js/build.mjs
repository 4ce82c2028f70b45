// Build step of the Node host: writes the component with the Rust CLI
// (`render-store component --out`), then has the Rust build tool
// `render-store-js-describe` (host/js/describe: wit-parser and wasmparser) write what
// the package runs: the component's main core module, and the WIT types of its imports
// and exports for abi.mjs, which does the canonical ABI around the module. The tool
// refuses a component that imports anything but the bucket interface; this script
// checks every import and export of the module against the core signature abi.mjs
// gives its WIT type, so types and module cannot disagree silently. Nothing here parses
// WIT or walks WebAssembly.
//
// Usage: node build.mjs
//   RENDER_STORE_BIN: the CLI (default ../../target/debug/render-store)
//   RENDER_STORE_JS_DESCRIBE: the build tool (default: render-store-js-describe beside the CLI)
//
// The files go to ./generated/ (gitignored). They are rebuilt only when the component's
// bytes or the build tool changed (generated/.stamp).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Component } from './abi.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const generated = join(here, 'generated');
const bin = resolve(here, process.env.RENDER_STORE_BIN || '../../target/debug/render-store');
const describe = resolve(here, process.env.RENDER_STORE_JS_DESCRIBE || join(dirname(bin), 'render-store-js-describe'));

function fail(message) {
  console.error(`build.mjs: ${message}`);
  process.exit(1);
}

if (!existsSync(bin)) {
  fail(`the render-store CLI is not at ${bin}: run \`cargo build -p render-store-cli --bin render-store\` or set RENDER_STORE_BIN`);
}
if (!existsSync(describe)) {
  fail(`the build tool is not at ${describe}: run \`cargo build -p render-store-js-describe\` or set RENDER_STORE_JS_DESCRIBE`);
}

mkdirSync(generated, { recursive: true });
const wasm = join(generated, 'render-store.wasm');
execFileSync(bin, ['component', '--out', wasm], { stdio: ['ignore', 'ignore', 'inherit'] });
const digest = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const sha = digest(wasm);
const stamp = `component sha256 ${sha}\nbuild tool sha256 ${digest(describe)}\n`;
const stampFile = join(generated, '.stamp');
if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(generated, 'js', 'component.js'))) {
  console.log(`build.mjs: generated/ is up to date (component sha256 ${sha.slice(0, 12)}…)`);
  process.exit(0);
}

// 1. The world's types, the main core module and its core signatures, read by the Rust
//    build tool (wit-parser and wasmparser), which also refuses a component that imports
//    anything but the bucket interface.
const out = join(generated, 'js.tmp');
rmSync(out, { recursive: true, force: true });
let signatures;
try {
  signatures = JSON.parse(execFileSync(describe, [wasm, out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
} catch (e) {
  fail(`${basename(describe)} could not describe the component (see above): ${e.message.split('\n')[0]}`);
}
const { WORLD: description } = await import(pathToFileURL(join(out, 'component.js')).href);
// The package's version follows the WIT package's, so an older CLI's component is
// refused here rather than by core.mjs when the package first runs.
const { version } = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
if (description.package !== `convoy:render-store@${version}`) {
  fail(`the component is ${description.package}, but this package is ${version}: rebuild the CLI (${bin})`);
}

// 2. Each function the module imports or exports has the core type abi.mjs gives its
//    WIT type, so types and module cannot disagree silently.
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const checker = new Component(null, description);
const wanted = new Map();
for (const [module, functions] of checker.imports) {
  for (const [fname, fn] of functions) wanted.set(`${module}#${fname}`, fn.importSignature());
}
const coreImports = new Map(Object.entries(signatures.imports));
const coreExports = new Map(Object.entries(signatures.exports));
for (const [key, type] of coreImports) {
  if (!wanted.has(key)) fail(`the core module imports ${key}, which the component's world does not declare`);
  if (!same(type, wanted.get(key))) fail(`the core module imports ${key} as ${JSON.stringify(type)}, not ${JSON.stringify(wanted.get(key))}`);
}
if (coreExports.get('memory') !== 'memory') fail('the core module exports no memory named memory');
if (!same(coreExports.get('cabi_realloc'), [['i32', 'i32', 'i32', 'i32'], ['i32']])) fail('the core module exports no cabi_realloc of type (i32 i32 i32 i32) -> i32');
for (const [, functions] of checker.exports) {
  for (const [, core, fn] of functions) {
    const type = coreExports.get(core);
    if (type === undefined) fail(`the core module exports no ${core}`);
    if (!same(type, fn.exportSignature())) fail(`the core module exports ${core} as ${JSON.stringify(type)}, not ${JSON.stringify(fn.exportSignature())}`);
  }
}

// 3. The tool's module (the core module as base64 and the types, which the package
//    loads without a file system or a fetch, the same file in Node and in a browser)
//    moved into place, checked.
rmSync(join(generated, 'js'), { recursive: true, force: true });
renameSync(out, join(generated, 'js'));
writeFileSync(stampFile, stamp);
console.log(`build.mjs: wrote the component's main core module (sha256 ${sha.slice(0, 12)}…) and the types of its world (${description.package}) into generated/js`);
