"""Convolutions: the `conv_general_dilated` primitive and JAX's lax wrappers around it.

Semantics are XLA's: lhs (input) is padded with explicit (lo, hi) pairs (negative pads crop)
after inserting lhs_dilation - 1 zeros between its elements, the kernel (rhs) taps are spaced
rhs_dilation apart, and windows step window_strides. Grouping: with feature_group_count G the
lhs channels and the kernel's output features split into G group-major blocks; with
batch_group_count B the lhs batch and the kernel's output features split into B blocks.

Both gradients are convolutions again (lhs: the transposed conv, rhs: a conv of the input with
the output cotangent, batch and feature roles swapped), computed in the canonical layout
(N, C, spatial...) / (O, I, spatial...) and transposed back, so every dimension-number layout
shares one derivation. vmap folds the batch axis into the batch, feature or group axes.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

from pyjax.compiler.lowering_conv import conv_out_shape
from pyjax.compiler.lowering_conv import dilated as _dilate
from pyjax.core import dtypes
from pyjax.core.core import ShapedArray, bind, get_aval
from pyjax.interpreters import ad, batching
from pyjax.lax import lax
from pyjax.lax._util import _arr, static_ints
from pyjax.lax.lax import _as_array, _aval, _inv_perm, _prim
from pyjax.lax.types import Precision, PrecisionLike

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "Precision",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_general_dilated_patches",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "padtype_to_pads",
    "conv_general_dilated_local",
]


class ConvDimensionNumbers(NamedTuple):
    """Per operand, the axis positions of (batch, feature, spatial...) for lhs and output and
    (out feature, in feature, spatial...) for rhs."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


ConvGeneralDilatedDimensionNumbers = object  # typing alias: None | (str, str, str) | ConvDimensionNumbers


def conv_general_permutations(dimension_numbers) -> tuple:
    """(lhs_perm, rhs_perm, out_perm) for string dimension numbers like ('NCHW', 'OIHW', 'NCHW')."""
    lhs_s, rhs_s, out_s = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                f"exactly once, got {dimension_numbers[i]}."
            )
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {dimension_numbers[i]}."
            )
    if not (set(lhs_s) - {"N", "C"} == set(rhs_s) - {"O", "I"} == set(out_s) - {"N", "C"}):
        raise TypeError(
            f"convolution dimension_numbers elements must each have the same set of spatial "
            f"characters, got {tuple(dimension_numbers)}."
        )

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        # spatial axes are ordered as they appear in the kernel spec
        spatial.sort(key=lambda i: rhs_s.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return perm(lhs_s, pairs[0]), perm(rhs_s, pairs[1]), perm(out_s, pairs[2])


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Canonical ConvDimensionNumbers from None, a 3-tuple of layout strings, or itself."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError(f"convolution dimension_numbers list/tuple must be length 3, got {len(dimension_numbers)}.")
        if not all(isinstance(e, str) for e in dimension_numbers):
            raise TypeError(
                f"convolution dimension_numbers elements must be strings, got "
                f"{tuple(type(e) for e in dimension_numbers)}."
            )
        for i, e in enumerate(dimension_numbers):
            if len(e) != len(lhs_shape):
                raise TypeError(
                    f"convolution dimension_numbers[{i}] must have len equal to the ndim of lhs "
                    f"and rhs, got {len(e)} for lhs and rhs shapes {tuple(lhs_shape)} and "
                    f"{tuple(rhs_shape)}."
                )
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError(f"convolution dimension_numbers must be tuple/list or None, got {type(dimension_numbers)}.")


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """Explicit (lo, hi) pads for 'SAME', 'SAME_LOWER' or 'VALID' padding."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads expects a padding string, got {padding!r}")
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got {padding}.")
    out = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        o = -(-n // s)
        total = builtins.max((o - 1) * s + k - n, 0)
        lo = total // 2 if mode == "SAME" else total - total // 2
        out.append((lo, total - lo))
    return out


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count: int = 1) -> tuple:
    """Output shape of a conv of (N, C, spatial...) lhs and (O, I, spatial...) rhs shapes; pads are
    (lo, hi) pairs or a padding string. A batch of -1 (unknown, as stax uses it) passes through."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            f"Wrong number of explicit pads for convolution: expected {len(lhs_shape) - 2}, got {len(pads)}."
        )
    if builtins.any(n + lo + hi < 0 for n, (lo, hi) in zip(lhs_shape[2:], pads)):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: "
            f"got padding={list(pads)} for lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    iota, ones = tuple(range(len(lhs_shape))), (1,) * len(pads)
    return conv_out_shape(
        lhs_shape,
        rhs_shape,
        window_strides=strides,
        padding=pads,
        lhs_dilation=ones,
        rhs_dilation=ones,
        dimension_numbers=(iota, iota, iota),
        batch_group_count=batch_group_count,
    )


def _in_layouts(lhs_shape, rhs_shape, dimension_numbers, shape_fn) -> tuple:
    """shape_fn on the canonical (batch/feature first) shapes, put back in the output layout."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    canon = shape_fn([lhs_shape[i] for i in dn.lhs_spec], [rhs_shape[i] for i in dn.rhs_spec])
    out = [0] * len(canon)
    for k, pos in enumerate(dn.out_spec):
        out[pos] = int(canon[k])
    return tuple(out)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """Output shape of conv_general_dilated (no dilation) for the given layouts."""
    return _in_layouts(
        lhs_shape, rhs_shape, dimension_numbers, lambda lhs, rhs: conv_shape_tuple(lhs, rhs, window_strides, padding)
    )


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """Output shape of conv_transpose for the given layouts: (n - 1) s - k + 2 + total padding."""

    def canonical(lhs, rhs):
        ks = rhs[2:]
        pads = (
            [_conv_transpose_pads(k, s, padding) for k, s in zip(ks, window_strides)]
            if isinstance(padding, str)
            else padding
        )
        if len(pads) != len(ks):
            raise ValueError(f"conv_transpose_shape_tuple: expected {len(ks)} (lo, hi) pads, got {len(pads)}")
        space = [(n - 1) * s - k + 2 + lo + hi for n, k, s, (lo, hi) in zip(lhs[2:], ks, window_strides, pads)]
        return (lhs[0], rhs[0], *space)

    return _in_layouts(lhs_shape, rhs_shape, dimension_numbers, canonical)


# --- the primitive ------------------------------------------------------------------------------

conv_general_dilated_p = _prim("conv_general_dilated")


@conv_general_dilated_p.def_abstract_eval
def _conv_abstract(
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision=None,
    preferred_element_type=None,
):
    if lhs.ndim != rhs.ndim:
        raise ValueError(
            f"conv_general_dilated lhs and rhs must have the same number of dimensions, but got "
            f"{lhs.shape} and {rhs.shape}."
        )
    ls, rs, _ = dimension_numbers
    G, B = feature_group_count, batch_group_count
    if G <= 0:
        raise ValueError(f"conv_general_dilated feature_group_count must be a positive integer, got {G}.")
    if B <= 0:
        raise ValueError(f"conv_general_dilated batch_group_count must be a positive integer, got {B}.")
    if G > 1 and B > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got "
            f"batch_group_count={B} and feature_group_count={G}"
        )
    c_in, i_in, o_out, n_in = lhs.shape[ls[1]], rhs.shape[rs[1]], rhs.shape[rs[0]], lhs.shape[ls[0]]
    if c_in % G:
        raise ValueError(
            f"conv_general_dilated feature_group_count must divide lhs feature dimension size, "
            f"but {G} does not divide {c_in}."
        )
    if c_in // G != i_in:
        raise ValueError(
            f"conv_general_dilated lhs feature dimension size divided by feature_group_count must "
            f"equal the rhs input feature dimension size, but {c_in} // {G} != {i_in}."
        )
    if o_out % G:
        raise ValueError(
            f"conv_general_dilated rhs output feature dimension size must be a multiple of "
            f"feature_group_count, but {o_out} is not a multiple of {G}."
        )
    if B > 1 and n_in % B:
        raise ValueError(
            f"conv_general_dilated batch_group_count must divide lhs batch dimension size, but "
            f"{B} does not divide {n_in}."
        )
    if o_out % B:
        raise ValueError(
            f"conv_general_dilated rhs output feature dimension size must be a multiple of "
            f"batch_group_count, but {o_out} is not a multiple of {B}."
        )
    nsp = lhs.ndim - 2
    for name, v in (
        ("window_strides", window_strides),
        ("padding", padding),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ):
        if len(v) != nsp:
            raise ValueError(
                f"conv_general_dilated window and {name} must have the same number of dimensions, "
                f"but got {nsp} and {len(v)}"
            )
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if any(s <= 0 for s in v):
            raise ValueError(f"conv_general_dilated {name} must be positive, got {tuple(v)}.")
    window = tuple(rhs.shape[d] for d in rs[2:])
    if any(w <= 0 for w in window):  # XLA rejects an empty window (JAX: when lowering)
        raise ValueError(f"conv_general_dilated expects the window to have positive sizes, got {window}.")
    if lhs.dtype is not rhs.dtype:
        raise TypeError(
            f"conv_general_dilated requires arguments to have the same dtypes, got {lhs.dtype.name}, {rhs.dtype.name}."
        )
    shape = conv_out_shape(
        lhs.shape,
        rhs.shape,
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers,
        batch_group_count=B,
    )
    d = preferred_element_type or lhs.dtype
    return ShapedArray(shape, d, lhs.weak_type and rhs.weak_type and preferred_element_type is None)


def conv_general_dilated(
    lhs,
    rhs,
    window_strides: Sequence[int],
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision=None,
    preferred_element_type=None,
    *,
    out_sharding=None,
):
    """General n-d convolution (XLA ConvGeneralDilated): strides, explicit or 'SAME'/'VALID'
    padding, input (lhs) and kernel (rhs) dilation, any layout, feature and batch groups."""
    lhs, rhs = _as_array(lhs), _as_array(rhs)
    la, ra = _aval(lhs), _aval(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    if la.ndim < 2:
        raise TypeError(f"conv_general_dilated requires operands of rank >= 2, got shapes {la.shape} and {ra.shape}")
    nsp = la.ndim - 2
    window_strides = static_ints("conv_general_dilated", "window_strides", window_strides, nsp, "spatial dimension")
    lhs_dilation = static_ints("conv_general_dilated", "lhs_dilation", lhs_dilation, nsp, "spatial dimension")
    rhs_dilation = static_ints("conv_general_dilated", "rhs_dilation", rhs_dilation, nsp, "spatial dimension")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError(
                "String padding is not implemented for transposed convolution using this op. "
                "Please either exactly specify the required padding or use conv_transpose."
            )
        k_eff = [_dilate(ra.shape[i], r) for i, r in zip(dn.rhs_spec[2:], rhs_dilation)]
        in_sp = [la.shape[i] for i in dn.lhs_spec[2:]]
        padding = padtype_to_pads(in_sp, k_eff, window_strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"padding argument to conv_general_dilated should be a string or a sequence of "
            f"(low, high) pairs, got {padding}"
        ) from e
    pet = dtypes.canonicalize(preferred_element_type) if preferred_element_type is not None else None
    return bind(
        conv_general_dilated_p,
        lhs,
        rhs,
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dn,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=None,
        preferred_element_type=pet,
    )


def conv(lhs, rhs, window_strides: Sequence[int], padding, precision=None, preferred_element_type=None):
    """Convolution in NCHW/OIHW layout with strides and padding."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type
    )


def conv_with_general_padding(
    lhs,
    rhs,
    window_strides: Sequence[int],
    padding,
    lhs_dilation,
    rhs_dilation,
    precision=None,
    preferred_element_type=None,
):
    """Convolution in NCHW/OIHW layout with padding and both dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _conv_transpose_pads(k: int, s: int, padding) -> tuple:
    """(lo, hi) for the lhs-dilated conv that transposes a forward conv padded with `padding`."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + builtins.max(k - s, 0)
        lo = k - 1
    elif isinstance(padding, tuple):
        lo, hi = k - padding[0] - 1, k - padding[1] - 1
        total = lo + hi
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return lo, total - lo


def conv_transpose(
    lhs,
    rhs,
    strides: Sequence[int],
    padding,
    rhs_dilation=None,
    dimension_numbers=None,
    transpose_kernel: bool = False,
    precision=None,
    preferred_element_type=None,
    use_consistent_padding: bool = False,
):
    """Transposed ("deconvolution") n-d convolution: a conv with lhs_dilation=strides, using
    keras Conv2DTranspose's padding conventions; layouts default to NHWC/HWIO."""
    lhs, rhs = _as_array(lhs), _as_array(rhs)
    la, ra = _aval(lhs), _aval(rhs)
    nd = la.ndim
    if nd != ra.ndim or nd < 2:
        raise TypeError(f"conv_transpose requires lhs and rhs of equal rank >= 2, got {la.shape} and {ra.shape}")
    if dimension_numbers is None:
        defaults = {
            2: ("NC", "IO", "NC"),
            3: ("NHC", "HIO", "NHC"),
            4: ("NHWC", "HWIO", "NHWC"),
            5: ("NHWDC", "HWDIO", "NHWDC"),
        }
        if nd not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = nd - 2
    strides = static_ints("conv_transpose", "strides", strides, nsp, "spatial dimension")
    rhs_dilation = static_ints("conv_transpose", "rhs_dilation", rhs_dilation, nsp, "spatial dimension")
    ks = [ra.shape[i] for i in dn.rhs_spec[2:]]
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per = [padding] * nsp if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_conv_transpose_pads(_dilate(k, r), s, p) for k, r, s, p in zip(ks, rhs_dilation, strides, per))
    else:
        pads = padding
    if transpose_kernel:
        rhs = lax.rev(rhs, dn.rhs_spec[2:])
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = lax.transpose(rhs, perm)
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * nsp,
        pads,
        strides,
        rhs_dilation,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_patches(
    lhs,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
):
    """Patches (im2col) of lhs: a conv with a one-hot kernel; the output feature axis holds
    (input channel, window position...) flattened, channel-major."""
    lhs = _as_array(lhs)
    la = _aval(lhs)
    nd = la.ndim
    filter_shape = tuple(operator.index(k) for k in filter_shape)
    dn = conv_dimension_numbers(la.shape, (1,) * nd, dimension_numbers)
    c = la.shape[dn.lhs_spec[1]]
    per = math.prod(filter_shape)
    n_out = c * per
    # kernel in canonical (O, I=1, spatial...) layout with G=c groups: out feature o = ci*per + w
    eye = lax.convert_element_type(
        lax.eq(lax.broadcasted_iota(dtypes.int32, (per, per), 0), lax.broadcasted_iota(dtypes.int32, (per, per), 1)),
        la.dtype,
    )
    kern = lax.reshape(eye, (per, 1) + filter_shape)
    kern = lax.broadcast_in_dim(kern, (c, per, 1) + filter_shape, tuple(range(1, nd + 1)))
    kern = lax.reshape(kern, (n_out, 1) + filter_shape)
    rhs_dn = tuple(range(nd))
    canon_rhs = [0] * nd
    for k, pos in enumerate(dn.rhs_spec):
        canon_rhs[pos] = k
    kern = lax.transpose(kern, canon_rhs) if dn.rhs_spec != rhs_dn else kern
    return conv_general_dilated(
        lhs,
        kern,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        feature_group_count=c,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


# --- autodiff ---------------------------------------------------------------------------------


def _canon(x, spec):
    return lax.transpose(x, tuple(spec))


def _uncanon(x, spec):
    return lax.transpose(x, _inv_perm(tuple(spec)))


def _conv_canonical(lhs, rhs, nsp, **params):
    iota = tuple(range(nsp + 2))
    params = dict(params, dimension_numbers=ConvDimensionNumbers(iota, iota, iota))
    return bind(conv_general_dilated_p, lhs, rhs, **params)


_WINDOW = ("window_strides", "padding", "lhs_dilation", "rhs_dilation")


def _params(window: tuple, groups: tuple, preferred_element_type, dimension_numbers=None) -> dict:
    """conv_general_dilated_p's params from window = (strides, padding, lhs_dilation, rhs_dilation)
    and groups = (feature_group_count, batch_group_count)."""
    return dict(
        zip(_WINDOW, window),
        dimension_numbers=dimension_numbers,
        feature_group_count=groups[0],
        batch_group_count=groups[1],
        precision=None,
        preferred_element_type=preferred_element_type,
    )


def _lhs_grad(ct, rhs, lhs_shape, window: tuple, groups: tuple, preferred_element_type):
    """Cotangent of the canonical lhs (N, C, S...) given ct (N', O, Q...) and rhs (O, I, K...)."""
    window_strides, padding, lhs_dilation, rhs_dilation = window
    feature_group_count, batch_group_count = groups
    nsp = len(lhs_shape) - 2
    ra, ca = _aval(rhs), _aval(ct)
    O, I = ra.shape[:2]
    ks = ra.shape[2:]
    sp = tuple(range(2, nsp + 2))
    rr = lax.rev(rhs, sp)
    g = builtins.max(feature_group_count, batch_group_count)
    # kernel of the transposed conv: (g * [I or C], O/g, K...), group-major
    rr = lax.reshape(rr, (g, O // g, I) + ks)
    rr = lax.transpose(rr, (0, 2, 1) + tuple(range(3, nsp + 3)))
    rr = lax.reshape(rr, (g * I, O // g) + ks)
    pads = []
    for n, k, q, s, (lo, _), ld, rd in zip(
        lhs_shape[2:], ks, ca.shape[2:], window_strides, padding, lhs_dilation, rhs_dilation
    ):
        lo2 = (k - 1) * rd - lo
        length = (n - 1) * ld + (k - 1) * rd + 1 if n else 0
        pads.append((lo2, length - lo2 - _dilate(q, s)))
    transposed = (lhs_dilation, tuple(pads), window_strides, rhs_dilation)
    out = _conv_canonical(ct, rr, nsp, **_params(transposed, (g, 1), preferred_element_type))
    if batch_group_count > 1:
        B = batch_group_count
        oa = _aval(out)
        nb, c = oa.shape[:2]
        out = lax.reshape(out, (nb, B, c // B) + oa.shape[2:])
        out = lax.transpose(out, (1, 0) + tuple(range(2, nsp + 3)))
        out = lax.reshape(out, (B * nb, c // B) + oa.shape[2:])
    return out


def _rhs_grad(ct, lhs, rhs_shape, window: tuple, groups: tuple, preferred_element_type):
    """Cotangent of the canonical rhs (O, I, K...) given ct (N', O, Q...) and lhs (N, C, S...)."""
    window_strides, padding, lhs_dilation, rhs_dilation = window
    nsp = len(rhs_shape) - 2
    la, ca = _aval(lhs), _aval(ct)
    pads = []
    for n, k, q, s, (lo, _), ld, rd in zip(
        la.shape[2:], rhs_shape[2:], ca.shape[2:], window_strides, padding, lhs_dilation, rhs_dilation
    ):
        pads.append((lo, (k - 1) * rd + _dilate(q, s) - _dilate(n, ld) - lo))
    sp = tuple(range(2, nsp + 2))
    # lhs as (batch=C, feature=N), ct as kernel (out=O, in=N'): the output is (C or I, O, K...)
    swap = ConvDimensionNumbers((1, 0) + sp, (1, 0) + sp, tuple(range(nsp + 2)))
    # feature and batch group counts trade places in the transposed conv
    transposed = (rhs_dilation, tuple(pads), lhs_dilation, window_strides)
    out = bind(conv_general_dilated_p, lhs, ct, **_params(transposed, groups[::-1], preferred_element_type, swap))
    return lax.transpose(out, (1, 0) + sp)


def _conv_transpose(ct, lhs, rhs, **params):
    needs = [ad.is_undefined_primal(lhs), ad.is_undefined_primal(rhs)]
    dn = params["dimension_numbers"]
    la, ra = _aval(lhs), _aval(rhs)
    kw = {
        "window": tuple(params[k] for k in _WINDOW),
        "groups": (params["feature_group_count"], params["batch_group_count"]),
        "preferred_element_type": params["preferred_element_type"],
    }

    ctc = _canon(ct, dn.out_spec)
    wide = _aval(ctc).dtype  # preferred_element_type: differentiate in the wider dtype, return the operand's
    gl = gr = None
    if needs[0]:
        rc = _canon(rhs, dn.rhs_spec)
        rc = rc if ra.dtype is wide else lax.convert_element_type(rc, wide)
        lshape = _canon_shape(la.shape, dn.lhs_spec)
        gl = lax.convert_element_type(_uncanon(_lhs_grad(ctc, rc, lshape, **kw), dn.lhs_spec), la.dtype)
    if needs[1]:
        lc = _canon(lhs, dn.lhs_spec)
        lc = lc if la.dtype is wide else lax.convert_element_type(lc, wide)
        rshape = _canon_shape(ra.shape, dn.rhs_spec)
        gr = lax.convert_element_type(_uncanon(_rhs_grad(ctc, lc, rshape, **kw), dn.rhs_spec), ra.dtype)
    return [gl, gr]


def _canon_shape(shape, spec):
    return tuple(shape[i] for i in spec)


ad.jvp_rules[conv_general_dilated_p] = ad.bilinear_jvp(conv_general_dilated_p)
ad.transpose_rules[conv_general_dilated_p] = _conv_transpose


# --- vmap -------------------------------------------------------------------------------------


def _conv_batch(size, vals, dims, *, dimension_numbers, feature_group_count, batch_group_count, **params):
    lhs, rhs = vals
    ld, rd = dims
    dn = dimension_numbers
    nsp = len(dn.lhs_spec) - 2
    sp = tuple(range(nsp))
    G, B = feature_group_count, batch_group_count
    # canonical layouts with the vmapped axis first: lhs (V, N, C, S...), rhs (V, O, I, K...)
    if ld is not None:
        lhs = batching.moveaxis(lhs, ld, 0)
        lhs = lax.transpose(lhs, (0,) + tuple(1 + p for p in dn.lhs_spec))
    else:
        lhs = _canon(lhs, dn.lhs_spec)
    if rd is not None:
        rhs = batching.moveaxis(rhs, rd, 0)
        rhs = lax.transpose(rhs, (0,) + tuple(1 + p for p in dn.rhs_spec))
    else:
        rhs = _canon(rhs, dn.rhs_spec)
    V = size
    kw = dict(params, feature_group_count=G, batch_group_count=B)
    if rd is None:
        la = _aval(lhs)
        n, rest = la.shape[1], la.shape[2:]
        if B > 1:
            lhs = lax.reshape(lhs, (V, B, n // B) + rest)
            lhs = lax.transpose(lhs, (1, 0) + tuple(range(2, nsp + 4)))
        out = _conv_canonical(lax.reshape(lhs, (V * n,) + rest), rhs, nsp, **kw)
        oa = _aval(out)
        out = lax.reshape(out, (V, oa.shape[0] // V) + oa.shape[1:])
    elif ld is None:
        ra = _aval(rhs)
        o, rest = ra.shape[1], ra.shape[2:]
        g = builtins.max(G, B)
        r = lax.reshape(rhs, (V, g, o // g) + rest)
        r = lax.transpose(r, (1, 0) + tuple(range(2, nsp + 4)))
        out = _conv_canonical(lhs, lax.reshape(r, (g * V * (o // g),) + rest), nsp, **kw)
        oa = _aval(out)
        out = lax.reshape(out, (oa.shape[0], g, V, o // g) + oa.shape[2:])
        out = lax.transpose(out, (2, 0, 1, 3) + tuple(4 + i for i in sp))
        out = lax.reshape(out, (V, oa.shape[0], o) + oa.shape[2:])
    else:
        la, ra = _aval(lhs), _aval(rhs)
        o = ra.shape[1]
        r = lax.reshape(rhs, (V * o,) + ra.shape[2:])
        if B == 1:
            x = lax.transpose(lhs, (1, 0) + tuple(range(2, nsp + 3)))
            x = lax.reshape(x, (la.shape[1], V * la.shape[2]) + la.shape[3:])
            kw["feature_group_count"] = V * G
        else:
            x = lax.reshape(lhs, (V * la.shape[1],) + la.shape[2:])
            kw["batch_group_count"] = V * B
        out = _conv_canonical(x, r, nsp, **kw)
        oa = _aval(out)
        out = lax.reshape(out, (oa.shape[0], V, o) + oa.shape[2:])
        out = lax.transpose(out, (1, 0) + tuple(range(2, nsp + 3)))
    out = lax.transpose(out, (0,) + tuple(1 + p for p in _inv_perm(tuple(dn.out_spec))))
    return out, 0


batching.batch_rules[conv_general_dilated_p] = _conv_batch


# --- unshared convolution -------------------------------------------------------------------------


def conv_general_dilated_local(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: PrecisionLike = None,
) -> Any:
    """Locally connected (unshared) convolution: a separate kernel at every output position; rhs's
    spatial axes are the output's, its I axis holds (input channel, window position) flattened."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    la, ra = get_aval(lhs), get_aval(rhs)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers
    )
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    # patches (out layout) -> canonical (N, I, spatial...); rhs -> canonical (O, I, spatial...)
    p = lax.transpose(patches, tuple(dn.out_spec))
    w = lax.transpose(rhs, tuple(dn.rhs_spec))
    sp = tuple(range(2, 2 + nsp))
    out = lax.dot_general(p, w, (((1,), (1,)), (sp, sp)))  # (spatial..., N, O)
    canon = lax.transpose(out, (nsp, nsp + 1) + tuple(range(nsp)))  # (N, O, spatial...)
    inv = [0] * la.ndim
    for k, pos in enumerate(dn.out_spec):
        inv[pos] = k
    return lax.transpose(canon, tuple(inv))
