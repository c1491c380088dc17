"""Typed PRNG key arrays (JAX's new-style keys, dtype key<fry>) over threefry2x32 uint32 data.

A `PRNGKeyArray` wraps a uint32 array of shape key_shape + (2,). It is registered as a pytree
node whose only leaf is that data, so jit, vmap, scan and grad carry keys unchanged: vmap maps the
data's leading axis, which is the key batch axis. The public tree functions (pyjax.tree_util,
pyjax.tree) treat keys as leaves, as JAX does (see register_array_like_node).
"""

from __future__ import annotations

import re
from typing import Any

from pyjax.core.core import Tracer, get_aval, pytype_aval_mappings
from pyjax.core.pytree import register_array_like_node, register_pytree_node


class extended:  # noqa: N801 - JAX's name
    """Abstract scalar type of JAX's extended dtypes (jax.dtypes.extended)."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """Abstract scalar type of PRNG key dtypes (jax.dtypes.prng_key)."""


class KeyDtype:
    """The dtype of threefry typed keys; prints as key<fry> like JAX's."""

    name = "key<fry>"
    type = prng_key
    itemsize = 8  # two uint32 words per key
    _impl = "threefry2x32"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDtype)

    def __hash__(self) -> int:
        return hash(KeyDtype)


KEY_DTYPE = KeyDtype()
_KEY_BITS_TYPE = re.compile(r"uint32\[(?:([\d,]*),)?2\]")  # a key's raw bits (..., 2) in a tracer's repr


def _dtype_name(x: Any) -> str:
    """The dtype name JAX's error messages print for an operand."""
    if isinstance(x, PRNGKeyArray):
        return KEY_DTYPE.name
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int32"
    if isinstance(x, float):
        return "float32"
    d = getattr(x, "dtype", None)
    return getattr(d, "name", type(x).__name__)


def _binop(op: str, reflected: bool = False):
    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        raise TypeError(f"{op} does not accept dtypes {_dtype_name(a)}, {_dtype_name(b)}.")

    return method


# arithmetic dunder (without underscores) -> the lax op named in the error; each is set on
# PRNGKeyArray twice, plain and reflected (__add__ and __radd__), below the class
_BINARY_DUNDERS = {
    "add": "add",
    "sub": "sub",
    "mul": "multiply",
    "truediv": "div",
    "floordiv": "floor_divide",
    "mod": "rem",
    "pow": "pow",
    "matmul": "dot_general",
    "and": "and",
    "or": "or",
    "xor": "xor",
    "lshift": "shift_left",
    "rshift": "shift_right_arithmetic",
}


def _unop(op: str):
    def method(self):
        raise TypeError(
            f"{op} does not accept dtype key<fry>. Accepted dtypes are subtypes of integer, floating, complexfloating."
        )

    return method


def _cmp(op: str):
    def method(self, other):
        raise TypeError(
            f"{op} does not accept dtype key<fry>. Accepted dtypes are subtypes of integer, floating, bool."
        )

    return method


class PRNGKeyArray:
    """An array of threefry keys (dtype key<fry>) stored as uint32 data of shape shape + (2,)."""

    __slots__ = ("_data",)
    __hash__ = None  # like arrays: == is elementwise

    def __init__(self, data: Any) -> None:
        # No validation: pytree unflattening may rebuild keys around arbitrary leaves.
        self._data = data

    # --- array attributes -------------------------------------------------------------------------

    @property
    def dtype(self) -> KeyDtype:
        """key<fry>."""
        return KEY_DTYPE

    @property
    def shape(self) -> tuple:
        """The key shape (the data shape without its trailing 2)."""
        return tuple(get_aval(self._data).shape[:-1])

    @property
    def ndim(self) -> int:
        """Number of key dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of keys."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        """Bytes per key."""
        return KEY_DTYPE.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        idx = idx if isinstance(idx, tuple) else (idx,)
        n = 0
        for i in idx:
            if i is None or i is Ellipsis:
                continue
            d = getattr(i, "dtype", None)
            # A boolean mask indexes as many dimensions as it has.
            n += len(getattr(i, "shape", ())) if d is not None and str(d) == "bool" else 1
        if n > self.ndim:
            raise IndexError(f"Too many indices: array is {self.ndim}-dimensional, but {n} were indexed")
        # The trailing key-word axis is never indexed: an Ellipsis (ours or the caller's) keeps it.
        tail = (slice(None),) if any(i is Ellipsis for i in idx) else (Ellipsis,)
        return PRNGKeyArray(self._data[idx + tail])

    def reshape(self, *shape: Any) -> PRNGKeyArray:
        """Keys reshaped to shape (the key-word axis stays last)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PRNGKeyArray(self._data.reshape(tuple(shape) + (2,)))

    def ravel(self) -> PRNGKeyArray:
        """Keys flattened to one dimension."""
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        """Keys without size-1 dimensions (never the key-word axis)."""
        if axis is None:
            return self.reshape(tuple(d for d in self.shape if d != 1))
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(a % self.ndim if self.ndim else a for a in axes)
        return PRNGKeyArray(self._data.squeeze(axes))

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        """Keys with their dimensions permuted (the key-word axis stays last)."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        nd = self.ndim
        perm = tuple(range(nd))[::-1] if not axes else tuple(a % nd for a in axes)
        return PRNGKeyArray(self._data.transpose(perm + (nd,)))

    @property
    def T(self) -> PRNGKeyArray:  # noqa: N802 - numpy's name
        """Keys with their dimensions reversed."""
        return self.transpose()

    @property
    def at(self):
        """`keys.at[idx].set(other_keys)` / `.get()`, as for arrays."""
        return KeyAt(self)

    def copy(self) -> PRNGKeyArray:
        """The same keys (arrays are immutable)."""
        return PRNGKeyArray(self._data)

    # --- printing ---------------------------------------------------------------------------------

    def __repr__(self) -> str:
        if isinstance(self._data, Tracer):  # traced keys print as their tracer, typed as keys (JitTracer(key<fry>[]))
            return _KEY_BITS_TYPE.sub(lambda m: f"{KEY_DTYPE}[{m.group(1) or ''}]", self._data._short_repr())
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{self._data}"

    __str__ = __repr__

    # --- equality, and errors for everything numeric ----------------------------------------------

    def __eq__(self, other: object):
        if not isinstance(other, PRNGKeyArray):
            raise TypeError(f"eq does not accept dtypes {_dtype_name(self)}, {_dtype_name(other)}.")
        return (self._data == other._data).all(axis=-1)

    def __ne__(self, other: object):
        if not isinstance(other, PRNGKeyArray):
            raise TypeError(f"ne does not accept dtypes {_dtype_name(self)}, {_dtype_name(other)}.")
        return (self._data != other._data).any(axis=-1)

    __neg__, __pos__, __abs__, __invert__ = _unop("neg"), _unop("pos"), _unop("abs"), _unop("not")
    __lt__, __le__, __gt__, __ge__ = _cmp("lt"), _cmp("le"), _cmp("gt"), _cmp("ge")

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype: Any = None, copy: Any = None):
        raise TypeError(
            "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "jax.random.key_data(arr) if you wish to extract the underlying integer array."
        )

    def __jax_array__(self):
        # jnp functions convert their inputs through this hook: typed keys are not numbers.
        raise TypeError(
            "pyjax.numpy functions do not accept typed PRNG key arrays (dtype key<fry>); use "
            "jax.random.key_data(keys) to get their uint32 data."
        )


for _dunder, _op in _BINARY_DUNDERS.items():
    setattr(PRNGKeyArray, f"__{_dunder}__", _binop(_op))
    setattr(PRNGKeyArray, f"__r{_dunder}__", _binop(_op, True))
del _dunder, _op


class KeyAval:
    """jax.typeof of typed keys: their shape with the key dtype (prints key<fry>[2], as JAX's)."""

    weak_type = False

    def __init__(self, shape: tuple):
        self.shape, self.dtype = tuple(shape), KEY_DTYPE

    ndim = property(lambda self: len(self.shape))

    def __eq__(self, other):
        return isinstance(other, KeyAval) and self.shape == other.shape

    def __hash__(self):
        return hash(("key", self.shape))

    def __repr__(self):
        return f"{KEY_DTYPE.name}[{','.join(str(d) for d in self.shape)}]"

    __str__ = str_short = __repr__


def _no_aval(keys: PRNGKeyArray):
    raise TypeError(
        f"typed PRNG key arrays (dtype {KEY_DTYPE}) are not numbers, and this operation needs numbers: use "
        "jax.random.key_data(keys) for their uint32 data"
    )


pytype_aval_mappings[PRNGKeyArray] = _no_aval
register_pytree_node(PRNGKeyArray, lambda k: ((k._data,), None), lambda _, children: PRNGKeyArray(children[0]))
register_array_like_node(PRNGKeyArray)


def key_words(x: Any) -> Any:
    """The raw uint32 words of typed keys x; a clear error for anything else."""
    if not isinstance(x, PRNGKeyArray):
        d = getattr(getattr(x, "dtype", None), "name", type(x).__name__)
        raise ValueError(f"Cannot combine typed PRNG keys (dtype={KEY_DTYPE}) with arrays of dtype {d}.")
    return x._data


class KeyAt:
    """`keys.at[idx]`: .get() and .set(keys) (keys are not numbers: no add, multiply, ...)."""

    def __init__(self, keys: PRNGKeyArray, idx: Any = None):
        self.keys, self.idx = keys, idx

    def __getitem__(self, idx: Any) -> KeyAt:
        return KeyAt(self.keys, idx)

    def _data_index(self) -> Any:
        idx = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        return idx + (slice(None),) if any(i is Ellipsis for i in idx) else idx  # the word axis stays last

    def get(self, **kwargs) -> PRNGKeyArray:
        return PRNGKeyArray(self.keys._data.at[self._data_index()].get(**kwargs))

    def set(self, values: Any, **kwargs) -> PRNGKeyArray:
        return PRNGKeyArray(self.keys._data.at[self._data_index()].set(key_words(values), **kwargs))

    def __getattr__(self, name: str):
        if name in ("add", "multiply", "divide", "power", "min", "max", "apply", "mul"):
            raise TypeError(f".at[...].{name} is not defined for typed PRNG keys (dtype {KEY_DTYPE}): only get and set")
        raise AttributeError(name)
