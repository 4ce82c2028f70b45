// Build step of the Node host: writes the component with the Rust CLI
// (`render-store component --out`), transpiles it with jco in "sync instantiation" mode
// (the bucket is given at instantiate time, once per call) and checks that the component
// imports nothing but the bucket interface, so no WASI shim is involved.
//
// Usage: node build.mjs            (RENDER_STORE_BIN: the CLI; default ../../target/debug/render-store)
//
// The transpiled files go to ./generated/ (gitignored). They are rebuilt only when the
// component's bytes or the jco version changed (generated/.stamp).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const generated = join(here, 'generated');
const bin = resolve(here, process.env.RENDER_STORE_BIN || '../../target/debug/render-store');
const jcoPackage = join(here, 'node_modules', '@bytecodealliance', 'jco');
const jcoManifest = join(jcoPackage, 'package.json');

/** The only interface the component may import. */
const BUCKET = 'convoy:render-store/bucket@0.5.0';

function fail(message) {
  console.error(`build.mjs: ${message}`);
  process.exit(1);
}

if (!existsSync(bin)) {
  fail(`the render-store CLI is not at ${bin}: run \`cargo build -p render-store-cli --bin render-store\` or set RENDER_STORE_BIN`);
}
if (!existsSync(jcoManifest)) fail(`jco is not installed (${jcoPackage}): run \`npm ci\` here first`);
const { version: jcoVersion, bin: jcoBin } = JSON.parse(readFileSync(jcoManifest, 'utf8'));
const jco = join(jcoPackage, typeof jcoBin === 'string' ? jcoBin : jcoBin.jco);

mkdirSync(generated, { recursive: true });
const wasm = join(generated, 'render-store.wasm');
execFileSync(bin, ['component', '--out', wasm], { stdio: ['ignore', 'ignore', 'inherit'] });
const sha = createHash('sha256').update(readFileSync(wasm)).digest('hex');
const stamp = `component sha256 ${sha}\njco ${jcoVersion}\ncore modules as base64\n_debugLog reads JCO_DEBUG once\n`;
const stampFile = join(generated, '.stamp');
if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(generated, 'js', 'core-modules.js'))) {
  console.log(`build.mjs: generated/ is up to date (component sha256 ${sha.slice(0, 12)}…, jco ${jcoVersion})`);
  process.exit(0);
}

// 1. The component's world: it must import the bucket interface and nothing else.
const wit = execFileSync(process.execPath, [jco, 'wit', wasm], { encoding: 'utf8' });
const imports = [...wit.matchAll(/^\s*import\s+([^;]+);/gm)].map((m) => m[1].trim());
if (imports.length !== 1 || imports[0] !== BUCKET) {
  fail(`the component imports ${JSON.stringify(imports)}; expected only ${BUCKET}`);
}

// 2. Transpile into a fresh folder, then swap it in.
const out = join(generated, 'js.tmp');
rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [
  jco, 'transpile', wasm,
  '--name', 'render-store',
  '--instantiation', 'sync',
  '--no-wasi-shim',
  '--quiet',
  '-o', out,
], { stdio: 'inherit' });

// 3. The JS glue must not load anything (no WASI shim, no module at all) and must read
//    only the bucket from the import object; the core modules must import only bucket
//    functions from outside (their other imports are jco's own wiring).
const js = readFileSync(join(out, 'render-store.js'), 'utf8');
const staticImports = js.match(/^\s*import\s.*$/gm) || [];
if (staticImports.length || /\brequire\(|\bimport\(|preview2-shim/.test(js)) {
  fail(`the transpiled JS loads other modules: ${staticImports.join('; ') || 'require/import()/preview2-shim'}`);
}
const importKeys = new Set([...js.matchAll(/\bimports\[\s*'([^']+)'\s*\]/g)].map((m) => m[1]));
const allowed = new Set([BUCKET, BUCKET.replace(/@.*$/, '')]);
if (importKeys.size === 0 || [...importKeys].some((k) => !allowed.has(k))) {
  fail(`the transpiled JS reads imports ${JSON.stringify([...importKeys])}; expected only ${BUCKET}`);
}
for (const file of readdirSync(out).filter((f) => f.endsWith('.wasm'))) {
  const module = new WebAssembly.Module(readFileSync(join(out, file)));
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    const internal = from === 'actual' || from === 'shim';
    if (!internal && !allowed.has(from)) fail(`${file} imports ${from}#${name}`);
  }
}

// 4. jco's glue logs through `_debugLog`, which reads `process.env.JCO_DEBUG` on every
//    call it makes (several for each bucket call; in Node each read is a getenv through
//    C++, ~8% of a small render's putRender). The variable is read once, when the module
//    loads, instead.
const debugLog = `  const _debugLog = (...args) => {
    if (!globalThis?.process?.env?.JCO_DEBUG) { return; }
    console.debug(...args);
  };`;
if (js.split(debugLog).length !== 2) {
  fail(`jco ${jcoVersion}'s glue does not define _debugLog as build.mjs expects: update step 4`);
}
writeFileSync(join(out, 'render-store.js'), js.replace(debugLog,
  '  const _debugLog = globalThis?.process?.env?.JCO_DEBUG ? (...args) => { console.debug(...args); } : () => {};'));

// 5. The core modules as base64 in a JS module, so the package loads them without a file
//    system or a fetch (the same files in Node and in a browser).
const coreModules = Object.fromEntries(
  readdirSync(out).filter((f) => f.endsWith('.wasm')).sort().map((f) => [f, readFileSync(join(out, f)).toString('base64')]),
);
writeFileSync(
  join(out, 'core-modules.js'),
  `// Written by build.mjs: the transpiled component's core modules, base64.\nexport const CORE_MODULES = ${JSON.stringify(coreModules, null, 1)};\n`,
);
writeFileSync(join(out, 'core-modules.d.ts'), 'export declare const CORE_MODULES: Record<string, string>;\n');

rmSync(join(generated, 'js'), { recursive: true, force: true });
renameSync(out, join(generated, 'js'));
writeFileSync(stampFile, stamp);
console.log(`build.mjs: transpiled the component (sha256 ${sha.slice(0, 12)}…) with jco ${jcoVersion} into generated/js; it imports only ${BUCKET}`);
