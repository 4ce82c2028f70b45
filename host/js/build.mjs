// Build step of the Node host: writes the component with the Rust CLI
// (`render-store component --out`), checks that it imports nothing but the bucket
// interface (jco reads its world), and writes what the package runs: the component's
// main core module, and the WIT types of its imports and exports (read from
// wit/render-store.wit by wit.mjs) for abi.mjs, which does the canonical ABI around
// the module. Every import and export of the module is checked against the core
// signature those types give, so types and module cannot disagree silently.
//
// Usage: node build.mjs            (RENDER_STORE_BIN: the CLI; default ../../target/debug/render-store)
//
// The files go to ./generated/ (gitignored). They are rebuilt only when the component's
// bytes, the WIT or this build's output format changed (generated/.stamp).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Component, coreName } from './abi.mjs';
import { parseWit } from './wit.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const generated = join(here, 'generated');
const bin = resolve(here, process.env.RENDER_STORE_BIN || '../../target/debug/render-store');
const jcoPackage = join(here, 'node_modules', '@bytecodealliance', 'jco');
const jcoManifest = join(jcoPackage, 'package.json');
const witFile = join(here, '..', '..', 'wit', 'render-store.wit');

/** The only interface the component may import. */
const BUCKET = 'convoy:render-store/bucket@0.9.0';

function fail(message) {
  console.error(`build.mjs: ${message}`);
  process.exit(1);
}

if (!existsSync(bin)) {
  fail(`the render-store CLI is not at ${bin}: run \`cargo build -p render-store-cli --bin render-store\` or set RENDER_STORE_BIN`);
}
if (!existsSync(jcoManifest)) fail(`jco is not installed (${jcoPackage}): run \`npm ci\` here first`);
const { bin: jcoBin } = JSON.parse(readFileSync(jcoManifest, 'utf8'));
const jco = join(jcoPackage, typeof jcoBin === 'string' ? jcoBin : jcoBin.jco);

mkdirSync(generated, { recursive: true });
const wasm = join(generated, 'render-store.wasm');
execFileSync(bin, ['component', '--out', wasm], { stdio: ['ignore', 'ignore', 'inherit'] });
const sha = createHash('sha256').update(readFileSync(wasm)).digest('hex');
const witText = readFileSync(witFile, 'utf8');
const witSha = createHash('sha256').update(witText).digest('hex');
const stamp = `component sha256 ${sha}\nwit sha256 ${witSha}\nmain core module, world types and mutable globals for abi.mjs and core.mjs\n`;
const stampFile = join(generated, '.stamp');
if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(generated, 'js', 'component.js'))) {
  console.log(`build.mjs: generated/ is up to date (component sha256 ${sha.slice(0, 12)}…)`);
  process.exit(0);
}

// 1. The component's world: it must import the bucket interface and nothing else.
const wit = execFileSync(process.execPath, [jco, 'wit', wasm], { encoding: 'utf8' });
const imports = [...wit.matchAll(/^\s*import\s+([^;]+);/gm)].map((m) => m[1].trim());
if (imports.length !== 1 || imports[0] !== BUCKET) {
  fail(`the component imports ${JSON.stringify(imports)}; expected only ${BUCKET}`);
}

// 2. The WIT: the world the component was built for, with every type resolved.
let parsed;
try {
  parsed = parseWit(witText);
} catch (e) {
  fail(`${witFile}: ${e.message}`);
}
const [worldName, world] = Object.entries(parsed.worlds)[0] ?? [];
if (!world) fail(`${witFile} defines no world`);
const named = (items) => items.map((i) => coreName(parsed.package, i)).sort();
const builtWith = [...wit.matchAll(/^\s*(import|export)\s+([^;]+);/gm)].map((m) => `${m[1]} ${m[2].trim()}`).sort();
const declared = [...named(world.imports).map((i) => `import ${i}`), ...named(world.exports).map((i) => `export ${i}`)].sort();
if (JSON.stringify(builtWith) !== JSON.stringify(declared)) {
  fail(`the component's world (${builtWith.join('; ')}) is not world ${worldName} of ${witFile} (${declared.join('; ')}): rebuild the CLI`);
}
const pick = (items) => Object.fromEntries(items.map((i) => [i, { functions: parsed.interfaces[i].functions }]));
const description = { package: parsed.package, imports: pick(world.imports), exports: pick(world.exports) };

// 3. The main core module (the component's code; the others are wit-component's shims
//    for indirect calls, which abi.mjs does not need): the largest core module section
//    at the component's top level.
const component = readFileSync(wasm);
const cores = [];
let at = 8;
const leb = (bytes) => {
  let value = 0;
  for (let shift = 0; ; shift += 7) {
    if (at >= bytes.length || shift > 28) fail('a LEB128 number is cut off');
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    if (!(byte & 0x80)) return value;
  }
};
while (at < component.length) {
  const id = component[at++];
  const size = leb(component);
  if (id === 1) cores.push(component.subarray(at, at + size));
  at += size;
}
if (cores.length === 0) fail('the component holds no core module');
const main = cores.reduce((a, b) => (b.length > a.length ? b : a));

// 4. Each function the module imports or exports has the core type the WIT gives it.
//    The same walk finds the module's mutable globals (core.mjs reuses an instance only
//    when its stack pointer, an i32, is the one it has: see REUSABLE there).
const VALTYPES = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128', 0x70: 'funcref', 0x6f: 'externref' };
const types = [];
const funcTypes = []; // by function index: imports first
const coreImports = new Map();
const coreExports = new Map();
const mutableGlobals = [];
const name = () => {
  const n = leb(main);
  const text = main.subarray(at, at + n).toString('utf8');
  at += n;
  return text;
};
at = 8;
while (at < main.length) {
  const id = main[at++];
  const size = leb(main);
  const end = at + size;
  if (id === 1) {
    for (let count = leb(main); count > 0; count--) {
      if (main[at++] !== 0x60) fail('the core module has a type that is not a function type');
      const vec = () => Array.from({ length: leb(main) }, () => VALTYPES[main[at++]] ?? '?');
      const params = vec();
      types.push([params, vec()]);
    }
  } else if (id === 2) {
    for (let count = leb(main); count > 0; count--) {
      const module = name();
      const field = name();
      const kind = main[at++];
      if (kind !== 0) fail(`the core module imports ${module}#${field}, which is not a function`);
      const type = types[leb(main)];
      funcTypes.push(type);
      coreImports.set(`${module}#${field}`, type);
    }
  } else if (id === 3) {
    for (let count = leb(main); count > 0; count--) funcTypes.push(types[leb(main)]);
  } else if (id === 6) {
    for (let count = leb(main); count > 0; count--) {
      const [type, mutable] = [main[at], main[at + 1]];
      at += 2;
      if (mutable) mutableGlobals.push(VALTYPES[type] ?? `type 0x${type.toString(16)}`);
      // The initializer, a constant expression, up to its `end`.
      for (let op = main[at++]; op !== 0x0b; op = main[at++]) {
        if (at > end) fail("a global's initializer is cut off");
        if (op === 0x41 || op === 0x42 || op === 0x23 || op === 0xd2) leb(main);
        else if (op === 0x43) at += 4;
        else if (op === 0x44) at += 8;
        else if (op === 0xd0) at += 1;
        else if (![0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e].includes(op)) fail(`opcode 0x${op.toString(16)} in a global's initializer`);
      }
    }
  } else if (id === 7) {
    for (let count = leb(main); count > 0; count--) {
      const field = name();
      const kind = main[at++];
      const index = leb(main);
      coreExports.set(field, kind === 0 ? funcTypes[index] : kind === 2 ? 'memory' : `kind ${kind}`);
    }
  }
  at = end;
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const checker = new Component(null, description);
const wanted = new Map();
for (const [module, functions] of checker.imports) {
  for (const [fname, fn] of functions) wanted.set(`${module}#${fname}`, fn.importSignature());
}
for (const [key, type] of coreImports) {
  if (!wanted.has(key)) fail(`the core module imports ${key}, which the WIT does not declare`);
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

// 5. The module as base64 and the types, in a JS module, so the package loads them
//    without a file system or a fetch (the same file in Node and in a browser).
const out = join(generated, 'js.tmp');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'component.js'),
  `// Written by build.mjs from the component (sha256 ${sha}) and ${'wit/render-store.wit'}.\n` +
  `/** The WIT types of the component's imports and exports (wit.mjs's descriptions). */\n` +
  `export const WORLD = ${JSON.stringify(description)};\n` +
  `/** The value type of each mutable global the main core module defines. */\n` +
  `export const MUTABLE_GLOBALS = ${JSON.stringify(mutableGlobals)};\n` +
  `/** The component's main core module, base64. */\n` +
  `export const CORE_MODULE = ${JSON.stringify(Buffer.from(main).toString('base64'))};\n`,
);
writeFileSync(join(out, 'component.d.ts'), 'export declare const WORLD: object;\nexport declare const MUTABLE_GLOBALS: string[];\nexport declare const CORE_MODULE: string;\n');
rmSync(join(generated, 'js'), { recursive: true, force: true });
renameSync(out, join(generated, 'js'));
writeFileSync(stampFile, stamp);
console.log(`build.mjs: wrote the component's main core module (sha256 ${sha.slice(0, 12)}…) and the types of world ${worldName} into generated/js; it imports only ${BUCKET}`);
