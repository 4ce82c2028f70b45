"""The canonical ABI this package does itself (``render_store._abi``): values round-trip
through an instance's memory, whatever the component hands back is checked before it is
believed, and instances are reused only once as good as new."""

from __future__ import annotations

import struct

import pytest
import wasmtime
import wasmtime.component as wc

import render_store as rs
from render_store import _abi, _capi

# A core module with a memory and a bump allocator: enough to store and load values.
BUMP = """(module
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $at i32)
    (local.set $at (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                            (i32.sub (i32.const 0) (local.get 2))))
    (global.set $next (i32.add (local.get $at) (local.get 3)))
    (local.get $at)))"""


# The same allocator, growing the memory as it goes.
GROWING = BUMP.replace("""    (local.get $at)))""", """    (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.const 1) (i32.shr_u (global.get $next) (i32.const 16)))))))
    (local.get $at)))""")


def instance(engine: _capi.Engine, wat: str) -> _capi.Instance:
    """An instance of a module that imports nothing, with fuel for a long test."""
    store = _capi.Store(engine, 1 << 30)
    store.set_fuel(1 << 40)
    module = _capi.Module(engine, wasmtime.wat2wasm(wat))
    return _capi.Linker(engine).instantiate_pre(module).instantiate(store)


def memory_of(instance: _capi.Instance) -> _abi.Memory:
    return _abi.Memory(instance.store.context, instance.memory("memory"), instance.func("cabi_realloc"),
                       fixed=instance.store.engine.fixed_memories)


@pytest.fixture
def mem():
    growing = instance(_capi.Engine(), GROWING)
    yield memory_of(growing)  # the instance (and its store) lives until the test ends


STRING = _abi._String()
DATA = _abi._Variant([("text", STRING), ("raw", _abi._List(_abi._Int("B", False)))])
META = _abi._Record([("key", STRING), ("size", _abi._Int("Q", False)),
                     ("modified", _abi._Record([("seconds", _abi._Int("q", True)),
                                                ("nanoseconds", _abi._Int("I", False))]))])
ERROR = _abi._Variant([("not-found", None), ("denied", STRING), ("failed", STRING)])
LISTED = _abi._Variant([("ok", _abi._List(META)), ("err", ERROR)])


def meta(key: str, size: int, seconds: int, nanoseconds: int) -> wc.Record:
    return rs._rec(key=key, size=size, modified=rs._rec(seconds=seconds, nanoseconds=nanoseconds))


def test_values_round_trip_through_memory(mem):
    for codec, value in [
        (DATA, "é"), (DATA, b"\xff\x00"),
        (LISTED, [meta("a/b", 7, -1, 999_999_999), meta("a/c", 1 << 63, 0, 0)]),
        (LISTED, wc.Variant("denied", "no")), (LISTED, wc.Variant("not-found")),
        (_abi._List(_abi._Int("I", False)), [0, 1, 1 << 31, (1 << 32) - 1]),
        (_abi._Variant([("none", None), ("some", STRING)]), None),
        (_abi._Variant([("none", None), ("some", STRING)]), "x"),
        (_abi._Variant([("yaml", None), ("json", None)], enum=True), "json"),
        (_abi._Bool(), True),
    ]:
        at = mem.alloc(codec.size, codec.align)
        codec.store(mem, value, at)
        got = codec.load(mem, at)
        if isinstance(value, list) and value and isinstance(value[0], wc.Record):
            assert [(m.key, m.size, m.modified.seconds, m.modified.nanoseconds) for m in got] == \
                [(m.key, m.size, m.modified.seconds, m.modified.nanoseconds) for m in value]
        elif isinstance(value, wc.Variant):
            assert (got.tag, got.payload) == (value.tag, value.payload)
        else:
            assert got == value and type(got) is type(value)
        flat: list = []
        codec.lower_flat(mem, value, flat)
        assert len(flat) == len(codec.flat)


def test_the_layout_is_the_canonical_abis(mem):
    # result<list<object-meta>, bucket-error>: a byte of discriminant, the payload at 4,
    # as large as the larger case (bucket-error: its own byte, then a string at 4).
    assert (ERROR.size, ERROR.align, ERROR.flat) == (12, 4, ["i32"] * 3)
    assert (LISTED.size, LISTED.align, LISTED.payload_offset, LISTED.flat) == (16, 4, 4, ["i32"] * 4)
    # object-meta: key (8), size (u64 at 8), modified (s64 at 16, u32 at 24), 32 in all.
    assert (META.offsets, META.size, META.align) == ([0, 8, 16], 32, 8)
    # A variant whose cases join an i32 and an i64 position passes an i64.
    joined = _abi._Variant([("a", _abi._Int("I", False)), ("b", _abi._Int("Q", False))])
    assert joined.flat == ["i32", "i64"]
    flat: list = []
    joined.lower_flat(mem, wc.Variant("a", 5) if joined.tagged else 5, flat)
    assert flat == [0, 5]


def test_what_the_component_hands_back_is_checked(mem):
    size = mem.size
    at = mem.alloc(8, 4)
    struct.pack_into("<II", mem.view, at, size - 2, 4)  # past the memory's end
    with pytest.raises(_abi.AbiError, match="outside"):
        STRING.load(mem, at)
    struct.pack_into("<II", mem.view, at + 0, 100, 2)
    mem.write(100, b"\xc3(")  # not UTF-8
    with pytest.raises(_abi.AbiError, match="not UTF-8"):
        STRING.load(mem, at)
    struct.pack_into("<II", mem.view, at, 2, 1)  # a list of u64 must be 8-aligned
    with pytest.raises(_abi.AbiError, match="aligned"):
        _abi._List(_abi._Int("Q", False)).load(mem, at)
    struct.pack_into("<II", mem.view, at, 8, 1 << 28)  # more elements than the memory holds
    with pytest.raises(_abi.AbiError, match="outside"):
        _abi._List(META).load(mem, at)
    v = mem.alloc(ERROR.size, ERROR.align)
    mem.view[v] = 3  # names no case
    with pytest.raises(_abi.AbiError, match="discriminant 3"):
        ERROR.load(mem, v)
    with pytest.raises(_abi.AbiError, match="outside"):
        ERROR.load(mem, size - 4)


WIDE = _abi._Variant([("small", _abi._Int("i", True)), ("big", _abi._Int("Q", False)), ("none", None)])
OPTION = _abi._Variant([("none", None), ("some", STRING)])
# 16 flat parameters: the most that go as core values.
SIGNATURE = [META, DATA, WIDE, _abi._Tuple([STRING, _abi._Int("h", True)]), OPTION]
ARGUMENTS = [
    [meta("a/b", 7, -1, 999_999_999), "é", wc.Variant("small", -2), ("x", -32768), None],
    [meta("", 1 << 63, 0, 0), b"\xff\x00", wc.Variant("big", (1 << 64) - 1), ("", 5), "y"],
    [meta("k", 0, 1, 2), "", wc.Variant("none"), ("z", 0), ""],
]
FORM = _abi._Variant([("yaml", None), ("json", None)], enum=True)


def lifted(value):
    """A lifted value in a form that compares by content."""
    if isinstance(value, wc.Record):
        return {k: lifted(v) for k, v in vars(value).items()}
    if isinstance(value, wc.Variant):
        return (value.tag, lifted(value.payload))
    if isinstance(value, tuple):
        return tuple(lifted(v) for v in value)
    return value


WIDE_AT = 9  # META's 5 and DATA's 3 flat values, then WIDE's discriminant


def test_compiled_flat_values_agree_with_the_codecs(mem):
    # Each function's code, written once from its types, must move values to and from
    # the raw slots exactly as the codecs' generic lower_flat and lift_flat do.
    fn = _abi.Function("f", SIGNATURE, None)
    assert len(fn.flat_params) == 16 and fn.args is None
    kinds = fn.flat_params
    assert kinds[WIDE_AT] == "i64"
    lower, lift = fn.compiled_lower(), fn.compiled_lift()
    for args in ARGUMENTS:
        slots = _capi.slots(len(kinds))
        lower(mem, args, slots)
        core = [_abi._slot(slots[i], k) for i, k in enumerate(kinds)]
        assert lifted(fn.lift_args(mem, core)) == lifted(args)
        flat = fn.lower_args(mem, args)
        other = _capi.slots(len(kinds))
        for i, (v, k) in enumerate(zip(flat, kinds)):
            _abi._put_slot(other[i], v, k)
        assert lifted(lift(mem, other)) == lifted(args)
    # Without pointers, the slots hold exactly the generic flat values (an s32 in an
    # i64 slot zero-extended, unused positions zero).
    ints = _abi.Function("g", [WIDE, _abi._Int("i", True), WIDE, _abi._Bool(), _abi._Int("b", True), FORM], None)
    for args in ([wc.Variant("small", -1), -5, wc.Variant("big", 1 << 40), True, -128, "json"],
                 [wc.Variant("none"), 3, wc.Variant("small", 7), False, 127, "yaml"]):
        slots = _capi.slots(len(ints.flat_params))
        for slot in slots:
            slot.i64 = -1  # what a call before left in them
        ints.compiled_lower()(mem, args, slots)
        assert [_abi._slot(slots[i], k) for i, k in enumerate(ints.flat_params)] == \
            [v & (0xFFFFFFFF if k == "i32" else 0xFFFFFFFFFFFFFFFF) for v, k in zip(ints.lower_args(mem, args),
                                                                                  ints.flat_params)]
        assert lifted(ints.compiled_lift()(mem, slots)) == lifted(args)
    # Past 16 flat values the arguments go as one tuple in memory, both ways.
    many = _abi.Function("h", SIGNATURE + [FORM], None)
    assert many.args is not None
    slots = _capi.slots(1)
    many.compiled_lower()(mem, ARGUMENTS[0] + ["json"], slots)
    assert lifted(many.compiled_lift()(mem, slots)) == lifted(ARGUMENTS[0] + ["json"])


def test_compiled_flat_values_check_what_they_are_given(mem):
    fn = _abi.Function("f", SIGNATURE, None)
    lower, lift = fn.compiled_lower(), fn.compiled_lift()
    slots = _capi.slots(len(fn.flat_params))
    with pytest.raises(TypeError, match="takes 5 arguments, not 4"):
        lower(mem, ARGUMENTS[0][:4], slots)
    for i, bad in [(0, "k"), (1, 5), (2, 5), (2, wc.Variant("small", 1 << 31)), (3, ("x",)), (3, ("x", 1 << 15)),
                   (4, b"y")]:
        with pytest.raises((TypeError, AttributeError)):  # a record is read field by field
            lower(mem, ARGUMENTS[0][:i] + [bad] + ARGUMENTS[0][i + 1:], slots)
    lower(mem, ARGUMENTS[0], slots)
    slots[5].i32 = 2  # DATA has two cases
    with pytest.raises(_abi.AbiError, match="discriminant 2"):
        lift(mem, slots)
    lower(mem, ARGUMENTS[0], slots)
    slots[0].i32 = mem.size - 1  # the key's pointer, past the memory's end
    with pytest.raises(_abi.AbiError, match="outside"):
        lift(mem, slots)


def test_a_value_that_fits_no_case_is_refused_before_it_reaches_the_component(mem):
    with pytest.raises(TypeError):
        DATA.store(mem, 7, mem.alloc(DATA.size, DATA.align))
    with pytest.raises(TypeError):
        _abi._Int("I", False).lower_flat(mem, 1 << 32, [])
    with pytest.raises(TypeError):
        ERROR.lower_flat(mem, wc.Variant("gone", "x"), [])
    for bad in ([1, -1], [1, 1 << 32], [1, 2.0]):
        with pytest.raises(TypeError, match="expected an integer"):
            _abi._List(_abi._Int("I", False)).lower(mem, bad)


@pytest.mark.parametrize("moving", [True, False], ids=["moving", "fixed"])
def test_a_value_stored_after_the_memory_grew_lands_in_the_grown_memory(moving):
    # Where memories move when they grow, a string whose allocation grows the memory
    # must be written through the new view (the old one would be freed memory). Where
    # they never move, the memory is looked at again only when an address lies past
    # what the host saw: the value must still land, and the memory must not have moved.
    grown = instance(_capi.Engine(moving_memories=moving), GROWING)
    mem = memory_of(grown)
    assert mem.fixed is not moving
    base = mem.base
    at = mem.alloc(LISTED.size, LISTED.align)
    text = "x" * 300_000
    STRING.store(mem, text, at)
    assert mem.size > 65536 and STRING.load(mem, at) == text
    listed = [meta("k" * 70_000, 1, 2, 3), meta("j" * 70_000, 4, 5, 6)]
    LISTED.store(mem, listed, at)
    assert [m.key for m in LISTED.load(mem, at)] == [m.key for m in listed]
    if not moving:
        assert mem.base == base and _capi.memory_data(mem.context, mem.memory)[0] == base


def test_strings_that_alias_the_same_bytes_cannot_inflate_the_host(mem):
    # 2,000 strings over the same 60 KiB: far more than the memory holds, lifted.
    region = mem.alloc(60_000, 1)
    mem.write(region, b"a" * 60_000)
    array = mem.alloc(8 * 2000, 4)
    for i in range(2000):
        struct.pack_into("<II", mem.view, array + 8 * i, region, 60_000)
    at = mem.alloc(8, 4)
    struct.pack_into("<II", mem.view, at, array, 2000)
    with pytest.raises(_abi.AbiError, match="more than twice"):
        _abi._List(STRING).load(mem, at)
    # One of them lifts (the budget is per lifting: a new Memory).
    struct.pack_into("<II", mem.view, at, array, 1)
    fresh = _abi.Memory(mem.context, mem.memory, mem.realloc)
    assert _abi._List(STRING).load(fresh, at) == ["a" * 60_000]


def test_the_component_may_not_call_the_host_while_the_host_lowers_into_it(runtime):
    fn = runtime._core.functions[(f"{rs.PACKAGE}/logic@{rs.VERSION}", "validate-render-ref")]
    serve = runtime._core._trampoline(fn, lambda *_: None)
    with pytest.raises(_abi.AbiError, match="while the host was lowering"):
        serve(0, _capi.slots(2))  # no call running


def test_only_a_module_whose_state_is_its_memory_is_reused():
    one = wasmtime.wat2wasm(BUMP)
    assert _abi.mutable_globals(one) == ["i32"]
    two = wasmtime.wat2wasm(BUMP.replace("(global $next", "(global $other (mut i64) (i64.const -5))\n  (global $next"))
    assert _abi.mutable_globals(two) == ["i64", "i32"]
    assert _abi.mutable_globals(wasmtime.wat2wasm("(module (global i32 (i32.const 1)))")) == []
    main = max(_abi.core_modules(rs._packaged_component()), key=len)
    assert _abi.mutable_globals(main) == ["i32"]


def test_core_modules_are_read_from_the_component(runtime):
    modules = _abi.core_modules(rs._packaged_component())
    exports = _capi.Module(runtime._core.engine, max(modules, key=len)).exports()
    assert exports["memory"] == ("memory", False, False)
    assert exports["cabi_realloc"] == (["i32"] * 4, ["i32"])
    with pytest.raises(ValueError):
        _abi.core_modules(b"\x00asm\x01\x00\x00\x00")
    with pytest.raises(ValueError):
        _abi.core_modules(b"\x00asm\x0d\x00\x01\x00\x01\xff\xff")


SECRET = b"s3cr3t-value-that-must-not-linger"


def secret_render() -> list:
    return [b'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"password":"'
            + SECRET + b'"}}']


def test_an_idle_instance_holds_nothing_of_earlier_calls():
    runtime = rs.Runtime()
    images = runtime.idle_instance_memories()
    store = rs.RenderStore(rs.MemoryBucket(), runtime)
    ref = store.put_render("ns/app", secret_render())
    assert SECRET in store.get_render("ns/app", ref)
    assert runtime.canonical(secret_render())
    idle = runtime.idle_instance_memories()
    assert idle and not images
    for memory in idle:
        assert SECRET not in memory
        # The image right after instantiation, zeroed above it.
        image = runtime._core._idle[0].image
        assert memory[:len(image)] == image
        assert not any(memory[len(image):])


def test_instances_are_reused_and_dropped_by_the_rules():
    runtime = rs.Runtime()
    runtime.render_ref([b"{}"])
    (first,) = runtime._core._idle
    runtime.render_ref([b"{}"])
    assert runtime._core._idle == [first]
    # A WIT error is a normal return: the instance is reused.
    with pytest.raises(rs.RenderStoreError):
        runtime.render_ref([b"{"])
    assert runtime._core._idle == [first]
    # A call whose memory grew past 16 MiB leaves no instance behind.
    runtime.render_ref([b'{"d":"' + b"x" * (20 << 20) + b'"}'])
    assert runtime._core._idle == []
    # A trap (fuel) drops its instance, and the next call gets a new one.
    starved = rs.Runtime(fuel=20_000_000)
    assert starved.render_ref([]).startswith("sha256:")
    with pytest.raises(rs.RenderStoreError) as e:
        starved.render_ref([b'{"a":[' + b"1," * 4_000_000 + b'1]}'])
    assert e.value.kind == "trap" and "fuel" in e.value.message and starved._core._idle == []
    assert starved.render_ref([]).startswith("sha256:")
    assert len(starved._core._idle) == 1


def test_a_bucket_that_calls_the_runtime_gets_an_instance_of_its_own():
    runtime = rs.Runtime()

    class Reentrant(rs.MemoryBucket):
        def exists(self, key):
            self.seen = runtime.render_ref([b'{"inner":1}'])
            return super().exists(key)

    bucket = Reentrant()
    ref = rs.RenderStore(bucket, runtime).put_render("ns/app", [b'{"outer":1}'])
    assert ref == runtime.render_ref([b'{"outer":1}'])
    assert bucket.seen == runtime.render_ref([b'{"inner":1}'])
    assert len(runtime._core._idle) == 2


def test_an_interrupt_in_a_bucket_comes_through_and_drops_the_instance():
    runtime = rs.Runtime()

    class Interrupted(rs.MemoryBucket):
        def exists(self, key):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rs.RenderStore(Interrupted(), runtime).put_render("ns/app", [b'{"a":1}'])
    assert runtime._core._idle == []
    assert rs.RenderStore(rs.MemoryBucket(), runtime).put_render("ns/app", [b'{"a":1}']).startswith("sha256:")
