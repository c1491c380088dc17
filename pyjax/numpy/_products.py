"""Products: matmul, dot, vdot, inner, outer, tensordot, kron, cross, and the array API's
matvec and vecmat."""

from __future__ import annotations

import builtins

from pyjax.lax import lax
from pyjax.lax._util import canonical_axis

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy import _creation, _elementwise, _manipulation
from pyjax.numpy._promotion import (
    _aval,
    _check_arraylike,
    _is_array,
    _promote,
    _weak_result,
    asarray,
    broadcast_shapes,
    broadcast_to,
)

__all__ = ["matvec", "vecmat"]


def matvec(x1, x2, /):
    """Batched matrix-vector product: x1 (..., m, n) with x2 (..., n) -> (..., m)."""
    _check_arraylike("matvec", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec requires x1.ndim >= 2 and x2.ndim >= 1, got {x1.ndim=}, {x2.ndim=}")
    return matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix product: x1 (..., m) with x2 (..., m, n) -> (..., n)."""
    _check_arraylike("matvec", x1, x2)  # JAX's vecmat names matvec in this error
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat requires x1.ndim >= 1 and x2.ndim >= 2, got {x1.ndim=}, {x2.ndim=}")
    return matmul(x1[..., None, :], x2)[..., 0, :]


def _dot_promote(fn, a, b, preferred_element_type=None):
    a, b = _promote(fn, a, b) if not (_is_array(a) and _is_array(b) and _aval(a).dtype is _aval(b).dtype) else (a, b)
    return a, b


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with numpy's broadcasting over batch dimensions."""
    _check_arraylike("matmul", a, b)
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough dimensions "
            f"(has 0, requires at least 1)"
        )
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = _manipulation.reshape(a, (1, a.shape[0]))
    if b_vec:
        b = _manipulation.reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise TypeError(
            f"matmul: dot_general requires contracting dimensions to have the same shape, got "
            f"({a.shape[-1]},) and ({b.shape[-2]},): operand shapes {a.shape} and {b.shape}."
        )
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    # Broadcast-only batch dims of size 1 can be squeezed into free dims; keep it simple: broadcast.
    a_full = broadcast_to(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
    b_full = broadcast_to(b, batch + b.shape[-2:]) if b.shape[:-2] != batch else b
    nb = len(batch)
    out = lax.dot_general(
        a_full,
        b_full,
        (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
        preferred_element_type=preferred_element_type,
    )
    if a_vec and b_vec:
        return _manipulation.reshape(out, batch)
    if a_vec:
        return _manipulation.reshape(out, batch + (b.shape[-1],))
    if b_vec:
        return _manipulation.reshape(out, batch + (a.shape[-2],))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    _check_arraylike("dot", a, b)
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _elementwise.multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b, preferred_element_type=preferred_element_type)
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    if a.shape[-1] != b.shape[-2]:
        raise TypeError(
            f"dot: dot_general requires contracting dimensions to have the same shape, got "
            f"({a.shape[-1]},) and ({b.shape[-2]},): operand shapes {a.shape} and {b.shape}."
        )
    return lax.dot_general(
        a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())), preferred_element_type=preferred_element_type
    )


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating the first (for complex input)."""
    _check_arraylike("vdot", a, b)
    return dot(
        _elementwise.conj(_manipulation.ravel(a)),
        _manipulation.ravel(b),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def inner(a, b):
    _check_arraylike("inner", a, b)
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _elementwise.multiply(a, b)
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    if a.shape[-1] != b.shape[-1]:
        raise TypeError(f"inner: last dimensions must match, got {a.shape} and {b.shape}")
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a, b, out=None):
    _check_arraylike("outer", a, b)
    a, b = _manipulation.ravel(asarray(a)), _manipulation.ravel(asarray(b))
    return _elementwise.multiply(_manipulation.reshape(a, (-1, 1)), _manipulation.reshape(b, (1, -1)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    _check_arraylike("tensordot", a, b)
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if isinstance(axes, builtins.int):
        if axes > builtins.min(a.ndim, b.ndim) or axes < 0:
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks ({a.ndim} and {b.ndim})")
        ca = tuple(range(a.ndim - axes, a.ndim))
        cb = tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, builtins.int) else tuple(ca)
        cb = (cb,) if isinstance(cb, builtins.int) else tuple(cb)
        ca = tuple(canonical_axis(x, a.ndim, "tensordot") for x in ca)
        cb = tuple(canonical_axis(x, b.ndim, "tensordot") for x in cb)
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    for x, y in zip(ca, cb):
        if a.shape[x] != b.shape[y]:
            raise TypeError(
                f"tensordot requires contracted axes to have the same size: got {a.shape} and "
                f"{b.shape} with axes ({ca}, {cb})"
            )
    return lax.dot_general(a, b, ((ca, cb), ((), ())), preferred_element_type=preferred_element_type)


def kron(a, b):
    _check_arraylike("kron", a, b)
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = _manipulation.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = _manipulation.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ea = _manipulation.reshape(a, tuple(x for s in a.shape for x in (s, 1)))
    eb = _manipulation.reshape(b, tuple(x for s in b.shape for x in (1, s)))
    return _manipulation.reshape(_elementwise.multiply(ea, eb), tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    _check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _manipulation.moveaxis(asarray(a), axisa, -1)
    b = _manipulation.moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == b.shape[-1] == 2:  # 2-vectors: the z component alone, as numpy
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else _creation.zeros_like(a0)  # a 2-vector has z = 0
    b2 = b[..., 2] if b.shape[-1] == 3 else _creation.zeros_like(b0)
    c = _manipulation.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return _manipulation.moveaxis(c, -1, axisc)


__all__ += ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "kron", "cross"]
