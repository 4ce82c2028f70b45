// The canonical ABI this package does itself (abi.mjs): values round-trip through an
// instance's memory in the spec's layout, whatever the component hands back is checked
// before it is believed, and the component may not call the host while the host lowers
// a value into it. The modules are assembled here, byte by byte (a few instructions).

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { REPO } from './helpers.mjs';

// abi.mjs is not an entry point of the package: from the installed package when run.sh
// runs these tests beside it, else from the source folder.
const here = dirname(fileURLToPath(import.meta.url));
const installed = join(here, '..', 'node_modules', '@convoy', 'render-store', 'abi.mjs');
const abi = await import(pathToFileURL(existsSync(installed) ? installed : join(here, '..', 'abi.mjs')).href);
const { AbiError, Component, ComponentError, Memory, codec } = abi;

// ---------------------------------------------------------------------------------------
// A few bytes of WebAssembly

const leb = (n) => {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};
const name = (text) => [...leb(Buffer.byteLength(text)), ...Buffer.from(text)];
const vec = (items) => [...leb(items.length), ...items.flat()];
const section = (id, body) => [id, ...leb(body.length), ...body];
const I32 = 0x7f;

/** cabi_realloc's body: a bump allocator over global 0 that grows the memory as needed
 *  (after `before`, instructions run first: a call to an import, say). */
const bump = (before = []) => [
  ...vec([[1, I32]]), // one local: $at
  ...before,
  0x23, 0, 0x20, 2, 0x41, 1, 0x6b, 0x6a, 0x41, 0, 0x20, 2, 0x6b, 0x71, 0x21, 4, // at = align_up(next, align)
  0x20, 4, 0x20, 3, 0x6a, 0x24, 0, // next = at + size
  0x23, 0, 0x3f, 0, 0x41, 0x80, 0x80, 0x04, 0x6c, 0x4b, // next > memory.size * 65536 ?
  0x04, 0x40, 0x41, 1, 0x23, 0, 0x41, 16, 0x76, 0x6a, 0x40, 0, 0x1a, 0x0b, // grow
  0x20, 4, 0x0b,
];

/**
 * A module: `imports` [[module, name, typeIndex]], `funcs` [[typeIndex, body]],
 * `exports` [[name, funcIndex]] (plus its memory); type 0 is cabi_realloc's. Global 0 is
 * the allocator's next free byte; `flag`, when given, is global 1 (an i32 constant).
 */
function module({ types = [], imports = [], funcs, exports, flag }) {
  const allTypes = [[[I32, I32, I32, I32], [I32]], ...types];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec(allTypes.map(([p, r]) => [0x60, ...vec(p.map((t) => [t])), ...vec(r.map((t) => [t]))]))),
    ...(imports.length ? section(2, vec(imports.map(([m, n, t]) => [...name(m), ...name(n), 0, ...leb(t)]))) : []),
    ...section(3, vec(funcs.map(([t]) => leb(t)))),
    ...section(5, vec([[0, 1]])),
    ...section(6, vec([
      [I32, 1, 0x41, 0x80, 0x08, 0x0b], // (mut i32) 1024
      ...(flag === undefined ? [] : [[I32, 0, 0x41, flag, 0x0b]]),
    ])),
    ...section(7, vec([[...name('memory'), 2, 0], ...exports.map(([n, f]) => [...name(n), 0, ...leb(f)])])),
    ...section(10, vec(funcs.map(([, body]) => [...leb(body.length), ...body]))),
  ];
  return new WebAssembly.Module(new Uint8Array(bytes));
}

/** A Memory over a fresh instance of the growing bump allocator. */
function memory() {
  const { exports } = new WebAssembly.Instance(module({ funcs: [[0, bump()]], exports: [['cabi_realloc', 0]] }));
  return new Memory({ memory: exports.memory, realloc: exports.cabi_realloc, lowering: false });
}

const STRING = codec('string');
const ERROR = codec({ variant: [['not-found', null], ['denied', 'string'], ['failed', 'string']] });
const META_TYPE = { record: [['key', 'string'], ['size', 'u64'], ['modified', { record: [['seconds', 's64'], ['nanoseconds', 'u32']] }]] };
const META = codec(META_TYPE);
const LISTED = codec({ result: [{ list: META_TYPE }, { variant: [['not-found', null], ['denied', 'string'], ['failed', 'string']] }] });
const DATA = codec({ variant: [['text', 'string'], ['raw', { list: 'u8' }]] });

// ---------------------------------------------------------------------------------------

test('values round-trip through memory, as jco gives them', () => {
  const mem = memory();
  const meta = (key, size, seconds, nanoseconds) => ({ key, size, modified: { seconds, nanoseconds } });
  for (const [c, value] of [
    [DATA, { tag: 'text', val: 'é' }],
    [STRING, '\ufeffa leading byte order mark stays'],
    [DATA, { tag: 'raw', val: new Uint8Array([0xff, 0]) }],
    [LISTED, { tag: 'ok', val: [meta('a/b', 7n, -1n, 999_999_999), meta('a/c', 1n << 63n, 0n, 0)] }],
    [LISTED, { tag: 'err', val: { tag: 'denied', val: 'no' } }],
    [LISTED, { tag: 'err', val: { tag: 'not-found' } }],
    [codec({ list: 'u32' }), [0, 1, 2 ** 31, 2 ** 32 - 1]],
    [codec({ option: 'string' }), undefined],
    [codec({ option: 'string' }), 'x'],
    [codec({ enum: ['yaml', 'json'] }), 'json'],
    [codec({ tuple: ['bool', 's8', 'u16'] }), [true, -3, 65535]],
    [codec('s64'), -(2n ** 63n)],
  ]) {
    const at = mem.alloc(c.size, c.align);
    c.store(mem, value, at);
    assert.deepEqual(c.load(mem, at), value);
    const flat = [];
    c.lowerFlat(mem, value, flat);
    assert.equal(flat.length, c.flat.length);
    assert.deepEqual(c.liftFlat(mem, flat, 0), [value, flat.length]);
  }
});

test('the layout and flattening are the canonical ABI\'s', () => {
  // bucket-error: a byte of discriminant, then a string at 4.
  assert.deepEqual([ERROR.size, ERROR.align, ERROR.flat], [12, 4, ['i32', 'i32', 'i32']]);
  // result<list<object-meta>, bucket-error>: the payload at 4, as large as the larger case.
  assert.deepEqual([LISTED.size, LISTED.align, LISTED.flat], [16, 4, ['i32', 'i32', 'i32', 'i32']]);
  // object-meta: key (8 bytes), size (u64 at 8), modified (s64 at 16, u32 at 24): 32.
  assert.deepEqual([META.size, META.align], [32, 8]);
  // result<u64, bucket-error> (exists): the payload at 8, 24 bytes.
  const exists = codec({ result: ['u64', { variant: [['not-found', null], ['denied', 'string'], ['failed', 'string']] }] });
  assert.deepEqual([exists.size, exists.align, exists.flat], [24, 8, ['i32', 'i64', 'i32', 'i32']]);
  // Cases that join an i32 and an i64 in one position pass an i64 (zero-extended), and
  // the i32 case reads it back wrapped.
  const joined = codec({ variant: [['a', 'u32'], ['b', 'u64']] });
  assert.deepEqual(joined.flat, ['i32', 'i64']);
  const flat = [];
  joined.lowerFlat(memory(), { tag: 'a', val: 2 ** 32 - 1 }, flat);
  assert.deepEqual(flat, [0, 2n ** 32n - 1n]);
  assert.deepEqual(joined.liftFlat(memory(), flat, 0), [{ tag: 'a', val: 2 ** 32 - 1 }, 2]);
  // A record of 17 flat values is past the 16 a call may pass: the export takes a pointer.
  const wide = { params: [['r', { record: Array.from({ length: 17 }, (_, i) => [`f${i}`, 'u8']) }]], result: null };
  const c = new Component(null, { package: 'p:q@1.0.0', imports: {}, exports: { x: { functions: { f: wide } } } });
  assert.deepEqual(c.exports[0][1][0][2].exportSignature(), [['i32'], []]);
});

test('what the component hands back is checked before it is believed', () => {
  const mem = memory();
  const size = mem.u8.length;
  const at = mem.alloc(8, 4);
  const put = (ptr, length) => {
    mem.dv.setUint32(at, ptr, true);
    mem.dv.setUint32(at + 4, length, true);
  };
  put(size - 2, 4); // past the memory's end
  assert.throws(() => STRING.load(mem, at), (e) => e instanceof AbiError && /outside/.test(e.message));
  mem.u8.set([0xc3, 0x28], 100); // not UTF-8
  put(100, 2);
  assert.throws(() => STRING.load(mem, at), (e) => e instanceof AbiError && /not UTF-8/.test(e.message));
  put(2, 1); // a list of u64 must be 8-aligned
  assert.throws(() => codec({ list: 'u64' }).load(mem, at), (e) => e instanceof AbiError && /aligned/.test(e.message));
  put(8, 2 ** 28); // more elements than the memory holds
  assert.throws(() => codec({ list: META_TYPE }).load(mem, at), (e) => e instanceof AbiError && /outside/.test(e.message));
  const v = mem.alloc(ERROR.size, ERROR.align);
  mem.u8[v] = 3; // names no case
  assert.throws(() => ERROR.load(mem, v), (e) => e instanceof AbiError && /case 3 of a variant of 3 cases/.test(e.message));
  assert.throws(() => ERROR.liftFlat(mem, [7, 0, 0], 0), AbiError);
  assert.throws(() => ERROR.load(mem, size - 4), (e) => e instanceof AbiError && /outside/.test(e.message));
});

test('a value that fits no case is refused before it reaches the component', () => {
  const mem = memory();
  assert.throws(() => DATA.store(mem, 7, mem.alloc(DATA.size, DATA.align)), TypeError);
  assert.throws(() => codec('u32').lowerFlat(mem, 2 ** 32, []), /outside the u32 range/);
  assert.throws(() => codec('u64').lowerFlat(mem, -1n, []), /outside the u64 range/);
  assert.throws(() => codec('u32').lowerFlat(mem, 1.5, []), /expected an integer/);
  assert.throws(() => ERROR.lowerFlat(mem, { tag: 'gone', val: 'x' }, []), /with a tag of not-found, denied, failed/);
  assert.throws(() => codec({ enum: ['yaml', 'json'] }).lowerFlat(mem, 'toml', []), /one of "yaml", "json"/);
  assert.throws(() => codec('bool').lowerFlat(mem, 1, []), /expected a boolean/);
  assert.throws(() => codec({ list: 'string' }).lowerFlat(mem, 'ab', []), /expected an array/);
});

test('a value stored after the memory grew lands in the grown memory', () => {
  const mem = memory();
  const at = mem.alloc(LISTED.size, LISTED.align);
  const text = 'x'.repeat(300_000);
  STRING.store(mem, text, at);
  assert.ok(mem.u8.length > 65536);
  assert.equal(STRING.load(mem, at), text);
  const listed = { tag: 'ok', val: [{ key: 'k'.repeat(70_000), size: 1n, modified: { seconds: 2n, nanoseconds: 3 } }, { key: 'j'.repeat(70_000), size: 4n, modified: { seconds: 5n, nanoseconds: 6 } }] };
  LISTED.store(mem, listed, at);
  assert.deepEqual(LISTED.load(mem, at), listed);
});

test('strings that alias the same bytes cannot make the host build more than the memory holds', () => {
  const mem = memory();
  const region = mem.alloc(60_000, 1);
  mem.u8.fill(0x61, region, region + 60_000);
  const array = mem.alloc(8 * 2000, 4);
  for (let i = 0; i < 2000; i++) {
    mem.dv.setUint32(array + 8 * i, region, true);
    mem.dv.setUint32(array + 8 * i + 4, 60_000, true);
  }
  const at = mem.alloc(8, 4);
  mem.dv.setUint32(at, array, true);
  mem.dv.setUint32(at + 4, 2000, true);
  assert.throws(() => codec({ list: 'string' }).load(mem, at), (e) => e instanceof AbiError && /more than twice/.test(e.message));
  // One of them lifts: the budget is per lifting (a new Memory).
  mem.dv.setUint32(at + 4, 1, true);
  const fresh = new Memory(mem.instance);
  assert.deepEqual(codec({ list: 'string' }).load(fresh, at), ['a'.repeat(60_000)]);
});

// A component of one import, i#f: func(), and one export, e#g: func(s: string) ->
// result<u32, string>, whose g returns ok(the length of s in bytes) or, for an empty s,
// err("empty"), and whose cabi_realloc first calls the import when `reenter` is 1.
const WORLD = {
  package: 't:t@1.0.0',
  imports: { i: { functions: { f: { params: [], result: null } } } },
  exports: { e: { functions: { g: { params: [['s', 'string']], result: { result: ['u32', 'string'] } } } } },
};
function component(reenter) {
  // Type 1: () -> (); type 2: (i32 i32) -> i32. Functions: 0 the import, 1 realloc, 2 g.
  const realloc = bump([0x23, 1, 0x04, 0x40, 0x10, 0, 0x0b]); // if global 1: call f
  // g(ptr, len): writes the result at 2048 (its discriminant, then the payload at 4) and
  // returns 2048.
  const g = [
    ...vec([]),
    0x20, 1, 0x45, 0x04, 0x40, // if len == 0
    0x41, 0x80, 0x10, 0x41, 1, 0x3a, 0, 0, // [2048] = 1 (err)
    0x41, 0x84, 0x10, 0x41, 0x90, 0x10, 0x36, 2, 0, // [2052] = 2064, the text
    0x41, 0x88, 0x10, 0x41, 5, 0x36, 2, 0, // [2056] = 5
    0x41, 0x90, 0x10, 0x41, 0xe5, 0x00, 0x3a, 0, 0, // "empty" at 2064
    0x41, 0x91, 0x10, 0x41, 0xed, 0x00, 0x3a, 0, 0,
    0x41, 0x92, 0x10, 0x41, 0xf0, 0x00, 0x3a, 0, 0,
    0x41, 0x93, 0x10, 0x41, 0xf4, 0x00, 0x3a, 0, 0,
    0x41, 0x94, 0x10, 0x41, 0xf9, 0x00, 0x3a, 0, 0,
    0x41, 0x80, 0x10, 0x0f, // return 2048
    0x0b,
    0x41, 0x80, 0x10, 0x41, 0, 0x3a, 0, 0, // [2048] = 0 (ok)
    0x41, 0x84, 0x10, 0x20, 1, 0x36, 2, 0, // [2052] = len
    0x41, 0x80, 0x10, 0x0b,
  ];
  return new Component(module({
    types: [[[], []], [[I32, I32], [I32]]],
    imports: [['t:t/i@1.0.0', 'f', 1]],
    funcs: [[0, realloc], [2, g]],
    exports: [['cabi_realloc', 1], ['t:t/e@1.0.0#g', 2]],
    flag: reenter,
  }), WORLD);
}

test('a component runs through its exports and imports with jco\'s conventions', () => {
  const { exports } = component(0).instantiate(() => ({ f: () => {} }));
  assert.equal(exports.e.g('héllo'), 6);
  assert.throws(() => exports.e.g(''), (e) => e instanceof ComponentError && e.payload === 'empty');
  assert.throws(() => exports.e.g(5), /expected a string/);
  assert.throws(() => exports.e.g(), /takes 1 arguments, not 0/);
  assert.throws(() => component(0).instantiate(() => ({})), /no handler for the import t:t\/i@1.0.0#f/);
});

test('the component may not call the host while the host lowers a value into it', () => {
  let called = 0;
  const { exports } = component(1).instantiate(() => ({ f: () => { called++; } }));
  assert.throws(() => exports.e.g('x'), (e) => e instanceof AbiError && /called i#f while the host was lowering/.test(e.message));
  assert.equal(called, 0);
});

test('the package\'s world is the WIT\'s (read from the component by render-store-js-describe; build.mjs checked the module against it)', async () => {
  const pkg = existsSync(installed) ? dirname(installed) : join(here, '..');
  const { WORLD: world } = await import(pathToFileURL(join(pkg, 'generated', 'js', 'component.js')).href);
  const wit = readFileSync(join(REPO, 'wit', 'render-store.wit'), 'utf8');
  for (const [iface, { functions }] of Object.entries({ ...world.imports, ...world.exports })) {
    assert.match(wit, new RegExp(`^interface ${iface} \\{`, 'm'));
    for (const fn of Object.keys(functions)) assert.match(wit, new RegExp(`^\\s+%?${fn}: func\\(`, 'm'), `${iface}#${fn}`);
  }
  assert.deepEqual(Object.keys(world.imports), ['bucket']);
  assert.deepEqual(Object.keys(world.exports), ['types', 'logic', 'store', 'trace']);
});
