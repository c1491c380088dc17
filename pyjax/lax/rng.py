"""rng_bit_generator (XLA's RngBitGenerator, bit-exact with JAX on CPU), RandomAlgorithm and rng_uniform
(XLA's stateful RngUniform: fresh operating-system randomness at every run, eager or jitted).

The key is a uint32[4] (or uint64[2] with x64): XLA reads it as two 64-bit words, the first the
generator's key and the second its counter. ThreeFry-2x32 encrypts the counters state + i of half
the outputs and interleaves the two words along one even axis; Philox-4x32-10 encrypts the 128-bit
counters (state, key) + i and lays the four words out in row-major order; narrow dtypes keep the low
bits of 32-bit outputs, uint64 pairs two words. XLA's default on CPU is Philox. All arithmetic is on
uint32 words with explicit carries, so it runs under jit on every backend without x64.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Sequence
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.core import ShapedArray, get_aval
from pyjax.interpreters import batching
from pyjax.lax import lax
from pyjax.lax._util import _arr
from pyjax.lax.bits import mulhi
from pyjax.lax.decomposed import composed_primitive
from pyjax.lax.slicing import dynamic_update_index_in_dim, index_in_dim
from pyjax.runtime import control
from pyjax.runtime import execute as _execute

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p", "rng_uniform", "rng_uniform_p"]


class RandomAlgorithm(enum.IntEnum):
    """Bit-generator algorithms of XLA's RngBitGenerator (for rng_bit_generator)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_U32 = dtypes.uint32
_DTYPES = ("uint8", "uint16", "uint32", "uint64")


def _c(v: int):
    return lax.full((), v & 0xFFFFFFFF, _U32)


def _add_carry(words: list, j) -> list:
    """The little-endian multi-word unsigned integer `words` plus the uint32 array j (words broadcast)."""
    out, carry = [], j
    for w in words:
        s = lax.add(w, carry)
        out.append(s)
        carry = lax.convert_element_type(lax.lt(s, w), _U32)
    return out


def _key_words(key) -> list:
    """The key's four uint32 words, least significant first: key lo/hi, then counter lo/hi."""
    a = get_aval(key)
    if a.dtype is dtypes.uint32 and a.shape == (4,):
        return [lax.reshape(lax.slice(key, (i,), (i + 1,)), ()) for i in range(4)]
    if a.dtype is dtypes.uint64 and a.shape == (2,):
        out = []
        for i in range(2):
            w = lax.reshape(lax.slice(key, (i,), (i + 1,)), ())
            out += [
                lax.convert_element_type(w, _U32),
                lax.convert_element_type(lax.shift_right_logical(w, lax.full((), 32, w.dtype)), _U32),
            ]
        return out
    raise AssertionError(f"rng_bit_generator needs a uint32[4] or uint64[2] key, got {a.dtype.name}{list(a.shape)}")


def _key_from_words(words: list, like):
    a = get_aval(like)
    if a.dtype is dtypes.uint32:
        return lax.concatenate([lax.reshape(w, (1,)) for w in words], 0)
    u64 = a.dtype
    pairs = [
        lax.bitwise_or(
            lax.convert_element_type(lo, u64),
            lax.shift_left(lax.convert_element_type(hi, u64), lax.full((), 32, u64)),
        )
        for lo, hi in (words[:2], words[2:])
    ]
    return lax.concatenate([lax.reshape(w, (1,)) for w in pairs], 0)


def _join64(lo, hi, u64):
    return lax.bitwise_or(
        lax.convert_element_type(lo, u64), lax.shift_left(lax.convert_element_type(hi, u64), lax.full((), 32, u64))
    )


def _halves(shape: tuple) -> tuple[int, int]:
    """XLA's split of a shape for ThreeFry's two output words: (axis, its halved length)."""
    evens = [i for i, d in enumerate(shape) if d % 2 == 0]
    axis = evens[0] if evens else max(range(len(shape)), key=lambda i: (shape[i], -i))
    return axis, -(-shape[axis] // 2)


def _threefry32(words: list, shape: tuple):
    """uint32 bits of `shape` and the counter's advance, as XLA's ThreeFry generator makes them."""
    if not shape:
        bits, n = _threefry32(words, (1,))
        return lax.reshape(bits, ()), n
    axis, h = _halves(shape)
    half = shape[:axis] + (h,) + shape[axis + 1 :]
    n = math.prod(half)
    j = lax.iota(_U32, n)
    lo, hi = _add_carry(words[2:], j)
    x0, x1 = lax.threefry2x32(words[0], words[1], lo, hi)
    pair_shape = shape[:axis] + (h, 1) + shape[axis + 1 :]
    both = lax.concatenate([lax.reshape(x0, pair_shape), lax.reshape(x1, pair_shape)], axis + 1)
    full = lax.reshape(both, shape[:axis] + (2 * h,) + shape[axis + 1 :])
    if 2 * h != shape[axis]:
        full = lax.slice(full, (0,) * len(shape), shape)
    return full, n


def _threefry64(words: list, shape: tuple, u64):
    n = math.prod(shape)
    lo, hi = _add_carry(words[2:], lax.iota(_U32, n))
    x0, x1 = lax.threefry2x32(words[0], words[1], lo, hi)
    return lax.reshape(_join64(x0, x1, u64), shape), n


_PHILOX_MUL = (0xD2511F53, 0xCD9E8D57)
_PHILOX_WEYL = (0x9E3779B9, 0xBB67AE85)


def _philox(words: list, n4: int) -> list:
    """Philox-4x32-10 of the 128-bit counters (counter, key) + i for i < n4: four uint32[n4] words."""
    x = _add_carry([words[2], words[3], words[0], words[1]], lax.iota(_U32, n4))
    k0, k1 = words[0], words[1]
    m0, m1 = _c(_PHILOX_MUL[0]), _c(_PHILOX_MUL[1])
    for _ in range(10):
        hi0, lo0 = mulhi(x[0], lax.broadcast_in_dim(m0, (n4,), ())), lax.mul(x[0], m0)
        hi1, lo1 = mulhi(x[2], lax.broadcast_in_dim(m1, (n4,), ())), lax.mul(x[2], m1)
        x = [lax.bitwise_xor(lax.bitwise_xor(hi1, x[1]), k0), lo1, lax.bitwise_xor(lax.bitwise_xor(hi0, x[3]), k1), lo0]
        k0, k1 = lax.add(k0, _c(_PHILOX_WEYL[0])), lax.add(k1, _c(_PHILOX_WEYL[1]))
    return x


def _interleave(cols: list, count: int, shape: tuple):
    """Row-major (rows, len(cols)) of the columns, its first `count` entries in `shape`."""
    rows = get_aval(cols[0]).shape[0]
    flat = lax.reshape(lax.concatenate([lax.reshape(c, (rows, 1)) for c in cols], 1), (rows * len(cols),))
    return lax.reshape(lax.slice(flat, (0,), (count,)), shape)


def _philox32(words: list, shape: tuple):
    count = math.prod(shape)
    n4 = -(-count // 4)
    return _interleave(_philox(words, n4), count, shape), n4


def _philox64(words: list, shape: tuple, u64):
    count = math.prod(shape)
    n4 = -(-2 * count // 4)
    x = _philox(words, n4)
    return _interleave([_join64(x[0], x[1], u64), _join64(x[2], x[3], u64)], count, shape), n4


def generate_bits(key, *, shape, dtype, algorithm=RandomAlgorithm.RNG_DEFAULT, out_sharding=None):
    """rng_bit_generator_p's meaning: [new key, bits] for JAX's operands and params."""
    words = _key_words(key)
    dt = dtypes.dtype(dtype)
    wide = dt.itemsize == 8
    threefry = RandomAlgorithm(algorithm) is RandomAlgorithm.RNG_THREE_FRY
    if math.prod(shape) == 0:
        return [key, lax.full(shape, 0, dt)]
    if wide:
        bits, n = (_threefry64 if threefry else _philox64)(words, shape, dt)
    else:
        bits, n = (_threefry32 if threefry else _philox32)(words, shape)
        if dt is not _U32:
            bits = lax.convert_element_type(bits, dt)
    counter = _add_carry(words[2:], lax.full((), n, _U32))
    return [_key_from_words(words[:2] + counter, key), bits]


def _first_key_bits(keys, size, *, shape, **params) -> list:
    """JAX's batching of rng_bit_generator (keys batched first): the first key makes every row's bits,
    and only it advances."""
    new_key, bits = generate_bits(index_in_dim(keys, 0, 0, keepdims=False), shape=(size, *shape), **params)
    return [dynamic_update_index_in_dim(keys, new_key, 0, 0), bits]


rng_bit_generator_p = composed_primitive("rng_bit_generator", generate_bits, multi=True)


def _batch_rule(size, vals, dims, **params):
    if dims[0] is None:
        return rng_bit_generator_p.bind(vals[0], **params), [None, None]
    return _first_key_bits(batching.move_to(vals[0], dims[0], 0, size), size, **params), [0, 0]


batching.batch_rules[rng_bit_generator_p] = _batch_rule


_jitted: list = []


def _fused():
    """generate_bits under one jit (static shape, dtype, algorithm): one fused program per call when eager,
    instead of a dispatch per word operation (Philox's ten rounds are ~150 ops)."""
    if not _jitted:
        from pyjax.api import jit

        _jitted.append(jit(generate_bits, static_argnames=("shape", "dtype", "algorithm", "out_sharding")))
    return _jitted[0]


def rng_bit_generator(
    key: Any,
    shape: Sequence[int],
    dtype: Any = dtypes.uint32,
    algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT,
    *,
    out_sharding=None,
) -> tuple:
    """(new_key, bits): uniformly random bits of an unsigned dtype from XLA's stateless bit generator,
    the same bits as JAX on CPU (RNG_DEFAULT is Philox there)."""
    from pyjax.custom_batching import custom_vmap

    shape = tuple(int(s) for s in shape)
    dt = dtypes.canonicalize(dtype)
    if dt.name not in _DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dt.name}")
    algorithm = RandomAlgorithm(algorithm)
    key = _arr(key)

    @custom_vmap
    def gen(k):
        return tuple(_fused()(k, shape=shape, dtype=dt, algorithm=algorithm))

    gen.def_vmap(
        lambda size, _, k: (tuple(_first_key_bits(k, size, shape=shape, dtype=dt, algorithm=algorithm)), (True, True))
    )
    return gen(key)


# --- rng_uniform ----------------------------------------------------------------------------------------

rng_uniform_p = core.Primitive("rng_uniform")


@rng_uniform_p.def_abstract_eval
def _rng_uniform_abstract(a, b, *, shape):
    if a.shape or b.shape:
        raise TypeError(f"rng_uniform bounds must be scalars, got shapes {a.shape} and {b.shape}")
    if a.dtype is not b.dtype or a.dtype.kind not in "fiu":
        raise TypeError(f"rng_uniform bounds must share an integer or float dtype, got {a.dtype.name}, {b.dtype.name}")
    return ShapedArray(tuple(shape), a.dtype)


def _rng_uniform_draw(a, b, *, shape):
    """Uniform values in [a, b) from os.urandom: floats from the top mantissa bits, integers a + bits mod (b - a)."""
    d = get_aval(a).dtype
    wide = d.itemsize == 8
    u = dtypes.uint64 if wide else _U32
    with core.new_base_main():  # a host step: concrete values even while a jit is tracing
        bits = _execute.from_bytes(os.urandom(u.itemsize * math.prod(shape)), ShapedArray(tuple(shape), u))
        if d.kind == "f":
            mant = {2: 10, 4: 23, 8: 52}[d.itemsize] if d.name != "bfloat16" else 7
            drop = lax.full((), u.itemsize * 8 - mant, u)
            frac = lax.mul(
                lax.convert_element_type(lax.shift_right_logical(bits, drop), d), lax.full((), 2.0**-mant, d)
            )
            return lax.add(a, lax.mul(lax.sub(b, a), frac))
        span = lax.convert_element_type(lax.sub(lax.convert_element_type(b, u), lax.convert_element_type(a, u)), u)
        return lax.add(a, lax.convert_element_type(lax.rem(bits, span), d))


rng_uniform_p.def_impl(_rng_uniform_draw)
control.register_host_primitive("rng_uniform", lambda arrays, **params: [_rng_uniform_draw(*arrays, **params)])


def rng_uniform(a, b, shape):
    """Stateful uniform random values in [a, b) of `shape` with a's dtype: new ones at every call, under jit too."""
    return rng_uniform_p.bind(lax._as_array(a), lax._as_array(b), shape=tuple(int(s) for s in shape))
