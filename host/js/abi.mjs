// The component model's canonical ABI (lifting and lowering, memory layout, flattening)
// for the types the render store's WIT uses, done in JavaScript over the component's
// main core module: the module runs as a plain WebAssembly instance whose bucket
// imports are the trampolines below and whose exports are wrapped as functions taking
// and returning JS values, because a generic component runtime (jco's glue) does per-call bookkeeping (tasks, subtasks,
// a lift and a copy per layer) that costs more than a small render's whole work.
//
// Values follow jco's conventions, which the rest of the package was written against:
// records are objects with camelCase fields; a variant is {tag, val} ({tag} without a
// payload); an enum is its case name; an option is the value or undefined; a result
// nested in another type is {tag: 'ok' | 'err', val}; u64 and s64 are bigints, the
// other integers numbers; list<u8> is a Uint8Array. An export returning a result
// returns its ok value and throws a ComponentError holding the err value as `payload`;
// an import returning a result returns its ok value and throws {payload} for the err
// value (an Error without `payload` thrown by an import stops the call like a trap).
//
// The component is untrusted input: every pointer it gives is bounds- and
// alignment-checked, every string must be UTF-8, every discriminant must name a case,
// and what one value lifts to is bounded by twice the memory's size (so a component
// cannot make the host build far more than its memory holds by pointing many list
// elements at the same bytes). A breach throws AbiError, which stops the call.

const MAX_FLAT_PARAMS = 16;
const MAX_FLAT_RESULTS = 1;
// fatal: a string that is not UTF-8 is refused; ignoreBOM: a leading U+FEFF is part of
// the string (by default TextDecoder drops it).
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const ENCODER = new TextEncoder();

/** The component broke the canonical ABI (a pointer out of its memory, a string that is
 *  not UTF-8, a discriminant naming no case, a call back into the host while the host
 *  was lowering a value into it). */
export class AbiError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AbiError';
  }
}

/** An export's err value, thrown (jco's name and shape: the value is `payload`). */
export class ComponentError extends Error {
  constructor(payload) {
    super(typeof payload?.tag === 'string' ? `${payload.tag} (see error.payload)` : 'component error (see error.payload)');
    this.name = 'ComponentError';
    Object.defineProperty(this, 'payload', { value: payload, enumerable: true });
  }
}

const alignTo = (n, align) => Math.ceil(n / align) * align;
/** A WIT name as jco names it in JS: kebab-case to camelCase. */
export const camelCase = (name) => name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());

// ---------------------------------------------------------------------------------------
// One instance's memory, seen for one lowering or lifting

export class Memory {
  /** `instance`: {memory, realloc, lowering} (the instance's memory and cabi_realloc,
   *  and whether the host is lowering a value into it). */
  constructor(instance) {
    this.instance = instance;
    this.buffer = null;
    this.lifted = 0;
    this.refresh();
  }

  /** Looks the buffer up again: growing the memory detaches the old one. */
  refresh() {
    const buffer = this.instance.memory.buffer;
    if (buffer !== this.buffer) {
      this.buffer = buffer;
      this.u8 = new Uint8Array(buffer);
      this.dv = new DataView(buffer);
    }
  }

  check(ptr, length, align, what) {
    if (ptr % align !== 0) throw new AbiError(`${what} at ${ptr} is not aligned to ${align} bytes`);
    if (ptr + length > this.u8.length) {
      throw new AbiError(`${what} at ${ptr}..${ptr + length} lies outside the component's ${this.u8.length} bytes of memory`);
    }
  }

  /** Counts bytes (or list elements) about to be lifted against the budget. */
  count(units) {
    this.lifted += units;
    if (this.lifted > 2 * this.u8.length) {
      throw new AbiError(`the component's value lifts to more than twice its ${this.u8.length} bytes of memory: its strings or lists point at the same bytes again and again`);
    }
  }

  /** cabi_realloc(0, 0, align, size), checked. The component may not call the host
   *  while it allocates (the canonical ABI's may_leave). */
  alloc(size, align) {
    if (size === 0) return align; // an empty list may point anywhere aligned
    const instance = this.instance;
    instance.lowering = true;
    let ptr;
    try {
      ptr = instance.realloc(0, 0, align, size) >>> 0;
    } finally {
      instance.lowering = false;
    }
    this.refresh();
    this.check(ptr, size, align, 'an allocation');
    return ptr;
  }
}

// ---------------------------------------------------------------------------------------
// Codecs: one per type, with its size, alignment and flat core types

function intCodec(name) {
  const bits = Number(name.slice(1));
  const signed = name[0] === 's';
  const size = bits / 8;
  const wide = bits === 64;
  const min = signed ? -(2 ** (bits - 1)) : 0;
  const max = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
  const getter = wide ? (signed ? 'getBigInt64' : 'getBigUint64') : `get${signed ? 'Int' : 'Uint'}${bits}`;
  const setter = wide ? (signed ? 'setBigInt64' : 'setBigUint64') : `set${signed ? 'Int' : 'Uint'}${bits}`;
  const checked = (v) => {
    if (wide) {
      let big;
      if (typeof v === 'bigint') big = v;
      else if (Number.isSafeInteger(v)) big = BigInt(v);
      else throw new TypeError(`expected an integer (${name}), not ${typeof v === 'number' ? v : typeof v}`);
      if ((signed ? BigInt.asIntN(64, big) : BigInt.asUintN(64, big)) !== big) throw new TypeError(`${big} is outside the ${name} range`);
      return big;
    }
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`expected an integer (${name}), not ${typeof v === 'number' ? v : typeof v}`);
    if (v < min || v > max) throw new TypeError(`${v} is outside the ${name} range`);
    return v;
  };
  const fromCore = wide
    ? (v) => (signed ? BigInt.asIntN(64, v) : BigInt.asUintN(64, v))
    : signed
      ? (v) => (bits === 32 ? v | 0 : (v << (32 - bits)) >> (32 - bits))
      : (v) => (bits === 32 ? v >>> 0 : v & max);
  return {
    size, align: size, flat: [wide ? 'i64' : 'i32'],
    load: (mem, ptr) => {
      mem.check(ptr, size, size, name);
      return mem.dv[getter](ptr, true);
    },
    store: (mem, v, ptr) => mem.dv[setter](ptr, checked(v), true),
    liftFlat: (mem, flat, at) => [fromCore(flat[at]), at + 1],
    lowerFlat: (mem, v, out) => { out.push(wide ? BigInt.asIntN(64, checked(v)) : checked(v) | 0); },
  };
}

const boolCodec = {
  size: 1, align: 1, flat: ['i32'],
  load: (mem, ptr) => {
    mem.check(ptr, 1, 1, 'a bool');
    return mem.u8[ptr] !== 0;
  },
  store: (mem, v, ptr) => { mem.u8[ptr] = boolValue(v); },
  liftFlat: (mem, flat, at) => [flat[at] !== 0, at + 1],
  lowerFlat: (mem, v, out) => { out.push(boolValue(v)); },
};

function boolValue(v) {
  if (typeof v !== 'boolean') throw new TypeError(`expected a boolean, not ${typeof v}`);
  return v ? 1 : 0;
}

/** A string or list: a pointer and a length, its elements elsewhere in memory. */
function spanCodec(lift, lower) {
  return {
    size: 8, align: 4, flat: ['i32', 'i32'],
    load: (mem, ptr) => {
      mem.check(ptr, 8, 4, 'a string or list');
      return lift(mem, mem.dv.getUint32(ptr, true), mem.dv.getUint32(ptr + 4, true));
    },
    store: (mem, v, ptr) => {
      const [p, n] = lower(mem, v); // first: it allocates, which may replace the buffer
      mem.dv.setUint32(ptr, p, true);
      mem.dv.setUint32(ptr + 4, n, true);
    },
    liftFlat: (mem, flat, at) => [lift(mem, flat[at] >>> 0, flat[at + 1] >>> 0), at + 2],
    lowerFlat: (mem, v, out) => { out.push(...lower(mem, v).map((x) => x | 0)); },
  };
}

const stringCodec = spanCodec(
  (mem, ptr, length) => {
    mem.check(ptr, length, 1, 'a string');
    mem.count(length);
    try {
      return UTF8.decode(mem.u8.subarray(ptr, ptr + length));
    } catch {
      throw new AbiError(`a string from the component at ${ptr}..${ptr + length} is not UTF-8`);
    }
  },
  (mem, v) => {
    if (typeof v !== 'string') throw new TypeError(`expected a string, not ${typeof v}`);
    const bytes = ENCODER.encode(v);
    const ptr = mem.alloc(bytes.length, 1);
    mem.u8.set(bytes, ptr);
    return [ptr, bytes.length];
  },
);

function asBytes(v) {
  if (v instanceof Uint8Array) return v;
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  throw new TypeError(`expected a Uint8Array, not ${v === null ? 'null' : typeof v}`);
}

const bytesCodec = spanCodec(
  (mem, ptr, length) => {
    mem.check(ptr, length, 1, 'a byte list');
    mem.count(length);
    return mem.u8.slice(ptr, ptr + length);
  },
  (mem, v) => {
    const bytes = asBytes(v);
    const length = bytes.length;
    const ptr = mem.alloc(length, 1);
    mem.u8.set(bytes, ptr);
    return [ptr, length];
  },
);

function listCodec(element) {
  const { size, align } = element;
  return spanCodec(
    (mem, ptr, length) => {
      mem.check(ptr, length * size, align, 'a list');
      mem.count(Math.max(length * size, length));
      const out = new Array(length);
      for (let i = 0; i < length; i++) out[i] = element.load(mem, ptr + i * size);
      return out;
    },
    (mem, v) => {
      if (!Array.isArray(v)) throw new TypeError(`expected an array, not ${v === null ? 'null' : typeof v}`);
      const ptr = mem.alloc(v.length * size, align);
      for (let i = 0; i < v.length; i++) element.store(mem, v[i], ptr + i * size);
      return [ptr, v.length];
    },
  );
}

/** A record (an object with camelCase fields) or a tuple (an array). */
function fieldsCodec(fields, asTuple) {
  let offset = 0;
  let align = 1;
  const laid = fields.map(([name, codec]) => {
    offset = alignTo(offset, codec.align);
    const field = { key: asTuple ? name : camelCase(name), codec, offset };
    offset += codec.size;
    align = Math.max(align, codec.align);
    return field;
  });
  const what = asTuple ? 'an array' : 'an object';
  const checkValue = (v) => {
    if (v === null || typeof v !== 'object' || (asTuple && !Array.isArray(v))) throw new TypeError(`expected ${what}, not ${v === null ? 'null' : typeof v}`);
  };
  return {
    size: alignTo(offset, align), align, flat: laid.flatMap((f) => f.codec.flat),
    load: (mem, ptr) => {
      const out = asTuple ? [] : {};
      for (const f of laid) out[f.key] = f.codec.load(mem, ptr + f.offset);
      return out;
    },
    store: (mem, v, ptr) => {
      checkValue(v);
      for (const f of laid) f.codec.store(mem, v[f.key], ptr + f.offset);
    },
    liftFlat: (mem, flat, at) => {
      const out = asTuple ? [] : {};
      for (const f of laid) [out[f.key], at] = f.codec.liftFlat(mem, flat, at);
      return [out, at];
    },
    lowerFlat: (mem, v, out) => {
      checkValue(v);
      for (const f of laid) f.codec.lowerFlat(mem, v[f.key], out);
    },
  };
}

/** The flat type of two cases' values in one slot (the canonical ABI's join). */
function join(a, b) {
  if (a === undefined || a === b) return b;
  return 'i64'; // i32 and i64: this WIT has no floats (the build tool refuses them)
}

/**
 * A variant, enum, option or result (`kind`), with `cases` [[name, codec | null], …] in
 * order. Its JS value: see the top of this file.
 */
function variantCodec(kind, cases) {
  const n = cases.length;
  const discSize = n <= 256 ? 1 : n <= 65536 ? 2 : 4;
  const caseAlign = Math.max(1, ...cases.map(([, c]) => (c ? c.align : 1)));
  const payloadOffset = alignTo(discSize, caseAlign);
  const align = Math.max(discSize, caseAlign);
  const size = alignTo(payloadOffset + Math.max(0, ...cases.map(([, c]) => (c ? c.size : 0))), align);
  const joined = [];
  for (const [, c] of cases) (c ? c.flat : []).forEach((t, i) => { joined[i] = join(joined[i], t); });
  const index = new Map(cases.map(([name], i) => [name, i]));
  const getDisc = ['getUint8', 'getUint16', null, 'getUint32'][discSize - 1];
  const setDisc = ['setUint8', 'setUint16', null, 'setUint32'][discSize - 1];

  const caseOf = (v) => {
    let i;
    let payload;
    if (kind === 'enum') i = index.get(v);
    else if (kind === 'option') {
      if (v === undefined || v === null) i = 0;
      else [i, payload] = [1, v];
    } else {
      if (v !== null && typeof v === 'object') [i, payload] = [index.get(v.tag), v.val];
    }
    if (i === undefined) {
      const expected = kind === 'enum' ? `one of ${cases.map(([c]) => JSON.stringify(c)).join(', ')}` : `{tag, val} with a tag of ${cases.map(([c]) => c).join(', ')}`;
      throw new TypeError(`expected ${expected}, not ${typeof v === 'string' ? JSON.stringify(v) : typeof v}`);
    }
    return [i, payload];
  };
  const lifted = (i, payload) => {
    if (kind === 'enum') return cases[i][0];
    if (kind === 'option') return i === 0 ? undefined : payload;
    return cases[i][1] ? { tag: cases[i][0], val: payload } : { tag: cases[i][0] };
  };
  const discriminant = (d, where) => {
    if (d >= n) throw new AbiError(`${where} names case ${d} of a ${kind} of ${n} cases`);
    return d;
  };

  return {
    size, align, flat: ['i32', ...joined],
    load: (mem, ptr) => {
      mem.check(ptr, size, align, `a ${kind}`);
      const i = discriminant(mem.dv[getDisc](ptr, true), `a ${kind} at ${ptr}`);
      const c = cases[i][1];
      return lifted(i, c ? c.load(mem, ptr + payloadOffset) : undefined);
    },
    store: (mem, v, ptr) => {
      const [i, payload] = caseOf(v);
      const c = cases[i][1];
      if (c) c.store(mem, payload, ptr + payloadOffset); // first: it may allocate
      mem.dv[setDisc](ptr, i, true);
    },
    liftFlat: (mem, flat, at) => {
      const i = discriminant(flat[at] >>> 0, `a flat ${kind}`);
      const c = cases[i][1];
      let payload;
      if (c) {
        // Each slot as the case's own type: an i32 in a joined i64 slot is wrapped.
        const own = c.flat.map((t, j) => {
          const v = flat[at + 1 + j];
          return t === 'i32' && joined[j] === 'i64' ? Number(BigInt.asIntN(32, v)) : v;
        });
        [payload] = c.liftFlat(mem, own, 0);
      }
      return [lifted(i, payload), at + 1 + joined.length];
    },
    lowerFlat: (mem, v, out) => {
      const [i, payload] = caseOf(v);
      const c = cases[i][1];
      const own = [];
      if (c) c.lowerFlat(mem, payload, own);
      out.push(i);
      joined.forEach((t, j) => {
        if (j >= own.length) out.push(t === 'i64' ? 0n : 0);
        else if (t === 'i64' && c.flat[j] === 'i32') out.push(BigInt(own[j] >>> 0)); // zero-extended
        else out.push(own[j]);
      });
    },
  };
}

/** The codec of a type description (host/js/describe/src/world.rs gives the forms). */
export function codec(type) {
  if (typeof type === 'string') {
    if (type === 'bool') return boolCodec;
    if (type === 'string') return stringCodec;
    if (/^[us](8|16|32|64)$/.test(type)) return intCodec(type);
    throw new Error(`unsupported WIT type ${type}`);
  }
  if (type.list !== undefined) return type.list === 'u8' ? bytesCodec : listCodec(codec(type.list));
  if (type.record) return fieldsCodec(type.record.map(([n, t]) => [n, codec(t)]), false);
  if (type.tuple) return fieldsCodec(type.tuple.map((t, i) => [i, codec(t)]), true);
  if (type.variant) return variantCodec('variant', type.variant.map(([n, t]) => [n, t === null ? null : codec(t)]));
  if (type.enum) return variantCodec('enum', type.enum.map((n) => [n, null]));
  if (type.option !== undefined) return variantCodec('option', [['none', null], ['some', codec(type.option)]]);
  if (type.result) return variantCodec('result', [['ok', type.result[0] === null ? null : codec(type.result[0])], ['err', type.result[1] === null ? null : codec(type.result[1])]]);
  throw new Error(`unsupported WIT type ${JSON.stringify(type)}`);
}

// ---------------------------------------------------------------------------------------
// Functions

/** One WIT function's core signature and its lowering and lifting (see the spec's
 *  flattening: parameters past 16 flat values go in memory as a tuple; a result of more
 *  than one flat value goes in memory, returned by pointer from an export and written
 *  at a pointer given as the last parameter of an import). */
class WitFunction {
  constructor(name, { params, result }) {
    this.name = name;
    this.params = params.map(([, t]) => codec(t));
    this.result = result === null ? null : codec(result);
    /** A result type at the top: its err is thrown (exports) or caught (imports). */
    this.returnsResult = result !== null && typeof result === 'object' && result.result !== undefined;
    const flat = this.params.flatMap((c) => c.flat);
    this.paramTuple = flat.length > MAX_FLAT_PARAMS ? codec({ tuple: params.map(([, t]) => t) }) : null;
    this.flatParams = this.paramTuple ? ['i32'] : flat;
    this.resultInMemory = this.result !== null && this.result.flat.length > MAX_FLAT_RESULTS;
  }

  /** The core type an export of this function has: [params, results]. */
  exportSignature() {
    const results = this.result === null ? [] : this.resultInMemory ? ['i32'] : this.result.flat;
    return [this.flatParams, results];
  }

  /** The core type an import of this function has: [params, results]. */
  importSignature() {
    if (this.resultInMemory) return [[...this.flatParams, 'i32'], []];
    return [this.flatParams, this.result === null ? [] : this.result.flat];
  }

  lowerArgs(mem, args) {
    if (args.length !== this.params.length) throw new TypeError(`${this.name} takes ${this.params.length} arguments, not ${args.length}`);
    if (this.paramTuple) {
      const ptr = mem.alloc(this.paramTuple.size, this.paramTuple.align);
      this.paramTuple.store(mem, args, ptr);
      return [ptr];
    }
    const flat = [];
    for (let i = 0; i < args.length; i++) this.params[i].lowerFlat(mem, args[i], flat);
    return flat;
  }

  liftResult(mem, core) {
    if (this.result === null) return undefined;
    if (!this.resultInMemory) return this.result.liftFlat(mem, [core], 0)[0];
    const ptr = core >>> 0;
    mem.check(ptr, this.result.size, this.result.align, `${this.name}'s result`);
    return this.result.load(mem, ptr);
  }

  liftArgs(mem, core) {
    if (this.paramTuple) {
      const ptr = core[0] >>> 0;
      mem.check(ptr, this.paramTuple.size, this.paramTuple.align, `${this.name}'s arguments`);
      return this.paramTuple.load(mem, ptr);
    }
    const values = [];
    let at = 0;
    for (const c of this.params) {
      let v;
      [v, at] = c.liftFlat(mem, core, at);
      values.push(v);
    }
    return values;
  }

  lowerResult(mem, value, core) {
    if (this.result === null) return undefined;
    if (this.resultInMemory) {
      const ptr = core[core.length - 1] >>> 0;
      mem.check(ptr, this.result.size, this.result.align, `${this.name}'s result pointer`);
      this.result.store(mem, value, ptr);
      return undefined;
    }
    const flat = [];
    this.result.lowerFlat(mem, value, flat);
    return flat[0];
  }
}

/** What an import threw, as its err value (jco's rule): an own `payload`, or the thrown
 *  value itself when it is not an Error; an Error without `payload` is thrown on. */
function errPayload(e) {
  if (e !== null && typeof e === 'object' && Object.hasOwn(e, 'payload')) return e.payload;
  if (e instanceof Error) throw e;
  return e;
}

// ---------------------------------------------------------------------------------------
// The component

/** The core name of a function of interface `iface` of package `pkg` ("ns:name@version"). */
function coreName(pkg, iface, name) {
  const at = pkg.indexOf('@');
  const base = at < 0 ? pkg : pkg.slice(0, at);
  const version = at < 0 ? '' : pkg.slice(at);
  return `${base}/${iface}${version}${name === undefined ? '' : `#${name}`}`;
}

/**
 * The component's main core module with the canonical ABI around it. `world` (written by
 * render-store-js-describe and checked against the module by build.mjs): {package, imports: {iface:
 * {functions}}, exports: {iface: {functions}}}.
 */
export class Component {
  constructor(module, world) {
    this.module = module;
    this.imports = Object.entries(world.imports).map(([iface, { functions }]) => [
      coreName(world.package, iface),
      Object.entries(functions).map(([name, f]) => [name, new WitFunction(`${iface}#${name}`, f)]),
    ]);
    this.exports = Object.entries(world.exports).map(([iface, { functions }]) => [
      camelCase(iface),
      Object.entries(functions).map(([name, f]) => [camelCase(name), coreName(world.package, iface, name), new WitFunction(`${iface}#${name}`, f)]),
    ]);
  }

  /**
   * A new instance: `{exports, memory}`, `exports` by interface and function in
   * camelCase. `handlers(moduleName)` gives the functions of an imported interface,
   * each under its camelCase name.
   */
  instantiate(handlers) {
    const instance = { memory: null, realloc: null, lowering: false };
    const importObject = {};
    for (const [module, functions] of this.imports) {
      const given = handlers(module);
      importObject[module] = {};
      for (const [name, fn] of functions) {
        const handler = given[camelCase(name)];
        if (typeof handler !== 'function') throw new Error(`render-store: no handler for the import ${module}#${name}`);
        importObject[module][name] = (...core) => {
          if (instance.lowering) throw new AbiError(`the component called ${fn.name} while the host was lowering a value into it (from cabi_realloc)`);
          const mem = new Memory(instance);
          const args = fn.liftArgs(mem, core);
          let value;
          if (fn.returnsResult) {
            try {
              value = { tag: 'ok', val: handler(...args) };
            } catch (e) {
              value = { tag: 'err', val: errPayload(e) };
            }
          } else value = handler(...args);
          mem.refresh();
          return fn.lowerResult(mem, value, core);
        };
      }
    }
    const core = new WebAssembly.Instance(this.module, importObject).exports;
    if (!(core.memory instanceof WebAssembly.Memory)) throw new AbiError('the core module exports no memory named memory');
    if (typeof core.cabi_realloc !== 'function') throw new AbiError('the core module exports no cabi_realloc');
    instance.memory = core.memory;
    instance.realloc = core.cabi_realloc;
    const exports = {};
    for (const [iface, functions] of this.exports) {
      exports[iface] = {};
      for (const [name, coreFn, fn] of functions) {
        const raw = core[coreFn];
        if (typeof raw !== 'function') throw new AbiError(`the core module exports no ${coreFn}`);
        exports[iface][name] = (...args) => {
          const mem = new Memory(instance);
          const result = raw(...fn.lowerArgs(mem, args));
          mem.refresh();
          const value = fn.liftResult(mem, result);
          if (!fn.returnsResult) return value;
          if (value.tag === 'err') throw new ComponentError(value.val);
          return value.val;
        };
      }
    }
    return { exports, memory: instance.memory };
  }
}
