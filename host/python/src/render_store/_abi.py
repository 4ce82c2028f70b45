"""The component model's canonical ABI, done here over the component's main core module.

wasmtime-py's component API converts every value generically on every call: it reads the
function's type again, walks the cases of each variant and ``result``, and moves a
``list<u8>`` one element at a time. This module runs the component's main core module
itself, as the npm package does in JavaScript: the component's types are read once (through
wasmtime-py's type reflection), each becomes a :class:`Codec` that loads and stores its
values straight from and to the instance's linear memory, each function's flat arguments
move between its values and the call's slots through Python code written for that
function when the runtime starts, and bytes cross with one ``memmove``. The core module
runs under wasmtime's C API (:mod:`render_store._capi`), whose unchecked calls cost a
microsecond or two where wasmtime-py's core API costs tens.

Values keep wasmtime-py's component conventions, so this is a drop-in for it: a record is
a ``wasmtime.component.Record`` whose attributes are the field names; a variant, option or
``result`` is its payload alone when the cases' Python types tell them apart and a
``wasmtime.component.Variant`` otherwise; an enum is its case name; ``list<u8>`` is
``bytes``.

The component is untrusted input: every pointer and length it hands back is checked
against its memory and alignment, every string must be UTF-8, every discriminant must
name a case, what one value lifts to is bounded by twice the memory (strings aliasing
the same bytes cannot inflate the host), the component may not call the host from its
allocator, and anything else is an :class:`AbiError` (the host turns it into a trap).
An instance is reset and reused only if its module keeps no state outside its memory
but the stack pointer (at most one mutable global, an i32).
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import wasmtime
import wasmtime.component as wc

from . import _capi

#: The canonical ABI's limits on values passed as core parameters and results; more go
#: through memory.
MAX_FLAT_PARAMS = 16
MAX_FLAT_RESULTS = 1


class AbiError(Exception):
    """The component broke the canonical ABI (a pointer out of its memory, a string that
    is not UTF-8, a discriminant naming no case), or a host value does not fit its type."""


# --------------------------------------------------------------------------------------
# Memory


class Memory:
    """One instance's linear memory and allocator, seen through ``store`` (the Store, or
    the Caller of a host function: the only context wasmtime allows while the instance
    is running), for one lowering or lifting.

    ``view`` covers the memory as it was last looked at. Where memories never move
    (``fixed``: the engine's promise, :attr:`render_store._capi.Engine.fixed_memories`)
    it stays good as the memory grows, and the memory is looked at again only when an
    address lies past the view's end: a call into wasmtime saved on every allocation.
    Where they may move, ``view`` is only valid until the next allocation (which may grow
    the memory): take it after anything that allocates, never before. What is lifted is
    counted against a budget of twice the memory's size, so a component that points
    many strings or list elements at the same bytes cannot make the host build far more
    than its memory holds."""

    __slots__ = ("context", "memory", "realloc", "view", "size", "base", "fixed", "running", "lifted",
                 "realloc_call")

    def __init__(self, context: int, memory: _capi.Memory, realloc: _capi.Func,
                 running: Optional["_Running"] = None, *, fixed: bool = False):
        self.context = context
        self.memory = memory
        self.realloc = realloc
        self.running = running
        self.lifted = 0
        self.fixed = running.fixed if running is not None else fixed
        # The instance's own bound cabi_realloc (the host never calls it twice at once)
        # where it is reached through the same context, as a host function's caller is.
        if running is not None and running.context == context:
            self.realloc_call = running.realloc_call
        else:
            self.realloc_call = _capi.BoundCall(context, realloc, 4)
        self.size = -1
        self.base = 0
        if running is not None and running.view is not None:
            self.view, self.size, self.base = running.view, running.size, running.base
            self.guest_ran()
        else:
            self.refresh()

    def refresh(self) -> None:
        """Looks the memory up again, in case a call into the instance grew it. (A
        memory moves only when it grows, so a view of the same size is still good.)"""
        if _capi.memory_size(self.context, self.memory) == self.size:
            return
        base, size = _capi.memory_data(self.context, self.memory)
        if self.fixed and self.size >= 0 and base != self.base:
            raise AbiError("the component's memory moved, though its engine promised it never would")
        self.view = memoryview((ctypes.c_ubyte * size).from_address(base)).cast("B")
        self.size, self.base = size, base
        if self.running is not None:
            self.running.view, self.running.size, self.running.base = self.view, size, base

    def guest_ran(self) -> None:
        """The instance ran since the memory was last looked at: look again, unless the
        memory cannot have moved (then :meth:`check` looks when it has to)."""
        if not self.fixed:
            self.refresh()

    def check(self, ptr: int, length: int, align: int, what: str) -> None:
        if ptr % align:
            raise AbiError(f"{what} at {ptr} is not aligned to {align} bytes")
        if ptr + length > self.size:
            self.refresh()  # the memory may have grown since it was looked at
            if ptr + length > self.size:
                raise AbiError(f"{what} at {ptr}..{ptr + length} lies outside the component's "
                               f"{self.size} bytes of memory")

    def count(self, units: int) -> None:
        """Counts bytes (or list elements) about to be lifted against the budget."""
        self.lifted += units
        if self.lifted > 2 * self.size:
            self.refresh()
        if self.lifted > 2 * self.size:
            raise AbiError(f"the component's value lifts to more than twice its {self.size} bytes "
                           "of memory: its strings or lists point at the same bytes again and again")

    def alloc(self, size: int, align: int) -> int:
        """``cabi_realloc(0, 0, align, size)``, checked. The component may not call the
        host while it allocates (the canonical ABI's ``may_leave``)."""
        if size == 0:
            return align  # an empty list may point anywhere aligned; wit-bindgen's lift skips it
        running = self.running
        if running is not None:
            running.may_leave = False
        call = self.realloc_call
        slot = call.slot
        # The result comes back in slot 0 and slot 1 is written by no one but the host:
        # its zero stays from the binding on.
        slot[0].i32 = 0
        slot[2].i32 = align
        slot[3].i32 = size  # ctypes stores the low 32 bits: size < 2^32 is checked by the caller
        try:
            call()
        finally:
            if running is not None:
                running.may_leave = True
        ptr = slot[0].i32 & 0xFFFFFFFF
        if not self.fixed:
            self.refresh()
        if ptr % align or ptr + size > self.size:
            self.check(ptr, size, align, "an allocation")
        return ptr

    def write(self, ptr: int, data: Any) -> None:
        self.view[ptr:ptr + len(data)] = data

    def read(self, ptr: int, length: int) -> bytes:
        return bytes(self.view[ptr:ptr + length])


# --------------------------------------------------------------------------------------
# Codecs


def _align_to(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def _join(a: str, b: str) -> str:
    if a == b:
        return a
    if {a, b} == {"i32", "f32"}:
        return "i32"
    return "i64"


class Codec:
    """How one WIT type lies in memory (``size``, ``align``, ``load``, ``store``) and in
    core values (``flat``, ``lower_flat``, ``lift_flat``), and which Python classes its
    values have (``classes``: wasmtime-py's rule for telling variant cases apart)."""

    size: int
    align: int
    flat: List[str]
    classes: Set[type]

    def load(self, mem: Memory, ptr: int) -> Any:
        raise NotImplementedError

    def store(self, mem: Memory, value: Any, ptr: int) -> None:
        raise NotImplementedError

    def lower_flat(self, mem: Memory, value: Any, out: List[int]) -> None:
        raise NotImplementedError

    def lift_flat(self, mem: Memory, flat: List[int], at: int) -> Tuple[Any, int]:
        """The value whose core values start at ``flat[at]``, and the index after them."""
        raise NotImplementedError


class _Int(Codec):
    def __init__(self, fmt: str, signed: bool, python: type = int):
        self.fmt = "<" + fmt
        self.size = self.align = struct.calcsize(self.fmt)
        self.bits = self.size * 8
        self.signed = signed
        self.flat = ["i64" if self.size == 8 else "i32"]
        self.classes = {python}
        self.lo = -(1 << (self.bits - 1)) if signed else 0
        self.hi = (1 << (self.bits - 1)) if signed else (1 << self.bits)

    def checked(self, value: Any) -> int:
        if not isinstance(value, int) or not self.lo <= value < self.hi:
            raise TypeError(f"expected an integer from {self.lo} to {self.hi - 1}, not {value!r}")
        return int(value)

    def load(self, mem: Memory, ptr: int) -> Any:
        mem.check(ptr, self.size, self.align, "an integer")
        return struct.unpack_from(self.fmt, mem.view, ptr)[0]

    def store(self, mem: Memory, value: Any, ptr: int) -> None:
        struct.pack_into(self.fmt, mem.view, ptr, self.checked(value))

    def lower_flat(self, mem: Memory, value: Any, out: List[int]) -> None:
        out.append(self.checked(value))

    def lift_flat(self, mem: Memory, flat: List[int], at: int) -> Tuple[Any, int]:
        return self.from_core(flat[at]), at + 1

    def from_core(self, raw: int) -> Any:
        """The value of a core value (its low ``bits`` bits, signed or not)."""
        v = raw & ((1 << self.bits) - 1)
        if self.signed and v >= 1 << (self.bits - 1):
            v -= 1 << self.bits
        return v


class _Bool(_Int):
    def __init__(self) -> None:
        super().__init__("B", False, bool)

    def checked(self, value: Any) -> int:
        if not isinstance(value, bool):
            raise TypeError(f"expected a bool, not {value!r}")
        return int(value)

    def load(self, mem: Memory, ptr: int) -> Any:
        return bool(super().load(mem, ptr))

    def from_core(self, raw: int) -> Any:
        return bool(raw & 0xFFFFFFFF)


class _Span(Codec):
    """A string or list: a pointer and a length, the elements elsewhere in memory."""

    size, align, flat = 8, 4, ["i32", "i32"]

    def lift(self, mem: Memory, ptr: int, length: int) -> Any:
        raise NotImplementedError

    def lower(self, mem: Memory, value: Any) -> Tuple[int, int]:
        raise NotImplementedError

    def load(self, mem: Memory, ptr: int) -> Any:
        mem.check(ptr, 8, 4, "a string or list")
        return self.lift(mem, *struct.unpack_from("<II", mem.view, ptr))

    def store(self, mem: Memory, value: Any, ptr: int) -> None:
        p, n = self.lower(mem, value)  # first: it allocates, which may move the view
        struct.pack_into("<II", mem.view, ptr, p, n)

    def lower_flat(self, mem: Memory, value: Any, out: List[int]) -> None:
        out.extend(self.lower(mem, value))

    def lift_flat(self, mem: Memory, flat: List[int], at: int) -> Tuple[Any, int]:
        return self.lift(mem, flat[at] & 0xFFFFFFFF, flat[at + 1] & 0xFFFFFFFF), at + 2


class _String(_Span):
    classes = {str}

    def lift(self, mem: Memory, ptr: int, length: int) -> str:
        if ptr + length > mem.size:
            mem.check(ptr, length, 1, "a string")
        mem.count(length)
        try:
            return str(mem.view[ptr:ptr + length], "utf-8")
        except UnicodeDecodeError as e:
            raise AbiError(f"a string from the component is not UTF-8: {e}") from None

    def lower(self, mem: Memory, value: Any) -> Tuple[int, int]:
        if not isinstance(value, str):
            raise TypeError(f"expected a str, not {type(value).__name__}")
        data = value.encode("utf-8")
        ptr = mem.alloc(len(data), 1)
        mem.write(ptr, data)
        return ptr, len(data)


class _List(_Span):
    def __init__(self, element: Codec):
        self.element = element
        self.bytes = isinstance(element, _Int) and element.fmt == "<B" and not isinstance(element, _Bool)
        self.classes = {bytes} if self.bytes else {list}
        # Integers of one width move as one struct format over the whole list.
        self.ints = isinstance(element, _Int) and not isinstance(element, _Bool) and not self.bytes

    def lift(self, mem: Memory, ptr: int, length: int) -> Any:
        e = self.element
        mem.check(ptr, length * e.size, e.align, "a list")
        mem.count(max(length * e.size, length))
        if self.bytes:
            return mem.read(ptr, length)
        if self.ints:
            return list(struct.unpack_from(f"<{length}{e.fmt[1]}", mem.view, ptr))
        return [e.load(mem, ptr + i * e.size) for i in range(length)]

    def lower(self, mem: Memory, value: Any) -> Tuple[int, int]:
        e = self.element
        if self.bytes:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise TypeError(f"expected bytes, not {type(value).__name__}")
            data = memoryview(value).cast("B")
            ptr = mem.alloc(len(data), 1)
            mem.write(ptr, data)
            return ptr, len(data)
        if not isinstance(value, list):
            raise TypeError(f"expected a list, not {type(value).__name__}")
        n = len(value)
        ptr = mem.alloc(n * e.size, e.align)
        if self.ints:
            try:  # struct checks each value's range (one C loop, not a Python one)
                struct.pack_into(f"<{n}{e.fmt[1]}", mem.view, ptr, *value)
            except struct.error:
                for v in value:
                    e.checked(v)  # raises TypeError naming the value
                raise
        else:
            for i, v in enumerate(value):
                e.store(mem, v, ptr + i * e.size)
        return ptr, n


class _Record(Codec):
    classes = {wc.Record}

    def __init__(self, fields: Sequence[Tuple[str, Codec]]):
        self.fields = list(fields)
        self.offsets: List[int] = []
        offset, align = 0, 1
        for _, c in self.fields:
            offset = _align_to(offset, c.align)
            self.offsets.append(offset)
            offset += c.size
            align = max(align, c.align)
        self.align = align
        self.size = _align_to(offset, align)
        self.flat = [t for _, c in self.fields for t in c.flat]

    def load(self, mem: Memory, ptr: int) -> Any:
        r = wc.Record()
        for (name, c), off in zip(self.fields, self.offsets):
            setattr(r, name, c.load(mem, ptr + off))
        return r

    def store(self, mem: Memory, value: Any, ptr: int) -> None:
        for (name, c), off in zip(self.fields, self.offsets):
            c.store(mem, getattr(value, name), ptr + off)

    def lower_flat(self, mem: Memory, value: Any, out: List[int]) -> None:
        for name, c in self.fields:
            c.lower_flat(mem, getattr(value, name), out)

    def lift_flat(self, mem: Memory, flat: List[int], at: int) -> Tuple[Any, int]:
        r = wc.Record()
        for name, c in self.fields:
            v, at = c.lift_flat(mem, flat, at)
            setattr(r, name, v)
        return r, at


class _Tuple(_Record):
    classes = {tuple}

    def __init__(self, elements: Sequence[Codec]):
        super().__init__([(str(i), c) for i, c in enumerate(elements)])

    def load(self, mem: Memory, ptr: int) -> Any:
        return tuple(c.load(mem, ptr + off) for (_, c), off in zip(self.fields, self.offsets))

    def store(self, mem: Memory, value: Any, ptr: int) -> None:
        if not isinstance(value, tuple) or len(value) != len(self.fields):
            raise TypeError(f"expected a tuple of {len(self.fields)}")
        for v, (_, c), off in zip(value, self.fields, self.offsets):
            c.store(mem, v, ptr + off)

    def lower_flat(self, mem: Memory, value: Any, out: List[int]) -> None:
        if not isinstance(value, tuple) or len(value) != len(self.fields):
            raise TypeError(f"expected a tuple of {len(self.fields)}")
        for v, (_, c) in zip(value, self.fields):
            c.lower_flat(mem, v, out)

    def lift_flat(self, mem: Memory, flat: List[int], at: int) -> Tuple[Any, int]:
        values = []
        for _, c in self.fields:
            v, at = c.lift_flat(mem, flat, at)
            values.append(v)
        return tuple(values), at


class _Variant(Codec):
    """A variant, option, ``result`` or enum: ``cases`` are (name, payload codec or
    None); ``enum`` lifts a case as its name."""

    def __init__(self, cases: Sequence[Tuple[str, Optional[Codec]]], enum: bool = False):
        self.cases = list(cases)
        self.names = {name: i for i, (name, _) in enumerate(self.cases)}
        self.enum = enum
        n = len(self.cases)
        self.disc_fmt = "<B" if n <= 1 << 8 else "<H" if n <= 1 << 16 else "<I"
        disc = struct.calcsize(self.disc_fmt)
        payloads = [c for _, c in self.cases if c is not None]
        self.align = max([disc] + [c.align for c in payloads])
        self.payload_offset = _align_to(disc, max([1] + [c.align for c in payloads]))
        self.size = _align_to(self.payload_offset + max([0] + [c.size for c in payloads]), self.align)
        joined: List[str] = []
        for c in payloads:
            for i, t in enumerate(c.flat):
                if i < len(joined):
                    joined[i] = _join(joined[i], t)
                else:
                    joined.append(t)
        self.flat = ["i32"] + joined
        # wasmtime-py's rule: cases whose Python classes overlap need a tagged Variant.
        self.tagged = False
        seen: Set[type] = set()
        for _, c in self.cases:
            classes = {object} if c is None else c.classes
            if classes & seen:
                self.tagged = True
            seen |= classes
        if enum:
            self.classes = {str}
        elif self.tagged:
            self.classes = {wc.Variant}
        else:
            self.classes = seen
        #: Each case's index, payload codec and the Python classes it takes (untagged).
        self.matches = [(i, c, None if c is None else tuple(c.classes)) for i, (_, c) in enumerate(self.cases)]
        #: Each case's positions that hold an i32 in an i64 slot (no floats in this
        #: world): zero-extended when lowered, wrapped when lifted. Usually none.
        self.widened = [[] if c is None else [i for i, t in enumerate(c.flat) if t == "i32" and joined[i] == "i64"]
                        for _, c in self.cases]

    def case_of(self, value: Any) -> Tuple[int, Any]:
        """The case ``value`` stands for, and its payload."""
        if self.enum:
            if value not in self.names:
                raise TypeError(f"expected one of {sorted(self.names)}, not {value!r}")
            return self.names[value], None
        if self.tagged:
            if not isinstance(value, wc.Variant) or value.tag not in self.names:
                raise TypeError(f"expected a Variant with a tag of {sorted(self.names)}, not {value!r}")
            return self.names[value.tag], value.payload
        for i, c, classes in self.matches:
            if c is None:
                if value is None:
                    return i, None
            elif isinstance(value, classes):  # type: ignore[arg-type]
                return i, value
        raise TypeError(f"{value!r} fits no case of {[name for name, _ in self.cases]}")

    def lifted(self, index: int, payload: Any) -> Any:
        name = self.cases[index][0]
        if self.enum:
            return name
        if self.tagged:
            return wc.Variant(name, payload) if self.cases[index][1] is not None else wc.Variant(name)
        return payload

    def discriminant(self, d: int) -> int:
        if d >= len(self.cases):
            raise AbiError(f"discriminant {d} names no case of {[name for name, _ in self.cases]}")
        return d

    def load(self, mem: Memory, ptr: int) -> Any:
        mem.check(ptr, self.size, self.align, "a variant")
        d = self.discriminant(struct.unpack_from(self.disc_fmt, mem.view, ptr)[0])
        c = self.cases[d][1]
        return self.lifted(d, None if c is None else c.load(mem, ptr + self.payload_offset))

    def store(self, mem: Memory, value: Any, ptr: int) -> None:
        d, payload = self.case_of(value)
        struct.pack_into(self.disc_fmt, mem.view, ptr, d)
        c = self.cases[d][1]
        if c is not None:
            c.store(mem, payload, ptr + self.payload_offset)

    def lower_flat(self, mem: Memory, value: Any, out: List[int]) -> None:
        d, payload = self.case_of(value)
        out.append(d)
        c = self.cases[d][1]
        start = len(out)
        if c is not None:
            c.lower_flat(mem, payload, out)
            for i in self.widened[d]:
                out[start + i] &= 0xFFFFFFFF
        # Positions the case does not use are zero.
        out.extend([0] * (len(self.flat) - 1 - (len(out) - start)))

    def lift_flat(self, mem: Memory, flat: List[int], at: int) -> Tuple[Any, int]:
        d = self.discriminant(flat[at] & 0xFFFFFFFF)
        c = self.cases[d][1]
        payload = None
        if c is not None:
            if self.widened[d]:
                narrowed = flat[at + 1:at + 1 + len(c.flat)]
                for i in self.widened[d]:
                    narrowed[i] &= 0xFFFFFFFF
                payload, _ = c.lift_flat(mem, narrowed, 0)
            else:
                payload, _ = c.lift_flat(mem, flat, at + 1)
        return self.lifted(d, payload), at + len(self.flat)


_PRIMITIVES: Dict[type, Callable[[], Codec]] = {
    wc.Bool: _Bool,
    wc.U8: lambda: _Int("B", False), wc.S8: lambda: _Int("b", True),
    wc.U16: lambda: _Int("H", False), wc.S16: lambda: _Int("h", True),
    wc.U32: lambda: _Int("I", False), wc.S32: lambda: _Int("i", True),
    wc.U64: lambda: _Int("Q", False), wc.S64: lambda: _Int("q", True),
    wc.String: _String,
}


def codec(ty: Any) -> Codec:
    """The codec of a wasmtime-py component type (read once, when a runtime starts)."""
    make = _PRIMITIVES.get(type(ty))
    if make is not None:
        return make()
    if isinstance(ty, wc.ListType):
        return _List(codec(ty.element))
    if isinstance(ty, wc.RecordType):
        return _Record([(name, codec(t)) for name, t in ty.fields])
    if isinstance(ty, wc.TupleType):
        return _Tuple([codec(t) for t in ty.elements])
    if isinstance(ty, wc.EnumType):
        return _Variant([(name, None) for name in ty.names], enum=True)
    if isinstance(ty, wc.VariantType):
        return _Variant([(name, None if t is None else codec(t)) for name, t in ty.cases])
    if isinstance(ty, wc.OptionType):
        return _Variant([("none", None), ("some", codec(ty.payload))])
    if isinstance(ty, wc.ResultType):
        ok, err = ty.ok, ty.err
        return _Variant([("ok", None if ok is None else codec(ok)),
                         ("err", None if err is None else codec(err))])
    raise AbiError(f"this host does not lower WIT type {type(ty).__name__}")


# --------------------------------------------------------------------------------------
# Flat values, compiled per function
#
# Lowering a function's arguments (or lifting an import's) through the codecs' generic
# ``lower_flat`` and ``lift_flat`` builds a list of core values and walks the type tree
# on every call. A function's flat values sit at positions its type fixes, so each
# function gets Python code written once, when the runtime starts, that moves them
# straight between its values and the call's raw slots: records and tuples are taken
# apart, variants dispatched on their case, and each string, list and integer handled
# by its codec's own checked method. ``Function.lower_args`` and ``lift_args`` stay the
# reference these are tested against.


class _Writer:
    """The lines of one generated function, with the objects its code names."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.names: Dict[str, Any] = {"Record": wc.Record}
        self.count = 0

    def name(self, obj: Any) -> str:
        n = f"c{len(self.names)}"
        self.names[n] = obj
        return n

    def temp(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def build(self, name: str, what: str) -> Callable[..., Any]:
        """The function ``name`` the lines define; tracebacks name it ``what``."""
        namespace = dict(self.names)
        code = compile("\n".join(self.lines), f"<render_store: {what}>", "exec")
        exec(code, namespace)  # noqa: S102 - code written above, from WIT types
        return namespace[name]  # type: ignore[no-any-return]


def _emit_lower(w: _Writer, codec: Codec, value: str, at: int, kinds: List[str], depth: int) -> None:
    """Code that lowers the Python value named ``value`` into slots ``s[at:]``, whose
    core types are ``kinds`` (an i32 may sit in an i64 slot of a variant)."""
    if isinstance(codec, _Int):
        v = f"{w.name(codec)}.checked({value})"
        if codec.flat == ["i32"] and kinds[0] == "i64":
            v += " & 0xFFFFFFFF"  # zero-extended, as the canonical ABI widens
        w.line(depth, f"s[{at}].{kinds[0]} = {v}")
    elif isinstance(codec, _Span):
        p, n = w.temp(), w.temp()
        w.line(depth, f"{p}, {n} = {w.name(codec)}.lower(mem, {value})")
        w.line(depth, f"s[{at}].{kinds[0]} = {p}")
        w.line(depth, f"s[{at + 1}].{kinds[1]} = {n}")
    elif isinstance(codec, _Tuple):
        n = len(codec.fields)
        w.line(depth, f"if not isinstance({value}, tuple) or len({value}) != {n}:")
        w.line(depth + 1, f"raise TypeError('expected a tuple of {n}')")
        for i, (_, c) in enumerate(codec.fields):
            t = w.temp()
            w.line(depth, f"{t} = {value}[{i}]")
            _emit_lower(w, c, t, at, kinds, depth)
            kinds, at = kinds[len(c.flat):], at + len(c.flat)
    elif isinstance(codec, _Record):
        for name, c in codec.fields:
            t = w.temp()
            w.line(depth, f"{t} = getattr({value}, {name!r})")
            _emit_lower(w, c, t, at, kinds, depth)
            kinds, at = kinds[len(c.flat):], at + len(c.flat)
    elif isinstance(codec, _Variant):
        d, payload = w.temp(), w.temp()
        w.line(depth, f"{d}, {payload} = {w.name(codec)}.case_of({value})")
        w.line(depth, f"s[{at}].i32 = {d}")
        width = len(codec.flat) - 1
        for i, (_, c) in enumerate(codec.cases):
            last = i == len(codec.cases) - 1
            w.line(depth, "else:" if last else f"{'if' if i == 0 else 'elif'} {d} == {i}:")
            used = 0 if c is None else len(c.flat)
            before = len(w.lines)
            if c is not None:
                _emit_lower(w, c, payload, at + 1, kinds[1:1 + used], depth + 1)
            for j in range(at + 1 + used, at + 1 + width):
                w.line(depth + 1, f"s[{j}].i64 = 0")  # positions the case leaves unused
            if len(w.lines) == before:
                w.line(depth + 1, "pass")
    else:
        raise AbiError(f"this host does not lower {type(codec).__name__}")


def _emit_lift(w: _Writer, codec: Codec, at: int, depth: int) -> str:
    """Code that lifts the value whose core values are in slots ``s[at:]``; the name
    it is left in. (An i32 in an i64 slot is read through its low half, which holds it.)"""
    t = w.temp()
    if isinstance(codec, _Int):
        kind = codec.flat[0]
        w.line(depth, f"{t} = {w.name(codec)}.from_core(s[{at}].{kind})")
    elif isinstance(codec, _Span):
        w.line(depth, f"{t} = {w.name(codec)}.lift(mem, s[{at}].i32 & 0xFFFFFFFF, s[{at + 1}].i32 & 0xFFFFFFFF)")
    elif isinstance(codec, _Tuple):
        parts = []
        for _, c in codec.fields:
            parts.append(_emit_lift(w, c, at, depth))
            at += len(c.flat)
        w.line(depth, f"{t} = ({', '.join(parts)}{',' if len(parts) == 1 else ''})")
    elif isinstance(codec, _Record):
        w.line(depth, f"{t} = Record()")
        for name, c in codec.fields:
            v = _emit_lift(w, c, at, depth)
            w.line(depth, f"setattr({t}, {name!r}, {v})")
            at += len(c.flat)
    elif isinstance(codec, _Variant):
        d, name = w.temp(), w.name(codec)
        w.line(depth, f"{d} = {name}.discriminant(s[{at}].i32 & 0xFFFFFFFF)")
        for i, (_, c) in enumerate(codec.cases):
            last = i == len(codec.cases) - 1
            w.line(depth, "else:" if last else f"{'if' if i == 0 else 'elif'} {d} == {i}:")
            payload = "None" if c is None else _emit_lift(w, c, at + 1, depth + 1)
            w.line(depth + 1, f"{t} = {name}.lifted({i}, {payload})")
    else:
        raise AbiError(f"this host does not lift {type(codec).__name__}")
    return t


def compile_lower_args(fn: "Function") -> Callable[[Memory, Sequence[Any], Any], None]:
    """``lower(mem, args, s)``: ``fn``'s arguments lowered into the raw slots ``s`` (a
    function of at most 16 flat parameters; more go through memory)."""
    w = _Writer()
    w.line(0, "def lower(mem, args, s):")
    n = len(fn.params)
    w.line(1, f"if len(args) != {n}:")
    w.line(2, f"raise TypeError({fn.name!r} + ' takes {n} arguments, not ' + str(len(args)))")
    at = 0
    for i, c in enumerate(fn.params):
        a = w.temp()
        w.line(1, f"{a} = args[{i}]")
        _emit_lower(w, c, a, at, c.flat, 1)
        at += len(c.flat)
    w.line(1, "return None")
    return w.build("lower", f"lowering the arguments of {fn.name}")


def compile_lift_args(fn: "Function") -> Callable[[Memory, Any], List[Any]]:
    """``lift(mem, s)``: an import's arguments lifted from the raw slots ``s`` (a
    function of at most 16 flat parameters)."""
    w = _Writer()
    w.line(0, "def lift(mem, s):")
    values, at = [], 0
    for c in fn.params:
        values.append(_emit_lift(w, c, at, 1))
        at += len(c.flat)
    w.line(1, f"return [{', '.join(values)}]")
    return w.build("lift", f"lifting the arguments of {fn.name}")


# --------------------------------------------------------------------------------------
# Functions


def _put_slot(slot: Any, value: int, core: str) -> None:
    """A core value into a raw slot (ctypes keeps its low 32 or 64 bits: the same bits,
    signed, and every value here fits its type's width)."""
    if core == "i32":
        slot.i32 = value
    else:
        slot.i64 = value


def _slot(slot: Any, core: str) -> int:
    """A core value out of a raw slot, unsigned."""
    return slot.i32 & 0xFFFFFFFF if core == "i32" else slot.i64 & 0xFFFFFFFFFFFFFFFF


class Function:
    """One WIT function's core signature (canonical ABI, ``lift`` and ``lower``): its
    parameters as core values or, past 16 of them, one pointer to a tuple; its result as
    one core value or, past one, in memory (an export returns a pointer to it; an import
    is given a pointer to write it at, after its parameters)."""

    def __init__(self, name: str, params: Sequence[Codec], result: Optional[Codec]):
        self.name = name
        self.params = list(params)
        self.result = result
        flat = [t for c in self.params for t in c.flat]
        self.args = _Tuple(self.params) if len(flat) > MAX_FLAT_PARAMS else None
        self.flat_params = ["i32"] if self.args is not None else flat
        self.result_in_memory = result is not None and len(result.flat) > MAX_FLAT_RESULTS
        results = [] if result is None else ["i32"] if self.result_in_memory else list(result.flat)
        self._export = (list(self.flat_params), results)
        self._import = ((self.flat_params + ["i32"], []) if self.result_in_memory
                        else (list(self.flat_params), results))
        self._lower: Optional[Callable[[Memory, Sequence[Any], Any], None]] = None
        self._lift: Optional[Callable[[Memory, Any], List[Any]]] = None

    def compiled_lower(self) -> Callable[[Memory, Sequence[Any], Any], None]:
        """``lower(mem, args, slots)``, as :meth:`lower_args` then the slots, written
        for this function (see :func:`compile_lower_args`)."""
        if self._lower is None:
            if self.args is None:
                self._lower = compile_lower_args(self)
            else:
                def lower(mem: Memory, args: Sequence[Any], s: Any) -> None:
                    s[0].i32 = self.lower_args(mem, args)[0]
                self._lower = lower
        return self._lower

    def compiled_lift(self) -> Callable[[Memory, Any], List[Any]]:
        """``lift(mem, slots)``, as :meth:`lift_args` of the slots, written for this
        function (see :func:`compile_lift_args`)."""
        if self._lift is None:
            if self.args is None:
                self._lift = compile_lift_args(self)
            else:
                self._lift = lambda mem, s: self.lift_args(mem, [s[0].i32 & 0xFFFFFFFF])
        return self._lift

    def export_signature(self) -> Tuple[List[str], List[str]]:
        """The core type of the export this function is lifted from."""
        return list(self._export[0]), list(self._export[1])

    def import_signature(self) -> Tuple[List[str], List[str]]:
        """The core type of the import this function is lowered to."""
        return list(self._import[0]), list(self._import[1])

    # An export: the host lowers the arguments and lifts the result.

    def lower_args(self, mem: Memory, args: Sequence[Any]) -> List[int]:
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments, not {len(args)}")
        if self.args is not None:
            ptr = mem.alloc(self.args.size, self.args.align)
            self.args.store(mem, tuple(args), ptr)
            return [ptr]
        flat: List[int] = []
        for c, a in zip(self.params, args):
            c.lower_flat(mem, a, flat)
        return flat

    def lift_result(self, mem: Memory, core: Any) -> Any:
        if self.result is None:
            return None
        if self.result_in_memory:
            ptr = core & 0xFFFFFFFF
            mem.check(ptr, self.result.size, self.result.align, f"{self.name}'s result")
            return self.result.load(mem, ptr)
        return self.result.lift_flat(mem, [core], 0)[0]

    # An import: the host lifts the arguments and lowers the result.

    def lift_args(self, mem: Memory, core: Sequence[int]) -> List[Any]:
        if self.args is not None:
            ptr = core[0] & 0xFFFFFFFF
            mem.check(ptr, self.args.size, self.args.align, f"{self.name}'s arguments")
            return list(self.args.load(mem, ptr))
        values, at = [], 0
        for c in self.params:
            v, at = c.lift_flat(mem, core, at)
            values.append(v)
        return values

    def lower_result(self, mem: Memory, value: Any, core: Sequence[int]) -> Any:
        if self.result is None:
            return None
        if self.result_in_memory:
            ptr = core[-1] & 0xFFFFFFFF
            mem.check(ptr, self.result.size, self.result.align, f"{self.name}'s result pointer")
            self.result.store(mem, value, ptr)
            return None
        flat: List[int] = []
        self.result.lower_flat(mem, value, flat)
        return flat[0]


def function(name: str, ty: Any) -> Function:
    """The :class:`Function` of a wasmtime-py component function type."""
    result = ty.result
    return Function(name, [codec(t) for _, t in ty.params], None if result is None else codec(result))


# --------------------------------------------------------------------------------------
# The core module inside a component


def core_modules(component: bytes) -> List[bytes]:
    """Every core module a component binary embeds at its top level, in order (its
    core-module sections, id 1; a core module is stored whole)."""
    try:
        return [c for section, c in _sections(component, b"\x00asm\x0d\x00\x01\x00") if section == 1]
    except ValueError as e:
        raise ValueError(f"not a WebAssembly component (component-model binary, layer 1): {e}") from None


def _leb(data: bytes, at: int) -> Tuple[int, int]:
    """An unsigned LEB128 at ``at``, and the offset after it."""
    value, shift = 0, 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("a LEB128 number is cut off")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _sections(binary: bytes, header: bytes) -> List[Tuple[int, bytes]]:
    """The sections (id, contents) of a WebAssembly binary that starts with ``header``."""
    if binary[:8] != header:
        raise ValueError("not a WebAssembly binary of the expected kind")
    sections, at = [], 8
    while at < len(binary):
        section = binary[at]
        size, at = _leb(binary, at + 1)
        if at + size > len(binary):
            raise ValueError("a section is cut off")
        sections.append((section, binary[at:at + size]))
        at += size
    return sections


def mutable_globals(module: bytes) -> List[str]:
    """The value type of each mutable global a core module defines, in order."""
    types = {0x7F: "i32", 0x7E: "i64", 0x7D: "f32", 0x7C: "f64", 0x7B: "v128", 0x70: "funcref",
             0x6F: "externref"}
    found: List[str] = []
    for section, contents in _sections(module, b"\x00asm\x01\x00\x00\x00"):
        if section != 6:
            continue
        count, at = _leb(contents, 0)
        for _ in range(count):
            if at + 2 > len(contents):
                raise ValueError("the global section is cut off")
            ty, mutable = contents[at], contents[at + 1]
            if mutable:
                found.append(types.get(ty, f"type 0x{ty:02x}"))
            # The initializer is a constant expression: skip it to its `end`.
            at = _skip_const_expr(contents, at + 2)
    return found


def _skip_const_expr(data: bytes, at: int) -> int:
    while True:
        if at >= len(data):
            raise ValueError("a constant expression is cut off")
        op = data[at]
        at += 1
        if op == 0x0B:  # end
            return at
        if op in (0x41, 0x42, 0x23, 0xD2):  # i32.const, i64.const (signed LEB), global.get, ref.func
            _, at = _leb(data, at)
        elif op == 0x43:  # f32.const
            at += 4
        elif op == 0x44:  # f64.const
            at += 8
        elif op == 0xD0:  # ref.null t
            at += 1
        elif op in (0x6A, 0x6B, 0x6C, 0x7C, 0x7D, 0x7E):  # extended-const arithmetic
            pass
        else:
            raise ValueError(f"opcode 0x{op:02x} in a global's initializer")


# --------------------------------------------------------------------------------------
# The component, run as its core module


#: An instance whose memory grew past this is dropped after its call rather than reset
#: and reused (the npm package's rule): zeroing it again would cost more than a new one.
MAX_POOLED_MEMORY = 16 << 20


class _Running:
    """One instance in its own store: its memory, allocator and exports, and the image
    of its memory right after instantiation."""

    __slots__ = ("store", "context", "instance", "calls", "memory", "realloc", "realloc_call", "image",
                 "image_start", "image_end", "image_data", "may_leave", "view", "size", "base", "fixed")

    def __init__(self, store: _capi.Store, instance: _capi.Instance):
        self.store = store
        self.context = store.context
        self.instance = instance
        #: Each export called so far, bound with its slots (an instance runs one call at
        #: a time, so each export's slots are free whenever it is called).
        self.calls: Dict[str, _capi.BoundCall] = {}
        self.memory = instance.memory("memory")
        self.realloc = instance.func("cabi_realloc")
        self.realloc_call = _capi.BoundCall(self.context, self.realloc, 4)
        #: The memory's view, size and address as last looked at (see Memory.refresh).
        self.view: Optional[memoryview] = None
        self.size = -1
        self.base = 0
        self.fixed = store.engine.fixed_memories
        self.image = bytes(Memory(self.context, self.memory, self.realloc).view)
        #: Where the image's nonzero bytes start and end (wasm-ld puts the stack, all
        #: zeros, below the data; the heap above it is zeros too).
        self.image_end = len(self.image.rstrip(b"\0"))
        self.image_start = min(len(self.image) - len(self.image.lstrip(b"\0")), self.image_end)
        self.image_data = self.image[self.image_start:self.image_end]
        #: False while the host lowers a value into the instance: the component may not
        #: call the host from its allocator then.
        self.may_leave = True

    def bound(self, name: str, count: int) -> _capi.BoundCall:
        """The exported function ``name`` (its type was checked against the module's),
        bound with ``count`` slots."""
        call = self.calls.get(name)
        if call is None:
            call = self.calls[name] = _capi.BoundCall(self.context, self.instance.func(name), count)
        return call

    def reset(self) -> bool:
        """Makes the instance as good as new after a call that returned normally: its
        memory written back to the image and zeroed above it. The guest keeps all its
        state in that memory (its allocator included), and its stack pointer is back
        where instantiation left it after a normal return. False when the memory grew
        past :data:`MAX_POOLED_MEMORY` (the instance is to be dropped)."""
        base, size = _capi.memory_data(self.context, self.memory)
        if size > MAX_POOLED_MEMORY:
            return False
        # The image's zero ends are written as zeros (memset only writes; memmove also
        # reads the image), with everything above it.
        start, end = self.image_start, self.image_end
        ctypes.memset(base, 0, start)
        ctypes.memmove(base + start, self.image_data, end - start)
        ctypes.memset(base + end, 0, size - end)
        return True


class CoreComponent:
    """A component run as its main core module, with the canonical ABI done here.

    ``component`` (compiled by wasmtime-py's component API) gives the WIT types; the
    main core module runs under wasmtime's C API (:mod:`render_store._capi`).
    ``imports`` maps each imported interface to its functions' Python handlers, which
    take and return values in wasmtime-py's component conventions (a handler of a
    function the component does not import is left unused). Each instance has its own
    store, its memory capped at ``memory_bytes``, and each call ``fuel`` units."""

    def __init__(self, engine: wasmtime.Engine, binary: bytes, component: wc.Component,
                 imports: Dict[str, Dict[str, Callable[..., Any]]], *,
                 memory_bytes: int, fuel: int):
        self.memory_bytes = memory_bytes
        self.fuel = fuel
        self._idle: List[_Running] = []
        ctype = component.type
        declared = ctype.imports(engine)
        if sorted(declared) != sorted(imports):
            raise AbiError(f"the component imports {sorted(declared)}, not {sorted(imports)}")
        self.functions: Dict[Tuple[str, str], Function] = {}
        for iface, item in ctype.exports(engine).items():
            instance = item.ty
            if isinstance(instance, wc.ComponentInstanceType):
                for name, extern in instance.exports(engine).items():
                    ty = extern.ty
                    if isinstance(ty, wc.FuncType):
                        self.functions[(iface, name)] = function(f"{iface}#{name}", ty)
        modules = core_modules(binary)
        if not modules:
            raise AbiError("the component holds no core module")
        # The main module is the component's code; the others are wit-component's small
        # shims for indirect calls, which this host does not need.
        main = max(modules, key=len)
        self.engine = _capi.Engine()
        try:
            module = _capi.Module(self.engine, main)
        except _capi.WasmtimeError as e:
            raise AbiError(f"the component's core module does not compile: {e}") from None
        self._check_exports(module.exports())
        # Resetting the memory makes an instance as good as new only if the memory is
        # all the state it has besides its stack pointer, which a normal return puts
        # back (wasm-ld's one mutable global). A module with more is never reused.
        self._poolable = mutable_globals(main) in ([], ["i32"])
        self._running: List[_Running] = []
        linker = _capi.Linker(self.engine)
        wanted = module.imports()
        for iface, handlers in imports.items():
            for name, extern in declared[iface].ty.exports(engine).items():
                ty = extern.ty
                if not isinstance(ty, wc.FuncType):
                    continue
                handler = handlers.get(name)
                if handler is None:
                    raise AbiError(f"the component imports {iface}#{name}, which this host does not serve")
                fn = function(f"{iface}#{name}", ty)
                signature = fn.import_signature()
                have = wanted.pop((iface, name), None)
                if have is not None and have != signature:
                    raise AbiError(f"the core module imports {iface}#{name} as {have}, not {signature}")
                linker.define(iface, name, signature, self._trampoline(fn, handler))
        if wanted:
            raise AbiError(f"the core module imports {sorted(wanted)}, which the component does not declare")
        self._pre = linker.instantiate_pre(module)

    def _check_exports(self, exported: Dict[str, Any]) -> None:
        if exported.get("memory") != ("memory", False, False):
            raise AbiError("the core module exports no 32-bit, unshared memory named memory")
        if exported.get("cabi_realloc") != (["i32"] * 4, ["i32"]):
            raise AbiError("the core module exports no cabi_realloc of type (i32 i32 i32 i32) -> i32")
        for fn in self.functions.values():
            ty = exported.get(fn.name)
            if ty is None:
                raise AbiError(f"the core module exports no {fn.name}")
            if ty != fn.export_signature():
                raise AbiError(f"the core module exports {fn.name} as {ty}, not {fn.export_signature()}")

    def _trampoline(self, fn: Function, handler: Callable[..., Any]) -> _capi.HostFunction:
        params, results = fn.import_signature()
        lift = fn.compiled_lift()
        # The slot of the pointer the result is written at, after the parameters.
        out = len(params) - 1 if fn.result_in_memory else None

        def serve(context: int, slots: Any) -> None:
            # Only the innermost running instance can be executing, so it is the caller.
            if not self._running or not self._running[-1].may_leave:
                raise AbiError(f"the component called {fn.name} while the host was lowering a value "
                               "into it (from cabi_realloc)")
            running = self._running[-1]
            mem = Memory(context, running.memory, running.realloc, running)
            # The handler cannot run this instance (it is not idle), so the memory stays.
            value = handler(*lift(mem, slots))
            if out is not None:
                fn.lower_result(mem, value, [slots[out].i32 & 0xFFFFFFFF])
            elif results:
                _put_slot(slots[0], fn.lower_result(mem, value, []), results[0])
        return serve

    def _new_instance(self) -> _Running:
        store = _capi.Store(self.engine, self.memory_bytes)
        return _Running(store, self._pre.instantiate(store))

    def idle_memories(self) -> List[bytes]:
        """A copy of the memory of every idle instance (for audits: no call's data is
        left in them)."""
        return [bytes(Memory(r.context, r.memory, r.realloc).view) for r in self._idle]

    def call(self, interface: str, name: str, args: Sequence[Any]) -> Any:
        """Calls export ``name`` of ``interface`` with a full fuel budget, in an instance
        as good as new: an idle one reset after its last call, or a new one.

        Raises :class:`AbiError` when the component breaks the ABI,
        :class:`~render_store._capi.Trap` when it traps, and whatever a handler raised;
        the instance is then dropped."""
        fn = self.functions.get((interface, name))
        if fn is None:
            raise AbiError(f"the component exports no {interface}.{name}")
        running = self._idle.pop() if self._idle else self._new_instance()
        returned = False
        self._running.append(running)
        try:
            running.store.set_fuel(self.fuel)
            mem = Memory(running.context, running.memory, running.realloc, running)
            params, results = fn._export
            call = running.bound(fn.name, max(len(params), len(results)))
            slot = call.slot
            fn.compiled_lower()(mem, args, slot)
            call()
            mem.guest_ran()
            value = fn.lift_result(mem, _slot(slot[0], results[0]) if results else None)
            returned = True
            # No post-return: the reset below frees everything the call allocated.
            return value
        finally:
            self._running.pop()
            if returned and self._poolable and running.reset():
                self._idle.append(running)
