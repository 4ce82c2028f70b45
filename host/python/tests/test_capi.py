"""wasmtime's C API as this package binds it (``render_store._capi``): modules compile or
say why, host functions link by signature, calls pass values through raw slots, and
traps, fuel, the memory cap and a host function's exception come back as they should."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from render_store import _capi

HOST = """(module
  (import "host" "twice" (func $twice (param i32 i64) (result i64)))
  (memory (export "memory") 1 3)
  (func (export "call-host") (param i32 i64) (result i64)
    (call $twice (local.get 0) (local.get 1)))
  (func (export "spin") (loop br 0))
  (func (export "boom") unreachable)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))"""


def run(wat: str, twice, *, fuel: int = 1_000_000, memory_bytes: int = 1 << 20):
    engine = _capi.Engine()
    module = _capi.Module(engine, wasmtime.wat2wasm(wat))
    linker = _capi.Linker(engine)
    linker.define("host", "twice", (["i32", "i64"], ["i64"]), twice)
    store = _capi.Store(engine, memory_bytes)
    store.set_fuel(fuel)
    return store, linker.instantiate_pre(module).instantiate(store)


def doubling(context, slots):
    slots[0].i64 = slots[0].i32 * 2 + slots[1].i64


def test_the_library_is_the_wasmtime_wheels():
    path = _capi._library_path()
    assert path.is_file() and Path(wasmtime.__file__).parent in path.parents


def test_values_go_in_and_out_through_raw_slots_and_host_functions():
    store, instance = run(HOST, doubling)
    slots = _capi.slots(2)
    slots[0].i32, slots[1].i64 = -3, 1 << 40
    _capi.call(store.context, instance.func("call-host"), slots)
    assert slots[0].i64 == (1 << 40) - 6


def test_a_host_functions_exception_comes_back_from_the_call():
    class Refused(Exception):
        pass

    def refuse(context, slots):
        raise Refused("no")

    store, instance = run(HOST, refuse)
    with pytest.raises(Refused, match="no"):
        _capi.call(store.context, instance.func("call-host"), _capi.slots(2))
    # Nothing of it is left for the next trap to pick up.
    with pytest.raises(_capi.Trap, match="unreachable"):
        _capi.call(store.context, instance.func("boom"), _capi.slots(0))


def test_a_bound_call_runs_again_after_a_trap_and_an_exception():
    class Refused(Exception):
        pass

    def answer(context, slots):
        if slots[0].i32 < 0:
            raise Refused("no")
        doubling(context, slots)

    store, instance = run(HOST, answer)
    call = _capi.BoundCall(store.context, instance.func("call-host"), 2)
    for _ in range(2):  # each failure is freed and forgotten: the call after it succeeds
        store.set_fuel(0)
        call.slot[0].i32, call.slot[1].i64 = 4, 1
        with pytest.raises(_capi.Trap, match="fuel"):
            call()
        store.set_fuel(1_000_000)
        call.slot[0].i32 = -1
        with pytest.raises(Refused, match="no"):
            call()
        call.slot[0].i32, call.slot[1].i64 = 4, 1
        call()
        assert call.slot[0].i64 == 9


def test_a_host_function_may_call_another_instance():
    inner_store, inner = run(HOST, doubling)

    def nested(context, slots):
        inner_slots = _capi.slots(2)
        inner_slots[0].i32, inner_slots[1].i64 = slots[0].i32, slots[1].i64
        _capi.call(inner_store.context, inner.func("call-host"), inner_slots)
        slots[0].i64 = inner_slots[0].i64 + 1

    store, outer = run(HOST, nested)
    slots = _capi.slots(2)
    slots[0].i32, slots[1].i64 = 5, 7
    _capi.call(store.context, outer.func("call-host"), slots)
    assert slots[0].i64 == 18


def test_traps_fuel_and_the_memory_cap():
    store, instance = run(HOST, doubling, fuel=10_000, memory_bytes=2 << 16)
    with pytest.raises(_capi.Trap, match="fuel"):
        _capi.call(store.context, instance.func("spin"), _capi.slots(0))
    store.set_fuel(10_000)
    grow = _capi.slots(1)
    grow[0].i32 = 1
    _capi.call(store.context, instance.func("grow"), grow)
    assert grow[0].i32 == 1  # the old size in pages: 64 KiB to 128 KiB is allowed
    grow[0].i32 = 1
    _capi.call(store.context, instance.func("grow"), grow)
    assert grow[0].i32 == -1  # past the store's cap, below the module's maximum
    assert _capi.memory_data(store.context, instance.memory("memory"))[1] == 2 << 16


def test_modules_say_what_they_export_and_import():
    module = _capi.Module(_capi.Engine(), wasmtime.wat2wasm(HOST))
    assert module.imports() == {("host", "twice"): (["i32", "i64"], ["i64"])}
    exports = module.exports()
    assert exports["memory"] == ("memory", False, False)
    assert exports["call-host"] == (["i32", "i64"], ["i64"])
    assert exports["spin"] == ([], [])


def test_what_wasmtime_refuses_is_an_error_that_says_why():
    engine = _capi.Engine()
    with pytest.raises(_capi.WasmtimeError):
        _capi.Module(engine, b"\x00asm\x01\x00\x00\x00\xff")
    module = _capi.Module(engine, wasmtime.wat2wasm(HOST))
    linker = _capi.Linker(engine)
    linker.define("host", "twice", (["i32"], ["i64"]), doubling)
    with pytest.raises(_capi.WasmtimeError, match="twice"):
        linker.instantiate_pre(module)
    store, instance = run(HOST, doubling)
    with pytest.raises(_capi.WasmtimeError, match="no function named memory"):
        instance.func("memory")
