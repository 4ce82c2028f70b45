"""The one JSON encoding of WIT values (docs/json.md), in Python: what the generated types
of :mod:`render_store.wit` and the generated calls (``_api.py``) are made of.

Every WIT type has a codec: ``_wit_encode(value, at)`` writes a Python value as the JSON
the C ABI's ``rs_call_*`` entry points take, and ``_wit_decode(value, at)`` reads their
JSON back; ``at`` names where the value is, for the error. A record class, a variant
class and an enum class are their own codecs; the primitive and anonymous types have the
codecs below. A value that is not what its type asks raises ``TypeError`` (a Python value
of the wrong type) or ``ValueError`` (a value out of range, a JSON of the wrong shape, an
unknown key), naming where it is and what was expected there:
``blame_object argument secrets: expected one of masked, shown, not 'all'``.

The encoding: a record is an object of its fields by their camelCase names (a field of
an ``option`` type may be left out); a variant ``{"tag": case, "val": payload}`` (no
``val`` for a case without one); an enum its case's name; an option ``null`` or its
value; a result ``{"tag": "ok" | "err", "val": ...}``; a tuple an array; ``list<u8>`` a
standard base64 string; other lists arrays; integers numbers within their type's range.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
from dataclasses import dataclass
from typing import (Any, ClassVar, Dict, Generic, Iterable, Optional, Protocol, Sequence, Tuple,
                    Type, TypeVar, Union)

T = TypeVar("T")
E = TypeVar("E")
R = TypeVar("R", bound="Record")
V = TypeVar("V", bound="Variant")
N = TypeVar("N", bound="WitEnum")


class Codec(Protocol):
    """How values of one WIT type are written in JSON and read back."""

    def _wit_encode(self, value: Any, at: str) -> Any:
        ...

    def _wit_decode(self, value: Any, at: str) -> Any:
        ...


#: What a codec may be: a codec object or class, or an enum class (which mypy does not
#: match with the protocol).
CodecLike = Union[Codec, Type["WitEnum"]]


class _Named(Protocol):
    @property
    def namespace(self) -> str:
        ...

    @property
    def name(self) -> str:
        ...


class _Instant(Protocol):
    @property
    def seconds(self) -> int:
        ...

    @property
    def nanoseconds(self) -> int:
        ...


#: A release as a call takes it: ``"namespace/name"``, a ``(namespace, name)`` tuple, or
#: an object with ``namespace`` and ``name`` (``render_store.Release``,
#: ``render_store.wit.Release``).
ReleaseLike = Union[str, Tuple[str, str], _Named]
#: A ``sync-time`` as a call takes it: an object with ``seconds`` and ``nanoseconds``
#: (``render_store.SyncTime``, ``render_store.wit.SyncTime``).
SyncTimeLike = _Instant
#: ``list<u8>`` as a call takes it: bytes, a bytearray, a memoryview of bytes, or a str
#: (its UTF-8 bytes).
BytesLike = Union[bytes, bytearray, memoryview, str]


def shown(value: Any) -> str:
    """A value as an error names it: short, and its type when it is not JSON's."""
    if value is None or isinstance(value, (bool, int, float, str, list, dict)):
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _wrong_type(at: str, expected: str, value: Any) -> TypeError:
    return TypeError(f"{at}: expected {expected}, not {shown(value)}")


def _wrong_value(at: str, expected: str, value: Any) -> ValueError:
    return ValueError(f"{at}: expected {expected}, not {shown(value)}")


# --------------------------------------------------------------------------------------
# Primitive types


class _String:
    def _wit_encode(self, value: Any, at: str) -> Any:
        if not isinstance(value, str):
            raise _wrong_type(at, "a str", value)
        return value

    def _wit_decode(self, value: Any, at: str) -> Any:
        if not isinstance(value, str):
            raise _wrong_value(at, "a string", value)
        return value


class _Bool:
    def _wit_encode(self, value: Any, at: str) -> Any:
        # Only True and False: a truthy "no" is never taken for True.
        if not isinstance(value, bool):
            raise _wrong_type(at, "True or False", value)
        return value

    def _wit_decode(self, value: Any, at: str) -> Any:
        if not isinstance(value, bool):
            raise _wrong_value(at, "true or false", value)
        return value


class _Integer:
    def __init__(self, name: str, low: int, high: int):
        self.expected = f"a whole number from {low} to {high} (a {name})"
        self.low, self.high = low, high

    def _wit_encode(self, value: Any, at: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong_type(at, self.expected, value)
        if not self.low <= value <= self.high:
            raise _wrong_value(at, self.expected, value)
        return int(value)

    def _wit_decode(self, value: Any, at: str) -> Any:
        if (isinstance(value, bool) or not isinstance(value, int)
                or not self.low <= value <= self.high):
            raise _wrong_value(at, self.expected, value)
        return value


class _Bytes:
    def _wit_encode(self, value: Any, at: str) -> Any:
        if isinstance(value, str):
            data = value.encode("utf-8")
        elif isinstance(value, (bytes, bytearray)):
            data = bytes(value)
        elif isinstance(value, memoryview):
            data = value.cast("B").tobytes() if value.ndim <= 1 else value.tobytes()
        else:
            raise _wrong_type(at, "bytes, a bytearray, a memoryview or a str", value)
        return base64.b64encode(data).decode("ascii")

    def _wit_decode(self, value: Any, at: str) -> Any:
        if not isinstance(value, str):
            raise _wrong_value(at, "a base64 string of bytes", value)
        try:
            return base64.b64decode(value.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise _wrong_value(at, "a base64 string of bytes", value) from None


class _Nothing:
    """The answer of a call that answers nothing (``result<_, error>``): ``null``."""

    def _wit_encode(self, value: Any, at: str) -> Any:
        if value is not None:
            raise _wrong_type(at, "None", value)
        return None

    def _wit_decode(self, value: Any, at: str) -> Any:
        if value is not None:
            raise _wrong_value(at, "null", value)
        return None


STRING = _String()
BOOL = _Bool()
U8 = _Integer("u8", 0, (1 << 8) - 1)
U16 = _Integer("u16", 0, (1 << 16) - 1)
U32 = _Integer("u32", 0, (1 << 32) - 1)
U64 = _Integer("u64", 0, (1 << 64) - 1)
S8 = _Integer("s8", -(1 << 7), (1 << 7) - 1)
S16 = _Integer("s16", -(1 << 15), (1 << 15) - 1)
S32 = _Integer("s32", -(1 << 31), (1 << 31) - 1)
S64 = _Integer("s64", -(1 << 63), (1 << 63) - 1)
BYTES = _Bytes()
NOTHING = _Nothing()


# --------------------------------------------------------------------------------------
# Anonymous types


class ListOf:
    """``list<T>``: a list (any iterable but a str or bytes when given), an array in
    JSON."""

    def __init__(self, item: CodecLike):
        self.item = item

    def _wit_encode(self, value: Any, at: str) -> Any:
        if (isinstance(value, (str, bytes, bytearray, memoryview, dict))
                or not isinstance(value, Iterable)):
            raise _wrong_type(at, "a list", value)
        item = self.item
        return [item._wit_encode(v, f"{at}[{i}]") for i, v in enumerate(value)]

    def _wit_decode(self, value: Any, at: str) -> Any:
        if not isinstance(value, list):
            raise _wrong_value(at, "an array", value)
        item = self.item
        return [item._wit_decode(v, f"{at}[{i}]") for i, v in enumerate(value)]


class OptionOf:
    """``option<T>``: ``None`` or the value, ``null`` or the value in JSON."""

    def __init__(self, inner: CodecLike):
        self.inner = inner

    def _wit_encode(self, value: Any, at: str) -> Any:
        return None if value is None else self.inner._wit_encode(value, at)

    def _wit_decode(self, value: Any, at: str) -> Any:
        return None if value is None else self.inner._wit_decode(value, at)


class TupleOf:
    """``tuple<...>``: a tuple, an array in JSON."""

    def __init__(self, *members: CodecLike):
        self.members = members

    def _wit_encode(self, value: Any, at: str) -> Any:
        n = len(self.members)
        if not isinstance(value, (tuple, list)) or len(value) != n:
            raise _wrong_type(at, f"a tuple of {n}", value)
        return [m._wit_encode(v, f"{at}[{i}]")
                for i, (m, v) in enumerate(zip(self.members, value))]

    def _wit_decode(self, value: Any, at: str) -> Any:
        n = len(self.members)
        if not isinstance(value, list) or len(value) != n:
            raise _wrong_value(at, f"an array of {n}", value)
        return tuple(m._wit_decode(v, f"{at}[{i}]")
                     for i, (m, v) in enumerate(zip(self.members, value)))


@dataclass(frozen=True)
class Ok(Generic[T]):
    """A ``result``'s ``ok`` side; ``value`` is ``None`` for ``_``."""

    value: T
    tag: ClassVar[str] = "ok"


@dataclass(frozen=True)
class Err(Generic[E]):
    """A ``result``'s ``err`` side; ``value`` is ``None`` for ``_``."""

    value: E
    tag: ClassVar[str] = "err"


#: A WIT ``result<T, E>``: :class:`Ok` or :class:`Err`.
Result = Union[Ok[T], Err[E]]


def _tagged(value: Any, at: str) -> Tuple[str, Any]:
    """The tag and the payload (``None`` when absent) of ``{"tag", "val"}``; nothing
    else may be in it."""
    if not isinstance(value, dict):
        raise _wrong_value(at, 'an object {"tag", "val"}', value)
    for key in value:
        if key not in ("tag", "val"):
            raise ValueError(f"{at}.{key}: no such field; the fields are tag, val")
    tag = value.get("tag")
    if not isinstance(tag, str):
        raise _wrong_value(f"{at}.tag", "a string", tag)
    return tag, value.get("val")


class ResultOf:
    """``result<T, E>``: :class:`Ok` or :class:`Err`, ``{"tag": "ok" | "err", "val"}``
    in JSON (no ``val`` for ``_``)."""

    def __init__(self, ok: Optional[CodecLike], err: Optional[CodecLike]):
        self.ok, self.err = ok, err

    def _wit_encode(self, value: Any, at: str) -> Any:
        if isinstance(value, Ok):
            side = self.ok
        elif isinstance(value, Err):
            side = self.err
        else:
            raise _wrong_type(at, "Ok(...) or Err(...)", value)
        if side is None:
            if value.value is not None:
                raise _wrong_type(f"{at}.value", "None", value.value)
            return {"tag": value.tag}
        return {"tag": value.tag, "val": side._wit_encode(value.value, f"{at}.value")}

    def _wit_decode(self, value: Any, at: str) -> Any:
        tag, val = _tagged(value, at)
        if tag == "ok":
            return Ok(None if self.ok is None else self.ok._wit_decode(val, f"{at}.val"))
        if tag == "err":
            return Err(None if self.err is None else self.err._wit_decode(val, f"{at}.val"))
        raise _wrong_value(f"{at}.tag", "ok or err", tag)


# --------------------------------------------------------------------------------------
# Declared types: records, variants and enums


class Record:
    """A WIT record: a frozen dataclass whose fields are the record's, in snake_case.

    A record given to a call may be any object with those attributes (the package's own
    ``Release``, ``SyncTime``, ``NewEntry``, ... among them)."""

    #: Each field: its attribute, its JSON key and its codec (set with :func:`fields`).
    _wit_fields: ClassVar[Tuple[Tuple[str, str, CodecLike], ...]] = ()
    _wit_keys: ClassVar[Tuple[str, ...]] = ()

    def to_json(self) -> Dict[str, Any]:
        """The record's JSON (docs/json.md): its fields by their camelCase names."""
        encoded: Dict[str, Any] = type(self)._wit_encode(self, type(self).__name__)
        return encoded

    @classmethod
    def from_json(cls: Type[R], value: Any, at: str = "value") -> R:
        """The record a JSON value encodes; ``ValueError`` naming where it is not."""
        decoded: R = cls._wit_decode(value, at)
        return decoded

    @classmethod
    def _wit_encode(cls, value: Any, at: str) -> Any:
        out: Dict[str, Any] = {}
        for attribute, key, codec in cls._wit_fields:
            try:
                item = getattr(value, attribute)
            except AttributeError:
                raise TypeError(f"{at}: expected a {cls.__name__} (or an object with its fields), "
                                f"not {shown(value)}, which has no {attribute}") from None
            out[key] = codec._wit_encode(item, f"{at}.{attribute}")
        return out

    @classmethod
    def _wit_decode(cls, value: Any, at: str) -> Any:
        if not isinstance(value, dict):
            raise _wrong_value(at, f"an object ({cls.__name__})", value)
        keys = cls._wit_keys
        for key in value:
            if key not in keys:
                raise ValueError(f"{at}.{key}: no such field; the fields are {', '.join(keys)}")
        # A missing field reads as null: an option's None, an error for any other type.
        return cls(**{attribute: codec._wit_decode(value.get(key), f"{at}.{key}")
                      for attribute, key, codec in cls._wit_fields})


def fields(cls: Type[Record], *table: Tuple[str, str, CodecLike]) -> None:
    """Gives a record class its fields' attributes, JSON keys and codecs."""
    cls._wit_fields = tuple(table)
    cls._wit_keys = tuple(key for _, key, _ in table)


def release_parts(value: Any, at: str) -> Any:
    """A release given as ``"namespace/name"`` (split at the first ``/``) or as a
    ``(namespace, name)`` tuple, as an object with ``namespace`` and ``name``; any other
    value as it is."""
    if isinstance(value, str):
        if "/" not in value:
            raise ValueError(f"{at}: expected NAMESPACE/NAME, not {shown(value)}")
        namespace, name = value.split("/", 1)
        return _Parts(namespace, name)
    if isinstance(value, tuple):
        if len(value) != 2:
            raise _wrong_type(at, "a (namespace, name) tuple", value)
        return _Parts(*value)
    return value


@dataclass(frozen=True)
class _Parts:
    namespace: Any
    name: Any


class Variant:
    """A WIT variant: each case is a frozen dataclass subclassing the variant's class,
    ``tag`` the case's name and ``value`` its payload (a case without one has none)."""

    #: The WIT name of the case.
    tag: ClassVar[str] = ""
    #: Each case's class, by tag (set with :func:`cases` on the variant's class).
    _wit_cases: ClassVar[Dict[str, Type["Variant"]]] = {}
    #: The codec of the case's payload; ``None`` for a case without one.
    _wit_payload: ClassVar[Optional[CodecLike]] = None

    def to_json(self) -> Dict[str, Any]:
        """The case's JSON (docs/json.md): ``{"tag": case, "val": payload}``."""
        encoded: Dict[str, Any] = type(self)._wit_encode(self, type(self).__name__)
        return encoded

    @classmethod
    def from_json(cls: Type[V], value: Any, at: str = "value") -> V:
        """The case a JSON value encodes; ``ValueError`` naming where it is not."""
        decoded: V = cls._wit_decode(value, at)
        return decoded

    @classmethod
    def _wit_encode(cls, value: Any, at: str) -> Any:
        if not isinstance(value, cls) or type(value).tag not in cls._wit_cases:
            cases = ", ".join(c.__name__ for c in cls._wit_cases.values())
            raise _wrong_type(at, f"a {cls.__name__}: one of {cases}", value)
        payload = type(value)._wit_payload
        if payload is None:
            return {"tag": value.tag}
        val = payload._wit_encode(getattr(value, "value"), f"{at}.value")
        return {"tag": value.tag, "val": val}

    @classmethod
    def _wit_decode(cls, value: Any, at: str) -> Any:
        tag, val = _tagged(value, at)
        case = cls._wit_cases.get(tag)
        if case is None or not issubclass(case, cls):
            tags = ", ".join(t for t, c in cls._wit_cases.items() if issubclass(c, cls))
            raise _wrong_value(f"{at}.tag", f"one of {tags}", tag)
        payload = case._wit_payload
        if payload is None:
            if val is not None:
                raise _wrong_value(f"{at}.val", "no value (the case has none)", val)
            return case()
        return case(payload._wit_decode(val, f"{at}.val"))  # type: ignore[call-arg]


def cases(cls: Type[Variant], *table: Tuple[Type[Variant], Optional[CodecLike]]) -> None:
    """Gives a variant class its cases' classes and their payloads' codecs."""
    cls._wit_cases = {case.tag: case for case, _ in table}
    for case, payload in table:
        case._wit_payload = payload


class WitEnum(str, enum.Enum):
    """A WIT enum: its members' values are the WIT case names. A call takes a member or
    the case name."""

    def to_json(self) -> str:
        """The case's JSON: its name."""
        return str(self.value)

    @classmethod
    def from_json(cls: Type[N], value: Any, at: str = "value") -> N:
        """The case a JSON string names; ``ValueError`` naming where it is not."""
        decoded: N = cls._wit_decode(value, at)
        return decoded

    @classmethod
    def _wit_names(cls) -> str:
        return ", ".join(str(m.value) for m in cls)

    @classmethod
    def _wit_encode(cls, value: Any, at: str) -> Any:
        if not isinstance(value, str):
            raise _wrong_type(at, f"a {cls.__name__} or one of {cls._wit_names()}", value)
        try:
            return str(cls(value).value)
        except ValueError:
            raise _wrong_value(at, f"one of {cls._wit_names()}", value) from None

    @classmethod
    def _wit_decode(cls, value: Any, at: str) -> Any:
        try:
            return cls(value)
        except (ValueError, TypeError):
            raise _wrong_value(at, f"one of {cls._wit_names()}", value) from None


# --------------------------------------------------------------------------------------
# Calls


class Call(Generic[T]):
    """One export, as the C ABI's generated entry point ``c_name`` takes its arguments
    (a JSON object of its parameters by their camelCase names) and gives its answer."""

    def __init__(self, c_name: str, python: str, params: Sequence[Tuple[str, str, CodecLike]],
                 answer: CodecLike):
        self.c_name = c_name
        self.python = python
        self.params = tuple(params)
        self.answer_codec = answer

    def arguments(self, values: Sequence[Any]) -> bytes:
        """The arguments' JSON, UTF-8; ``TypeError`` or ``ValueError`` naming the
        argument that is not what its type asks."""
        args = {key: codec._wit_encode(value, f"{self.python} argument {name}")
                for (name, key, codec), value in zip(self.params, values)}
        text = json.dumps(args, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"{self.python}: an argument holds a lone surrogate, which UTF-8 "
                             f"cannot encode: {e}") from None

    def answer(self, text: str) -> T:
        """The answer its JSON encodes."""
        decoded: T = self.answer_codec._wit_decode(json.loads(text), f"{self.python} answer")
        return decoded
