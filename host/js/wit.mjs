// Build-time only (build.mjs; not shipped): reads a WIT package, as far as the render
// store's WIT uses the language, into the plain type descriptions abi.mjs lowers and
// lifts values by. Every named type is resolved in place (the WIT has no recursive
// type), so a description is self-contained JSON:
//
//   'bool' | 'u8' | 'u16' | 'u32' | 'u64' | 's8' | 's16' | 's32' | 's64' | 'string'
//   {list: T}  {option: T}  {result: [T | null, T | null]}  {tuple: [T, …]}
//   {record: [[name, T], …]}  {variant: [[name, T | null], …]}  {enum: [name, …]}
//
// Anything else the language has (floats, char, flags, resources, futures, streams,
// named results) is refused with the line it is on, rather than guessed at.

const PRIMITIVES = new Set(['bool', 'u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64', 'string']);

function tokenize(text) {
  const tokens = [];
  let line = 1;
  const re = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|->|%?[a-z][a-z0-9]*(?:-[a-z0-9]+)*|@[0-9A-Za-z.+-]+|[{}()<>,:;.=_/*]|./gy;
  for (let m; (m = re.exec(text)) !== null;) {
    const t = m[0];
    if (!/^\s|^\/\/|^\/\*/.test(t)) tokens.push({ t: t.startsWith('%') ? t.slice(1) : t, line });
    line += t.split('\n').length - 1;
  }
  return tokens;
}

/**
 * The interfaces of the WIT package `text`: `{package, interfaces: {name: {functions:
 * {name: {params: [[name, T], …], result: T | null}}}}, worlds: {name: {imports, exports}}}`.
 */
export function parseWit(text) {
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at]?.t;
  const fail = (why) => {
    throw new Error(`WIT line ${tokens[Math.min(at, tokens.length - 1)]?.line ?? 0}: ${why}`);
  };
  const next = () => {
    if (at >= tokens.length) fail('unexpected end');
    return tokens[at++].t;
  };
  const expect = (t) => {
    const got = next();
    if (got !== t) fail(`expected ${t}, found ${got}`);
  };
  const ident = () => {
    const t = next();
    if (!/^[a-z]/.test(t)) fail(`expected a name, found ${t}`);
    return t;
  };
  /** `a, b, c` up to `close` (a trailing comma allowed). */
  const listOf = (close, item) => {
    const items = [];
    while (peek() !== close) {
      items.push(item());
      if (peek() !== close) expect(',');
    }
    expect(close);
    return items;
  };

  let packageName = null;
  const interfaces = {};
  const worlds = {};
  // A type as written: resolved to a description once every interface is read.
  const typeRef = () => {
    const t = ident();
    if (PRIMITIVES.has(t)) return t;
    const generic = { list: 1, option: 1, result: 2, tuple: -1 }[t];
    if (generic === undefined) return { ref: t };
    if (t === 'result' && peek() !== '<') return { result: [null, null] };
    expect('<');
    if (t === 'result') {
      const ok = peek() === '_' ? (next(), null) : typeRef();
      let err = null;
      if (peek() === ',') {
        next();
        err = typeRef();
      }
      expect('>');
      return { result: [ok, err] };
    }
    const args = listOf('>', typeRef);
    if (t === 'tuple') return { tuple: args };
    if (args.length !== 1) fail(`${t} takes one type`);
    return { [t]: args[0] };
  };

  while (at < tokens.length) {
    const word = next();
    if (word === 'package') {
      let name = '';
      while (peek() !== ';') name += next();
      expect(';');
      packageName = name;
    } else if (word === 'interface') {
      const name = ident();
      const iface = { types: {}, uses: {}, functions: {} };
      interfaces[name] = iface;
      expect('{');
      while (peek() !== '}') {
        const kind = next();
        if (kind === 'use') {
          const from = ident();
          expect('.');
          expect('{');
          for (const [used, as] of listOf('}', () => {
            const n = ident();
            if (peek() === 'as') {
              next();
              return [n, ident()];
            }
            return [n, n];
          })) iface.uses[as] = { from, name: used };
          expect(';');
        } else if (kind === 'record') {
          const name = ident();
          expect('{');
          iface.types[name] = { record: listOf('}', () => {
            const field = ident();
            expect(':');
            return [field, typeRef()];
          }) };
        } else if (kind === 'variant') {
          const name = ident();
          expect('{');
          iface.types[name] = { variant: listOf('}', () => {
            const c = ident();
            if (peek() !== '(') return [c, null];
            next();
            const t = typeRef();
            expect(')');
            return [c, t];
          }) };
        } else if (kind === 'enum') {
          const name = ident();
          expect('{');
          iface.types[name] = { enum: listOf('}', ident) };
        } else if (kind === 'type') {
          const name = ident();
          expect('=');
          iface.types[name] = typeRef();
          expect(';');
        } else if (peek() === ':') {
          next();
          expect('func');
          expect('(');
          const params = listOf(')', () => {
            const p = ident();
            expect(':');
            return [p, typeRef()];
          });
          let result = null;
          if (peek() === '->') {
            next();
            if (peek() === '(') fail('named results are not supported');
            result = typeRef();
          }
          expect(';');
          iface.functions[kind] = { params, result };
        } else {
          fail(`${kind} is not supported in an interface`);
        }
      }
      expect('}');
    } else if (word === 'world') {
      const name = ident();
      const world = { imports: [], exports: [] };
      worlds[name] = world;
      expect('{');
      while (peek() !== '}') {
        const kind = next();
        if (kind !== 'import' && kind !== 'export') fail(`${kind} is not supported in a world`);
        let item = '';
        while (peek() !== ';') item += next();
        expect(';');
        world[`${kind}s`].push(item);
      }
      expect('}');
    } else {
      fail(`${word} is not supported at the top level`);
    }
  }

  // Resolve named types (each interface's own, or one it uses), depth-first.
  const resolving = new Set();
  const resolveIn = (ifaceName, t) => {
    if (typeof t === 'string') return t;
    if (t.ref !== undefined) {
      const iface = interfaces[ifaceName];
      const use = iface.uses[t.ref];
      if (use) {
        if (!interfaces[use.from]?.types[use.name]) throw new Error(`WIT: ${ifaceName} uses ${use.from}.${use.name}, which is not defined`);
        return resolveIn(use.from, { ref: use.name });
      }
      const def = iface.types[t.ref];
      if (!def) throw new Error(`WIT: ${ifaceName} names ${t.ref}, which is not defined`);
      const key = `${ifaceName}.${t.ref}`;
      if (resolving.has(key)) throw new Error(`WIT: ${key} is recursive`);
      resolving.add(key);
      const resolved = resolveIn(ifaceName, def);
      resolving.delete(key);
      return resolved;
    }
    if (t.list) return { list: resolveIn(ifaceName, t.list) };
    if (t.option) return { option: resolveIn(ifaceName, t.option) };
    if (t.result) return { result: t.result.map((x) => (x === null ? null : resolveIn(ifaceName, x))) };
    if (t.tuple) return { tuple: t.tuple.map((x) => resolveIn(ifaceName, x)) };
    if (t.record) return { record: t.record.map(([n, x]) => [n, resolveIn(ifaceName, x)]) };
    if (t.variant) return { variant: t.variant.map(([n, x]) => [n, x === null ? null : resolveIn(ifaceName, x)]) };
    if (t.enum) return t;
    throw new Error(`WIT: unknown type ${JSON.stringify(t)}`);
  };
  const out = {};
  for (const [name, iface] of Object.entries(interfaces)) {
    const functions = {};
    for (const [fname, f] of Object.entries(iface.functions)) {
      functions[fname] = {
        params: f.params.map(([p, t]) => [p, resolveIn(name, t)]),
        result: f.result === null ? null : resolveIn(name, f.result),
      };
    }
    out[name] = { functions };
  }
  return { package: packageName, interfaces: out, worlds };
}
