"""Lowering of convolutions and windowed reductions to one reduction Kernel each.

conv_general_dilated: the input is put in (N, C, spatial...) order, padded and lhs-dilated
into a fresh buffer when needed (so the window view below stays one strided view: numpy reads
it with as_strided, i.e. im2col without a copy), then each spatial axis is split into
(output position, kernel tap) by `lowering.window`. The iteration space is the output axes in
the output layout's order followed by the contraction axes (input channels and taps, in the
input layout's order); the body is mul(lhs window load, kernel load), reduced with `sum` over
the trailing axes -- the same shape of Kernel as dot_general, so the matmul recognizers and
the cpu einsum path apply. Groups split the channel (or batch) axis into (group, size) and
iterate groups as an output axis.

reduce_window_{sum,max,min,prod}: pad with the reduction's identity (or the init value), apply
base dilation, window every axis, and reduce the tap axes.
"""

from __future__ import annotations

import math

from pyjax.compiler import lowering
from pyjax.compiler.ir import alu, cast
from pyjax.compiler.lowering import Lazy, broadcast_in_dim, constant, elementwise, permute, reduce, reshape, window
from pyjax.core import dtypes

BOOL = dtypes.bool_


def _pad_dilate(ctx, x: Lazy, config, fill) -> Lazy:
    """x padded per axis by (lo, hi, interior) with `fill`, as a plain buffer."""
    if all(c == (0, 0, 0) for c in config):
        if x.red is not None or x.expr.op != "load":
            return ctx.materialize(x)
        return x
    padded = lowering.rules["pad"](ctx, x, constant(fill, x.dtype), tuple(config))
    return ctx.materialize(padded)


def dilated(n: int, d: int) -> int:
    """The length of n elements placed d apart (n dilated by d)."""
    return 0 if n == 0 else 1 + d * (n - 1)


def conv_out_shape(
    lhs_shape,
    rhs_shape,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    batch_group_count,
    **_,
) -> tuple:
    """conv_general_dilated's output shape (its abstract eval and its lowering both use this)."""
    ls, rs, os_ = dimension_numbers
    lhs_c = [lhs_shape[i] for i in ls]
    rhs_c = [rhs_shape[i] for i in rs]
    spatial = []
    for n, k, s, (lo, hi), ld, rd in zip(lhs_c[2:], rhs_c[2:], window_strides, padding, lhs_dilation, rhs_dilation):
        spatial.append(max(0, (dilated(n, ld) + lo + hi - dilated(k, rd)) // s + 1))
    canon = [lhs_c[0] // batch_group_count, rhs_c[0]] + spatial
    out = [0] * len(canon)
    for k, pos in enumerate(os_):
        out[pos] = canon[k]
    return tuple(out)


def _conv(ctx, lhs: Lazy, rhs: Lazy, **params):
    out_shape = conv_out_shape(lhs.shape, rhs.shape, **params)
    ls, rs, os_ = params["dimension_numbers"]
    strides, padding, rhs_dilation = params["window_strides"], params["padding"], params["rhs_dilation"]
    nsp = len(ls) - 2
    out_dtype = params.get("preferred_element_type") or lhs.dtype
    x = permute(ctx, lhs, ls) if tuple(ls) != tuple(range(nsp + 2)) else lhs
    w = permute(ctx, rhs, rs) if tuple(rs) != tuple(range(nsp + 2)) else rhs
    if w.red is not None:
        w = ctx.materialize(w)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    ks = w.shape[2:]
    G, B = params["feature_group_count"], params["batch_group_count"]
    cfg = [(0, 0, 0), (0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, params["lhs_dilation"])]
    if math.prod(out_shape) == 0:
        return constant(0, out_dtype, out_shape)
    if C == 0 or math.prod(ks) == 0:
        return constant(0, out_dtype, out_shape)
    x = _pad_dilate(ctx, x, cfg, 0)
    # windows: (N, C, Q1, K1, ..., Qd, Kd); later axes first so earlier axis numbers stay put
    for j in reversed(range(nsp)):
        x = window(ctx, x, 2 + j, ks[j], strides[j], rhs_dilation[j])
    # axis labels of x and w
    xl = ["n", "c"]
    if B > 1:
        x = reshape(ctx, x, (B, N // B) + x.shape[1:])
        xl = ["g", "n", "c"]
    elif G > 1:
        x = reshape(ctx, x, (N, G, C // G) + x.shape[2:])
        xl = ["n", "g", "c"]
    for j in range(nsp):
        xl += [f"q{j}", f"k{j}"]
    wl = ["o", "c"] + [f"k{j}" for j in range(nsp)]
    g = max(G, B)
    if g > 1:
        w = reshape(ctx, w, (g, O // g) + w.shape[1:])
        wl = ["g"] + wl
    # iteration space: output axes in output-layout order, then contraction axes in input order
    kept, red = [], []
    for pos in range(nsp + 2):
        k_ = os_.index(pos)
        if k_ == 0:
            kept.append("n")
        elif k_ == 1:
            kept += ["g", "o"] if g > 1 else ["o"]
        else:
            kept.append(f"q{k_ - 2}")
    for pos in range(nsp + 2):
        k_ = ls.index(pos)
        if k_ == 1:
            red.append("c")
        elif k_ >= 2:
            red.append(f"k{k_ - 2}")
    full = kept + red
    sizes = dict(zip(xl, x.shape))
    sizes.update(zip(wl, w.shape))
    full_shape = tuple(sizes[a] for a in full)

    def place(v: Lazy, labels: list) -> Lazy:
        order = sorted(range(len(labels)), key=lambda i: full.index(labels[i]))
        if order != list(range(len(labels))):
            v = permute(ctx, v, order)
        dims = [full.index(labels[i]) for i in order]
        return broadcast_in_dim(ctx, v, full_shape, dims)

    xe, we = place(x, xl), place(w, wl)
    adt = dtypes.float32 if out_dtype.name in dtypes.NARROW_FLOATS else out_dtype
    nk = len(kept)
    if out_dtype is BOOL:
        prod = elementwise(ctx, [xe, we], lambda a, b: alu("and", a, b))
        r = reduce(ctx, prod, "or", range(nk, len(full)))
    else:
        prod = elementwise(ctx, [xe, we], lambda a, b: alu("mul", cast(a, adt), cast(b, adt)))
        r = reduce(ctx, prod, "sum", range(nk, len(full)), out_dtype)
    if g > 1:
        r = reshape(ctx, r, out_shape)
    return r


lowering.rules["conv_general_dilated"] = _conv


def _reduce_window(op):
    def rule(ctx, x: Lazy, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        nd = len(x.shape)
        out_shape = []
        for n, k, s, (lo, hi), bd, wd in zip(
            x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
        ):
            padded = (0 if n == 0 else (n - 1) * bd + 1) + lo + hi
            span = (k - 1) * wd + 1 if k else 0
            out_shape.append(max(0, (padded - span) // s + 1) if padded >= span else 0)
        out_shape = tuple(out_shape)
        fill = dtypes.reduction_identity(op, x.dtype)
        if math.prod(out_shape) == 0 or math.prod(window_dimensions) == 0:
            return constant(fill, x.dtype, out_shape)
        cfg = [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation)]
        v = _pad_dilate(ctx, x, cfg, fill)
        for j in reversed(range(nd)):
            v = window(ctx, v, j, window_dimensions[j], window_strides[j], window_dilation[j])
        perm = [2 * j for j in range(nd)] + [2 * j + 1 for j in range(nd)]
        v = permute(ctx, v, perm)
        rop = op
        if x.dtype is BOOL:
            rop = {"max": "or", "min": "and", "sum": "or", "prod": "and"}[op]
        return reduce(ctx, v, rop, range(nd, 2 * nd))

    return rule


for _op in ("sum", "max", "min", "prod"):
    lowering.rules[f"reduce_window_{_op}"] = _reduce_window(_op)
