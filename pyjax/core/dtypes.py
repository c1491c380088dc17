"""dtypes without numpy: JAX's type lattice, weak types and x64 canonicalization.

pyjax must run in Pyodide where numpy is absent, so dtypes are our own objects. They compare
equal to numpy dtypes, numpy scalar types and dtype names, so user code written for JAX
(`x.dtype == jnp.float32`, `np.dtype(x.dtype)`) keeps working.
"""

from __future__ import annotations

import builtins
import sys
from functools import cache, lru_cache

from pyjax.core import hooks, minifloat
from pyjax.core.config import config


class DType:
    """A dtype: name, item size in bytes, kind ('b', 'i', 'u', 'f', 'c') and bits (fewer than
    itemsize * 8 for the sub-byte types, stored one per byte)."""

    __slots__ = ("name", "itemsize", "kind", "bits", "_hash")

    def __init__(self, name: str, itemsize: int, kind: str, bits: int | None = None):
        self.name = name
        self.itemsize = itemsize
        self.kind = kind
        self.bits = itemsize * 8 if bits is None else bits
        self._hash = hash(name)

    @property
    def type(self):
        """The scalar type: numpy's once numpy is imported, as JAX's dtypes are numpy's (so
        `issubclass(x.dtype.type, jnp.integer)` holds); else pyjax's."""
        if "numpy" in sys.modules:
            try:
                return self.dtype.type
            except AttributeError:  # bfloat16 without ml_dtypes
                pass
        return SCALAR_TYPES[self.name]

    @property
    def char(self) -> str:
        return _CHARS[self.name]

    @property
    def str(self) -> str:
        return ("|" if self.itemsize == 1 else "<") + self.kind + builtins.str(self.itemsize)

    @property
    def dtype(self):
        """The matching numpy dtype, so `np.dtype(x.dtype)` and `np.zeros(n, x.dtype)` work (numpy only)."""
        try:
            import numpy
        except ImportError:
            raise AttributeError("DType.dtype needs numpy") from None
        if self.name in ML_DTYPES:
            try:
                import ml_dtypes
            except ImportError:
                raise AttributeError(f"numpy has no {self.name} without the ml_dtypes package") from None
            return numpy.dtype(getattr(ml_dtypes, self.name))
        return numpy.dtype(self.name)

    def __eq__(self, other):
        if other is self:
            return True
        try:
            return dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._hash

    def __repr__(self):  # numpy quotes its own types' names, not ml_dtypes' (dtype(bfloat16))
        return f"dtype({self.name})" if self.name in ML_DTYPES else f"dtype('{self.name}')"

    def __str__(self):
        return self.name

    def __reduce__(self):
        return (dtype, (self.name,))


bool_ = DType("bool", 1, "b")
int8 = DType("int8", 1, "i")
int16 = DType("int16", 2, "i")
int32 = DType("int32", 4, "i")
int64 = DType("int64", 8, "i")
uint8 = DType("uint8", 1, "u")
uint16 = DType("uint16", 2, "u")
uint32 = DType("uint32", 4, "u")
uint64 = DType("uint64", 8, "u")
float16 = DType("float16", 2, "f")
bfloat16 = DType("bfloat16", 2, "f")
float32 = DType("float32", 4, "f")
float64 = DType("float64", 8, "f")
complex64 = DType("complex64", 8, "c")
complex128 = DType("complex128", 16, "c")

ALL = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
ALL += (float16, bfloat16, float32, float64, complex64, complex128)
ALL += tuple(DType(name, 1, "f", minifloat.width(name)) for name in minifloat.FORMATS)  # the 8-bit and smaller floats
# integers of 4, 2 and 1 bits, one per byte (ml_dtypes' layout: the value's low bits, the rest zero)
INTN = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2, "int1": 1, "uint1": 1}
ALL += tuple(DType(name, 1, name[0], bits) for name, bits in INTN.items())
BY_NAME = {d.name: d for d in ALL}
float8_e4m3fn, float8_e5m2 = BY_NAME["float8_e4m3fn"], BY_NAME["float8_e5m2"]
# the floats of core/minifloat.py (8 bits and fewer), one byte each
FLOAT8 = frozenset(minifloat.FORMATS)
# dtypes numpy lacks: numpy gets them from the ml_dtypes package (installed with JAX)
ML_DTYPES = frozenset(("bfloat16",)) | FLOAT8 | frozenset(INTN)
# floats narrower than float32: stored narrow, computed (and accumulated) in float32, rounded once
NARROW_FLOATS = frozenset(("float16", "bfloat16")) | FLOAT8
_CHARS = {"bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "l", "uint8": "B"}
_CHARS.update({"uint16": "H", "uint32": "I", "uint64": "L", "float16": "e", "float32": "f"})
_CHARS.update({"float64": "d", "bfloat16": "E", "complex64": "F", "complex128": "D"})
_CHARS.update({name: "V" for name in FLOAT8})  # numpy's kind for ml_dtypes' types
# ml_dtypes' type characters of the sub-byte types (not dtype aliases: 'e' is float16's)
_CHARS.update({"int4": "a", "uint4": "A", "int2": "c", "uint2": "C", "int1": "e", "uint1": "E"})
_CHARS.update({"float4_e2m1fn": "0", "float6_e2m3fn": "8", "float6_e3m2fn": "9", "float8_e8m0fnu": "W"})
# The `struct` format of each real dtype (little-endian packing of host values; bfloat16 has none).
STRUCT_FORMAT = {"bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B"}
STRUCT_FORMAT.update({"uint16": "H", "uint32": "I", "uint64": "Q", "float16": "e", "float32": "f", "float64": "d"})
# The sub-byte integers are stored as int8/uint8 bytes holding their value (signed ones sign-extended),
# so every kernel loads them as it loads int8; numpy interop converts to and from ml_dtypes' layout.
STRUCT_FORMAT.update({name: "b" if name[0] == "i" else "B" for name in INTN})
_ALIASES = {"float": "float64", "int": "int64", "bool_": "bool", "f4": "float32", "f8": "float64"}
_ALIASES.update({"f2": "float16", "i4": "int32", "i8": "int64", "u4": "uint32", "u8": "uint64"})
_ALIASES.update({"i1": "int8", "i2": "int16", "u1": "uint8", "u2": "uint16", "b1": "bool"})
_ALIASES.update({"complex": "complex128", "c8": "complex64", "c16": "complex128"})
_ALIASES.update({v: k for k, v in _CHARS.items() if k not in ML_DTYPES})


# --- scalar types: jnp.float32 is both a dtype spec and a constructor, as in JAX ----------


class _ScalarMeta(type):
    @property
    def dtype(cls):
        """numpy's dtype once numpy is imported (numpy reads `.dtype` to accept `np.dtype(jnp.float32)` and
        `a.astype(jnp.float32)`, and needs a numpy dtype there, as JAX's scalar types give); else pyjax's."""
        d = cls._dtype
        if d is not None and "numpy" in sys.modules:
            try:
                return d.dtype
            except AttributeError:  # bfloat16/float8 without ml_dtypes
                pass
        return d

    def __eq__(cls, other):
        if isinstance(other, _ScalarMeta):
            return cls is other
        return cls._dtype == other if cls._dtype is not None else False

    def __hash__(cls):
        return id(cls)

    def __call__(cls, x=0):
        if cls._dtype is None:
            raise TypeError(f"abstract scalar type {cls.__name__} cannot be instantiated")
        return hooks.op("asarray")(x, dtype=cls._dtype)  # the constructor is the library's

    def __repr__(cls):
        return f"<class 'pyjax.numpy.{cls.__name__}'>"


def _abstract(name: str, *bases) -> type:
    return _ScalarMeta(name, bases or (object,), {"_dtype": None})


generic = _abstract("generic")
number = _abstract("number", generic)
bool_type = _ScalarMeta("bool_", (generic,), {"_dtype": bool_})
inexact = _abstract("inexact", number)
floating = _abstract("floating", inexact)
complexfloating = _abstract("complexfloating", inexact)
integer = _abstract("integer", number)
signedinteger = _abstract("signedinteger", integer)
unsignedinteger = _abstract("unsignedinteger", integer)
flexible = _abstract("flexible", generic)  # numpy's strings and voids: no pyjax dtype is one
character = _abstract("character", flexible)
object_type = _abstract("object_", generic)
_KIND_BASE = {"f": floating, "c": complexfloating, "i": signedinteger, "u": unsignedinteger, "b": generic}
SCALAR_TYPES = {"bool": bool_type}
for _d in ALL:
    if _d.name != "bool":
        SCALAR_TYPES[_d.name] = _ScalarMeta(_d.name, (_KIND_BASE[_d.kind],), {"_dtype": _d})
bool_type.__name__ = "bool_"
_ABSTRACT = {t.__name__: t for t in (generic, number, inexact, floating, complexfloating, integer)}
_ABSTRACT.update({t.__name__: t for t in (signedinteger, unsignedinteger, flexible, character, object_type)})


# False until a complex dtype is first used, so programs without complex numbers pay one global
# read per bind for core.bind's complex-operand check.
complex_live = False


def mark_complex() -> None:
    global complex_live
    complex_live = True


def dtype(spec) -> DType:
    """Canonical DType for a spec: DType, name, Python type, numpy dtype/type, or scalar type."""
    d = _dtype(spec)
    if d.kind == "c":
        mark_complex()
    return d


def _dtype(spec) -> DType:
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, _ScalarMeta):
        if spec._dtype is None:
            raise TypeError(f"Cannot interpret abstract type {spec.__name__} as a dtype")
        return spec._dtype
    if spec is builtins.float:
        return float64
    if spec is builtins.int:
        return int64
    if spec is builtins.bool:
        return bool_
    if spec is builtins.complex:
        return complex128
    if isinstance(spec, builtins.str):
        name = _ALIASES.get(spec, spec)
        if name in BY_NAME:
            return BY_NAME[name]
        raise TypeError(f"data type {spec!r} not understood")
    if spec is None:
        return float64
    inner = getattr(spec, "dtype", None)  # numpy dtypes, numpy scalar types, arrays
    if inner is not None and inner is not spec:
        if isinstance(inner, DType):
            return inner
        name = getattr(inner, "name", None)
        if isinstance(name, builtins.str) and name in BY_NAME:
            return BY_NAME[name]
    name = getattr(spec, "name", None)
    if isinstance(name, builtins.str) and name in BY_NAME:
        return BY_NAME[name]
    if isinstance(spec, type) and hasattr(spec, "__name__") and spec.__name__ in BY_NAME:
        return BY_NAME[spec.__name__]
    raise TypeError(f"Cannot interpret {spec!r} as a data type")


def _abstract_of_numpy(t):
    """numpy's abstract scalar classes (np.integer, np.floating, ...) as pyjax's, by name; else t."""
    if isinstance(t, type) and not isinstance(t, _ScalarMeta) and getattr(t, "__module__", "") == "numpy":
        return _ABSTRACT.get(t.__name__, t)
    return t


def issubdtype(a, b) -> bool:
    """np.issubdtype over pyjax dtypes and abstract scalar types (numpy's abstract classes included)."""
    a, b = _abstract_of_numpy(a), _abstract_of_numpy(b)
    if isinstance(b, _ScalarMeta) and b.dtype is None:
        a_type = SCALAR_TYPES[dtype(a).name] if not isinstance(a, _ScalarMeta) else a
        return issubclass(a_type, b)
    if isinstance(a, _ScalarMeta) and a.dtype is None:
        return a is b
    return dtype(a) is dtype(b)


def is_float(d: DType) -> bool:
    return d.kind == "f"


def is_int(d: DType) -> bool:
    return d.kind in "iu"


def is_complex(d: DType) -> bool:
    return d.kind == "c"


def is_inexact(d: DType) -> bool:
    return d.kind in "fc"


# A complex array is stored as real pairs: these map between a complex dtype and its parts' dtype.
_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128", "float16": "complex64", "bfloat16": "complex64"}


def real_dtype(d) -> DType:
    """The dtype of the real and imaginary parts of a complex dtype (identity for real dtypes)."""
    d = dtype(d)
    return BY_NAME[_REAL_OF[d.name]] if d.kind == "c" else d


def complex_dtype(d) -> DType:
    """The complex dtype whose parts have float dtype d (JAX: float32 -> complex64)."""
    d = dtype(d)
    if d.kind == "c":
        return d
    return BY_NAME[_COMPLEX_OF.get(d.name, "complex128")] if d.kind == "f" else canonicalize(complex128)


# --- x64 canonicalization -----------------------------------------------------------------

_TO_32 = {float64: float32, int64: int32, uint64: uint32, complex128: complex64}


def canonicalize(d) -> DType:
    """Without jax_enable_x64, 64-bit requests become 32-bit, as in JAX."""
    d = dtype(d)
    if not config.jax_enable_x64:
        return _TO_32.get(d, d)
    return d


def default_float() -> DType:
    return canonicalize(float64)


def default_int() -> DType:
    return canonicalize(int64)


def default_complex() -> DType:
    return canonicalize(complex128)


# --- promotion lattice (JAX's, with weak types) -------------------------------------------

# Nodes are dtype names plus the weak categories 'i*' (Python int), 'f*' (Python float) and
# 'c*' (Python complex). Complex sits above every float: float32 + complex64 -> complex64.
_LATTICE = {
    "bool": ["i*"],
    "i*": ["uint8", "int8", *INTN],
    "uint8": ["uint16", "int16"],
    "uint16": ["uint32", "int32"],
    "uint32": ["uint64", "int64"],
    "uint64": ["f*"],
    "int8": ["int16"],
    "int16": ["int32"],
    "int32": ["int64"],
    "int64": ["f*"],
    "f*": ["float16", "bfloat16", *minifloat.FORMATS, "c*"],
    # 8-bit and smaller floats promote with nothing but themselves, bool, integers and weak types, and
    # 4/2/1-bit integers with nothing but themselves, bool and Python ints, as in JAX
    **{name: [] for name in minifloat.FORMATS},
    **{name: [] for name in INTN},
    "float16": ["float32"],
    "bfloat16": ["float32"],
    "float32": ["float64", "complex64"],
    "float64": ["complex128"],
    "c*": ["complex64"],
    "complex64": ["complex128"],
    "complex128": [],
}


class TypePromotionError(ValueError):
    """Raised when dtypes cannot be promoted together (8-bit floats with other floats, strict mode)."""


@cache
def _upper_bounds(node: str) -> frozenset:
    out = {node}
    for nxt in _LATTICE[node]:
        out |= _upper_bounds(nxt)
    return frozenset(out)


@lru_cache(maxsize=4096)
def _join(a: str, b: str) -> str:
    common = _upper_bounds(a) & _upper_bounds(b)
    # The least upper bound is the common bound that all other common bounds are above.
    for c in common:
        if common <= _upper_bounds(c):
            return c
    names = tuple(_WEAK_NAMES.get(n, n) for n in (a, b))
    what = next((w for w, group in _NO_PROMOTION if any(n in group for n in names)), None)
    if what is None:
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path. Try explicitly casting"
            " inputs to the desired output type."
        )
    target = "int32" if what.endswith("integers") else "float32"
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path. To avoid unintended"
        f" promotion, {what} do not support implicit promotion. If you'd like your inputs to be promoted to"
        f" another type, you can do so explicitly using e.g. x.astype('{target}')"
    )


_WEAK_NAMES = {"i*": "<class 'int'>", "f*": "<class 'float'>", "c*": "<class 'complex'>"}
# JAX's words for the dtypes that promote only with themselves, in the order its message checks them
_NO_PROMOTION = (
    ("8-bit floats", frozenset(n for n in FLOAT8 if n.startswith("float8"))),
    ("6-bit floats", frozenset(("float6_e2m3fn", "float6_e3m2fn"))),
    ("4-bit floats", frozenset(("float4_e2m1fn",))),
    ("1-bit, 2-bit and 4-bit integers", frozenset(INTN)),
)


def _node(d: DType, weak: bool) -> str:
    if weak and d.kind in "iu":
        return "i*"
    if weak and d.kind == "f":
        return "f*"
    if weak and d.kind == "c":
        return "c*"
    return d.name


def promote(items) -> tuple[DType, bool]:
    """Join of (dtype, weak) pairs: the result dtype and whether it stays weak."""
    node = None
    for d, weak in items:
        n = _node(d, weak)
        node = n if node is None else _join(node, n)
    if node == "i*":
        return default_int(), True
    if node == "f*":
        return default_float(), True
    if node == "c*":
        return default_complex(), True
    return canonicalize(BY_NAME[node]), False


def promote_types(a, b) -> DType:
    """jnp.promote_types: the lattice join of two strong dtypes.

    Like JAX, a 64-bit result is kept when an input was itself 64-bit (even without x64) and
    canonicalized otherwise (uint32 + int32 -> int32 without x64).
    """
    da, db = dtype(a), dtype(b)
    node = _join(_node(da, False), _node(db, False))
    out = {"i*": int64, "f*": float64, "c*": complex128}.get(node) or BY_NAME[node]
    return out if da in _TO_32 or db in _TO_32 else canonicalize(out)  # complex128 is 64-bit too


def is_weak_scalar(x) -> bool:
    """JAX's weakly typed values: exactly Python's int, float and complex (not bool, nor numpy's float64
    and complex128 scalars, which subclass float and complex but keep their dtype)."""
    return type(x) in (builtins.int, builtins.float, builtins.complex)


def python_scalar_dtype(x) -> DType:
    """Weak dtype JAX gives a Python scalar."""
    if isinstance(x, builtins.bool):
        return bool_
    if isinstance(x, builtins.int):
        return default_int()
    if isinstance(x, builtins.float):
        return default_float()
    if isinstance(x, complex):
        mark_complex()
        return default_complex()
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


class finfo:
    """jnp.finfo for the float dtypes."""

    _TABLE = {
        "float16": (10, 5, 6.103515625e-05, 65504.0, 2**-10, 5.960464477539063e-08),
        "bfloat16": (7, 8, 1.1754943508222875e-38, 3.3895313892515355e38, 2**-7, 9.2e-41),
        "float32": (23, 8, 1.1754943508222875e-38, 3.4028234663852886e38, 2**-23, 1.4e-45),
        "float64": (52, 11, 2.2250738585072014e-308, 1.7976931348623157e308, 2**-52, 5e-324),
    }
    _TABLE.update(
        {
            name: (m, e, minifloat.decode(1 << m, name), minifloat.largest(name), 2.0**-m, minifloat.decode(1, name))
            for name, (e, m, bias, _) in minifloat.FORMATS.items()
        }
    )
    _TABLE["float8_e8m0fnu"] = (0, 8, 2.0**-127, 2.0**127, 1.0, 2.0**-127)  # no subnormals: code 0 is 2**-127

    def __init__(self, d):
        self.dtype = real_dtype(d)  # finfo(complex64) describes its float32 parts, as in numpy
        if self.dtype.kind != "f":
            raise ValueError(f"finfo: data type {self.dtype} not inexact")
        nmant, nexp, tiny, fmax, eps, smallest_sub = self._TABLE[self.dtype.name]
        self.bits = self.dtype.bits
        self.nmant, self.nexp, self.eps = nmant, nexp, eps
        self.tiny = self.smallest_normal = tiny
        self.max, self.min = fmax, (tiny if self.dtype.name == "float8_e8m0fnu" else -fmax)  # e8m0 is unsigned
        self.smallest_subnormal = smallest_sub
        self.resolution = 10.0 ** -{"float16": 3, "bfloat16": 2, "float32": 6}.get(self.dtype.name, 15)
        if self.dtype.name in FLOAT8:  # ml_dtypes' resolution: 10**-precision, precision 1 for 8 bits, else 0
            self.resolution = minifloat.round_to(0.1 if self.bits == 8 else 1.0, self.dtype.name)

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, dtype={self.dtype.name})"


class iinfo:
    """jnp.iinfo for the integer dtypes."""

    def __init__(self, d):
        self.dtype = dtype(d)
        if self.dtype.kind not in "iu":
            raise ValueError(f"Invalid integer data type {self.dtype.name!r}.")
        self.bits = self.dtype.bits
        if self.dtype.kind == "u":
            self.min, self.max = 0, 2**self.bits - 1
        else:
            self.min, self.max = -(2 ** (self.bits - 1)), 2 ** (self.bits - 1) - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


def reduction_identity(op: str, d: DType) -> float | int | bool:
    """The value x with op(x, y) == y for every y of dtype d (sum, prod, max, min).

    Windowed and full reductions start from it, so padding with it never changes a result.
    """
    if op == "sum":
        return 0
    if op == "prod":
        return 1
    if d.kind == "f":
        return float("-inf") if op == "max" else float("inf")
    if d.kind == "b":
        return op == "min"
    info = iinfo(d)
    return info.min if op == "max" else info.max


def gather_fill_value(d: DType) -> float | int | bool:
    """JAX's fill for out-of-range gathers: NaN (inexact), min (signed), max (unsigned), True (bool)."""
    if d.kind in "fc":
        return float("nan")
    if d.kind in "iu":
        info = iinfo(d)
        return info.min if d.kind == "i" else info.max
    return True
