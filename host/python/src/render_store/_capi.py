"""wasmtime's C API (``wasmtime.h``), called through ctypes for the few things this
package does with a core module: compile it, link host functions, instantiate it in a
store with a memory cap and fuel, read its memory, and call its exports.

Why not wasmtime-py's core API, which wraps the same functions: it checks and converts
every argument of every call through Python objects, 10-100 µs a call on the machines
we measured, while a small render needs about five calls into the instance. The C API's
*unchecked* calls take the core values as one array of raw slots and cost a microsecond
or two, which is what lets a small render's call here come near the Rust host's.

The library is the one the ``wasmtime`` wheel from PyPI ships and wasmtime-py has
already loaded (loading the same file again gives the same library), so this package
still depends on that wheel alone. Only the C API's documented functions and struct
layouts are used; the layouts are those of the pinned wasmtime version (the package's
tests instantiate, call, trap and run out of fuel through every function bound here).

Unchecked calls skip the type check, so each function is looked up with its type checked
once, at load (:func:`module_exports`, :func:`module_imports`), and called with exactly
that many slots afterwards.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import weakref
from ctypes import POINTER, byref, c_bool, c_int64, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import wasmtime


class WasmtimeError(Exception):
    """wasmtime refused something: a module that does not compile or validate, a link
    that does not match, a store without fuel to set."""


class Trap(Exception):
    """The instance trapped (an ``unreachable``, an out-of-bounds access, all fuel
    consumed, a host function that failed); the message is wasmtime's."""


# --------------------------------------------------------------------------------------
# The library


def _library_path() -> Path:
    """The wasmtime library inside the installed ``wasmtime`` package: one platform
    folder of the wheel holds it."""
    name = {"darwin": "_libwasmtime.dylib", "win32": "_wasmtime.dll"}.get(sys.platform, "_libwasmtime.so")
    root = Path(wasmtime.__file__).parent
    found = sorted(root.glob(f"*/{name}"))
    if len(found) != 1:
        raise ImportError(f"expected one {name} inside the wasmtime package at {root}, found "
                          f"{len(found)}: install the pinned wasmtime wheel for this platform")
    return found[0]


_lib = ctypes.CDLL(str(_library_path()))


def _bind(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


class _Raw(ctypes.Union):
    """``wasmtime_val_raw_t``: one core value's slot in an unchecked call."""
    _fields_ = [("i32", ctypes.c_int32), ("i64", c_int64), ("v128", c_uint8 * 16)]


class Func(ctypes.Structure):
    """``wasmtime_func_t``: a function of one store."""
    _fields_ = [("store_id", c_uint64), ("private", c_void_p)]


class Memory(ctypes.Structure):
    """``wasmtime_memory_t``: a memory of one store (an 8-byte id and a 4-byte index in
    a 16-byte struct, then another 4-byte index)."""
    _fields_ = [("store_id", c_uint64), ("private1", c_uint32), ("padding", c_uint32), ("private2", c_uint32)]


class _Instance(ctypes.Structure):
    _fields_ = [("store_id", c_uint64), ("private", c_size_t)]


class _ExternOf(ctypes.Union):
    # Room for the largest case (a global, a table or a memory: 24 bytes) and more.
    _fields_ = [("func", Func), ("memory", Memory), ("room", c_uint64 * 4)]


class _Extern(ctypes.Structure):
    _fields_ = [("kind", c_uint8), ("of", _ExternOf)]


class _ByteVec(ctypes.Structure):
    _fields_ = [("size", c_size_t), ("data", POINTER(c_uint8))]


class _PtrVec(ctypes.Structure):
    """Any ``wasm_*_vec_t`` of pointers (value types, import and export types)."""
    _fields_ = [("size", c_size_t), ("data", POINTER(c_void_p))]


_EXTERN_FUNC, _EXTERN_MEMORY = 0, 3
_VALKINDS = {0: "i32", 1: "i64", 2: "f32", 3: "f64", 4: "v128"}
_VALKIND_OF = {v: k for k, v in _VALKINDS.items()}

_CALLBACK = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_void_p, POINTER(_Raw), c_size_t)

_config_new = _bind("wasm_config_new", c_void_p)
_config_consume_fuel = _bind("wasmtime_config_consume_fuel_set", None, c_void_p, c_bool)
_config_reservation = _bind("wasmtime_config_memory_reservation_set", None, c_void_p, c_uint64)
_config_guard_size = _bind("wasmtime_config_memory_guard_size_set", None, c_void_p, c_uint64)
_config_growth = _bind("wasmtime_config_memory_reservation_for_growth_set", None, c_void_p, c_uint64)
_config_may_move = _bind("wasmtime_config_memory_may_move_set", None, c_void_p, c_bool)
_engine_new = _bind("wasm_engine_new_with_config", c_void_p, c_void_p)
_engine_delete = _bind("wasm_engine_delete", None, c_void_p)
_module_new = _bind("wasmtime_module_new", c_void_p, c_void_p, c_void_p, c_size_t, POINTER(c_void_p))
_module_delete = _bind("wasmtime_module_delete", None, c_void_p)
_module_imports = _bind("wasmtime_module_imports", None, c_void_p, POINTER(_PtrVec))
_module_exports = _bind("wasmtime_module_exports", None, c_void_p, POINTER(_PtrVec))
_importtype_vec_delete = _bind("wasm_importtype_vec_delete", None, POINTER(_PtrVec))
_exporttype_vec_delete = _bind("wasm_exporttype_vec_delete", None, POINTER(_PtrVec))
_importtype_module = _bind("wasm_importtype_module", POINTER(_ByteVec), c_void_p)
_importtype_name = _bind("wasm_importtype_name", POINTER(_ByteVec), c_void_p)
_importtype_type = _bind("wasm_importtype_type", c_void_p, c_void_p)
_exporttype_name = _bind("wasm_exporttype_name", POINTER(_ByteVec), c_void_p)
_exporttype_type = _bind("wasm_exporttype_type", c_void_p, c_void_p)
_externtype_kind = _bind("wasm_externtype_kind", c_uint8, c_void_p)
_externtype_as_functype = _bind("wasm_externtype_as_functype_const", c_void_p, c_void_p)
_externtype_as_memorytype = _bind("wasm_externtype_as_memorytype_const", c_void_p, c_void_p)
_memorytype_is64 = _bind("wasmtime_memorytype_is64", c_bool, c_void_p)
_memorytype_isshared = _bind("wasmtime_memorytype_isshared", c_bool, c_void_p)
_functype_new = _bind("wasm_functype_new", c_void_p, POINTER(_PtrVec), POINTER(_PtrVec))
_functype_delete = _bind("wasm_functype_delete", None, c_void_p)
_functype_params = _bind("wasm_functype_params", POINTER(_PtrVec), c_void_p)
_functype_results = _bind("wasm_functype_results", POINTER(_PtrVec), c_void_p)
_valtype_new = _bind("wasm_valtype_new", c_void_p, c_uint8)
_valtype_kind = _bind("wasm_valtype_kind", c_uint8, c_void_p)
_valtype_vec_new = _bind("wasm_valtype_vec_new", None, POINTER(_PtrVec), c_size_t, POINTER(c_void_p))
_store_new = _bind("wasmtime_store_new", c_void_p, c_void_p, c_void_p, c_void_p)
_store_delete = _bind("wasmtime_store_delete", None, c_void_p)
_store_context = _bind("wasmtime_store_context", c_void_p, c_void_p)
_store_limiter = _bind("wasmtime_store_limiter", None, c_void_p, c_int64, c_int64, c_int64, c_int64, c_int64)
_set_fuel = _bind("wasmtime_context_set_fuel", c_void_p, c_void_p, c_uint64)
_linker_new = _bind("wasmtime_linker_new", c_void_p, c_void_p)
_linker_delete = _bind("wasmtime_linker_delete", None, c_void_p)
_linker_define_unchecked = _bind("wasmtime_linker_define_func_unchecked", c_void_p, c_void_p, c_void_p, c_size_t,
                                 c_void_p, c_size_t, c_void_p, _CALLBACK, c_void_p, c_void_p)
_linker_instantiate_pre = _bind("wasmtime_linker_instantiate_pre", c_void_p, c_void_p, c_void_p, POINTER(c_void_p))
_pre_delete = _bind("wasmtime_instance_pre_delete", None, c_void_p)
_pre_instantiate = _bind("wasmtime_instance_pre_instantiate", c_void_p, c_void_p, c_void_p,
                         POINTER(_Instance), POINTER(c_void_p))
_export_get = _bind("wasmtime_instance_export_get", c_bool, c_void_p, POINTER(_Instance), c_void_p, c_size_t,
                    POINTER(_Extern))
_call_unchecked = _bind("wasmtime_func_call_unchecked", c_void_p, c_void_p, c_void_p, c_void_p, c_size_t,
                        POINTER(c_void_p))
_caller_context = _bind("wasmtime_caller_context", c_void_p, c_void_p)
_memory_data = _bind("wasmtime_memory_data", c_void_p, c_void_p, c_void_p)
_memory_data_size = _bind("wasmtime_memory_data_size", c_size_t, c_void_p, c_void_p)
_trap_new = _bind("wasmtime_trap_new", c_void_p, c_void_p, c_size_t)
_trap_message = _bind("wasm_trap_message", None, c_void_p, POINTER(_ByteVec))
_trap_delete = _bind("wasm_trap_delete", None, c_void_p)
_error_message = _bind("wasmtime_error_message", None, c_void_p, POINTER(_ByteVec))
_error_delete = _bind("wasmtime_error_delete", None, c_void_p)
_byte_vec_delete = _bind("wasm_byte_vec_delete", None, POINTER(_ByteVec))


def _text(vec: _ByteVec) -> str:
    raw = ctypes.string_at(vec.data, vec.size) if vec.size else b""
    return raw.rstrip(b"\0").decode("utf-8", "replace")


def _take_message(ptr: int, message: Any, delete: Any) -> str:
    """The message of a ``wasmtime_error_t`` or ``wasm_trap_t``, which is then freed."""
    vec = _ByteVec()
    message(ptr, byref(vec))
    text = _text(vec)
    _byte_vec_delete(byref(vec))
    delete(ptr)
    return text


def _raise_error(error: Optional[int]) -> None:
    """Raises a ``wasmtime_error_t`` as :class:`WasmtimeError` (and frees it)."""
    if error:
        raise WasmtimeError(_take_message(error, _error_message, _error_delete))


def _raise_trap(trap: int) -> None:
    raise Trap(_take_message(trap, _trap_message, _trap_delete))


# --------------------------------------------------------------------------------------
# Engine, module, store


class Engine:
    """A wasmtime engine that meters fuel (each call gets a budget).

    Its memories never move: each reserves the whole 32-bit address space up front and
    grows in place (wasmtime's default on 64-bit machines, made a promise here), so an
    address into a memory stays good for the memory's life (``fixed_memories``).
    ``moving_memories`` makes every memory move when it grows instead (no reservation,
    no guard): slower, and only for tests that show the host never writes through an
    address taken before the memory grew."""

    def __init__(self, *, moving_memories: bool = False) -> None:
        config = _config_new()
        _config_consume_fuel(config, True)
        if moving_memories:
            _config_reservation(config, 0)
            _config_guard_size(config, 0)
            _config_growth(config, 0)
            _config_may_move(config, True)
        else:
            _config_reservation(config, 1 << 32)
            _config_may_move(config, False)
        self.fixed_memories = not moving_memories
        self.ptr: int = _engine_new(config)  # takes the config
        if not self.ptr:
            raise WasmtimeError("wasmtime could not make an engine")
        weakref.finalize(self, _engine_delete, self.ptr)


FuncSignature = Tuple[List[str], List[str]]


def _functype_signature(functype: int) -> FuncSignature:
    def kinds(vec: Any) -> List[str]:
        v = vec.contents
        return [_VALKINDS.get(_valtype_kind(v.data[i]), "reference") for i in range(v.size)]
    return kinds(_functype_params(functype)), kinds(_functype_results(functype))


def _describe(externtype: int) -> Any:
    """A function's signature, ``("memory", is64, shared)``, or the kind's number."""
    kind = _externtype_kind(externtype)
    if kind == _EXTERN_FUNC:
        return _functype_signature(_externtype_as_functype(externtype))
    if kind == _EXTERN_MEMORY:
        memorytype = _externtype_as_memorytype(externtype)
        return ("memory", bool(_memorytype_is64(memorytype)), bool(_memorytype_isshared(memorytype)))
    return kind


class Module:
    """A compiled core module."""

    def __init__(self, engine: Engine, binary: bytes):
        self.engine = engine
        ptr = c_void_p()
        data = bytes(binary)  # ctypes passes a bytes object's own buffer
        _raise_error(_module_new(engine.ptr, data, len(data), byref(ptr)))
        self.ptr: int = ptr.value  # type: ignore[assignment]
        weakref.finalize(self, _module_delete, self.ptr)

    def exports(self) -> Dict[str, Any]:
        """Each export's name and what it is: a function's ``(params, results)`` as type
        names, ``("memory", is64, shared)``, or wasm's number of another kind."""
        vec = _PtrVec()
        _module_exports(self.ptr, byref(vec))
        try:
            out = {}
            for i in range(vec.size):
                out[_text(_exporttype_name(vec.data[i]).contents)] = _describe(_exporttype_type(vec.data[i]))
            return out
        finally:
            _exporttype_vec_delete(byref(vec))

    def imports(self) -> Dict[Tuple[str, str], Any]:
        """Each import's ``(module, name)`` and what it is, as :meth:`exports` gives it."""
        vec = _PtrVec()
        _module_imports(self.ptr, byref(vec))
        try:
            out = {}
            for i in range(vec.size):
                t = vec.data[i]
                key = (_text(_importtype_module(t).contents), _text(_importtype_name(t).contents))
                out[key] = _describe(_importtype_type(t))
            return out
        finally:
            _importtype_vec_delete(byref(vec))


class Store:
    """A store of its own for one instance: its memories capped at ``memory_bytes``.
    ``context`` is the pointer every call into the store takes."""

    def __init__(self, engine: Engine, memory_bytes: int):
        self.engine = engine
        self.ptr: int = _store_new(engine.ptr, None, None)
        if not self.ptr:
            raise WasmtimeError("wasmtime could not make a store")
        weakref.finalize(self, _store_delete, self.ptr)
        self.context: int = _store_context(self.ptr)
        # -1: wasmtime's default for tables, instances and memories.
        _store_limiter(self.ptr, memory_bytes, -1, -1, -1, -1)

    def set_fuel(self, fuel: int) -> None:
        _raise_error(_set_fuel(self.context, fuel))


# --------------------------------------------------------------------------------------
# Host functions and calls


#: A host function: given the calling store's context and the raw slots (its arguments
#: first, then room for its results), it writes its results into the slots.
HostFunction = Callable[[int, Any], None]

_raised = threading.local()


def _trampoline(fn: HostFunction) -> Any:
    def callback(_env: Any, caller: int, slots: Any, _count: int) -> Optional[int]:
        try:
            fn(_caller_context(caller), slots)
            return None
        except BaseException as e:  # noqa: B902 - raised again by the call() that ran this
            # A trap unwinds the instance back to the call() that ran it, which raises
            # this exception in place of the trap.
            _raised.error = e
            message = f"a host function raised {type(e).__name__}".encode()
            return _trap_new(message, len(message))
    return _CALLBACK(callback)


class Linker:
    """Host functions by module and name, then pre-linked to a module for instantiating
    it again and again."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.ptr: int = _linker_new(engine.ptr)
        weakref.finalize(self, _linker_delete, self.ptr)
        self._callbacks: List[Any] = []  # ctypes frees a callback's thunk with its object

    def define(self, module: str, name: str, signature: FuncSignature, fn: HostFunction) -> None:
        params, results = signature
        vecs = []
        for kinds in (params, results):
            types = (c_void_p * max(len(kinds), 1))(*[_valtype_new(_VALKIND_OF[k]) for k in kinds])
            vec = _PtrVec()
            _valtype_vec_new(byref(vec), len(kinds), types)  # takes the value types
            vecs.append(vec)
        functype = _functype_new(byref(vecs[0]), byref(vecs[1]))  # takes the vectors
        callback = _trampoline(fn)
        self._callbacks.append(callback)
        m, n = module.encode(), name.encode()
        try:
            _raise_error(_linker_define_unchecked(self.ptr, m, len(m), n, len(n), functype, callback, None, None))
        finally:
            _functype_delete(functype)

    def instantiate_pre(self, module: Module) -> "InstancePre":
        return InstancePre(self, module)


class InstancePre:
    """A module with its imports resolved, instantiated cheaply into any store."""

    def __init__(self, linker: Linker, module: Module):
        self.linker, self.module = linker, module
        ptr = c_void_p()
        _raise_error(_linker_instantiate_pre(linker.ptr, module.ptr, byref(ptr)))
        self.ptr: int = ptr.value  # type: ignore[assignment]
        weakref.finalize(self, _pre_delete, self.ptr)

    def instantiate(self, store: Store) -> "Instance":
        instance = _Instance()
        trap = c_void_p()
        _raise_error(_pre_instantiate(self.ptr, store.context, byref(instance), byref(trap)))
        if trap.value:
            _raise_trap(trap.value)
        return Instance(store, instance, self)


class Instance:
    """An instance in its store; exports are looked up by name. It keeps what made it,
    whose host functions' thunks it calls, alive."""

    def __init__(self, store: Store, instance: _Instance, pre: InstancePre):
        self.store = store
        self.pre = pre
        self._instance = instance

    def _export(self, name: str, kind: int, what: str) -> _Extern:
        out = _Extern()
        n = name.encode()
        if not _export_get(self.store.context, byref(self._instance), n, len(n), byref(out)) or out.kind != kind:
            raise WasmtimeError(f"the instance exports no {what} named {name}")
        return out

    def func(self, name: str) -> Func:
        return self._export(name, _EXTERN_FUNC, "function").of.func

    def memory(self, name: str) -> Memory:
        return self._export(name, _EXTERN_MEMORY, "memory").of.memory


def slots(count: int) -> Any:
    """Raw slots for an unchecked call: at least one, for a function of neither."""
    return (_Raw * max(count, 1))()


def call(context: int, func: Func, args: Any) -> None:
    """Calls ``func`` in the store of ``context`` with the raw slots ``args`` (as many
    as the larger of its parameters and results: the parameters first, and the results
    written from the first slot on).
    Raises :class:`Trap` when the instance traps, or what a host function it called
    raised."""
    trap = c_void_p()
    error = _call_unchecked(context, ctypes.addressof(func), ctypes.addressof(args), len(args), byref(trap))
    if error or trap.value:
        _failed(error, trap.value)


class BoundCall:
    """:func:`call` of one function in one store, with its own raw slots, ready to be
    made again and again (a canonical ABI call crosses into the instance several times:
    each allocation is one). It takes the addresses :func:`call` works out each time
    once, which halves the cost of a crossing as seen from Python (3.1 to 1.8 µs for
    ``cabi_realloc``). ``slots`` holds the arguments before a call and the results
    after; ``slot[i]`` is slot ``i`` itself."""

    __slots__ = ("context", "slots", "slot", "_func", "_func_address", "_slots_address", "_count",
                 "_trap", "_trap_ref")

    def __init__(self, context: int, func: Func, count: int):
        self.context = context
        self.slots = slots(count)
        self.slot = tuple(self.slots)
        self._func = func  # the address below points into it
        self._func_address = ctypes.addressof(func)
        self._slots_address = ctypes.addressof(self.slots)
        self._count = len(self.slots)
        self._trap = c_void_p()
        self._trap_ref = byref(self._trap)

    def __call__(self) -> None:
        """Calls the function with the slots as they are; raises as :func:`call` does."""
        error = _call_unchecked(self.context, self._func_address, self._slots_address, self._count,
                                self._trap_ref)
        if error or self._trap.value:
            trap, self._trap.value = self._trap.value, None
            _failed(error, trap)


def _failed(error: Optional[int], trap: Optional[int]) -> None:
    """Raises what a call that returned ``error`` or ``trap`` stands for (and frees
    them): a host function's exception (its trap unwound the instance to the call;
    wasmtime hands such a trap back as an error), else the trap or the error."""
    raised = getattr(_raised, "error", None)
    _raised.error = None
    if raised is not None:
        if trap:
            _trap_delete(trap)
        if error:
            _error_delete(error)
        raise raised
    if trap:
        if error:
            _error_delete(error)
        _raise_trap(trap)
    _raise_error(error)


def memory_size(context: int, memory: Memory) -> int:
    """The size of ``memory`` in bytes now."""
    return _memory_data_size(context, ctypes.addressof(memory))


def memory_data(context: int, memory: Memory) -> Tuple[int, int]:
    """The address and size of ``memory`` now (growing it moves and resizes it)."""
    ref = ctypes.addressof(memory)
    return _memory_data(context, ref), _memory_data_size(context, ref)
