"""Still more of jax.lax, composed from existing primitives: lax.fft (on pyjax.numpy.fft's
transforms), ragged_dot / ragged_dot_general (grouped matmuls for mixture-of-experts code, as one
masked dot_general), conv_general_dilated_local (unshared convolution, patches + dot_general),
composite, and the enums and small types JAX code passes around (FftType, DotAlgorithm,
DotAlgorithmPreset, RandomAlgorithm, ...). Everything is differentiable and batchable because it
is built from primitives that are.
"""

from __future__ import annotations

import enum
import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Union

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax.convolution import Precision, conv_dimension_numbers, conv_general_dilated_patches

__all__ = [
    "FftType",
    "fft",
    "RaggedDotDimensionNumbers",
    "ragged_dot",
    "ragged_dot_general",
    "conv_general_dilated_local",
    "composite",
    "DotDimensionNumbers",
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "PrecisionLike",
    "RandomAlgorithm",
    "AccuracyMode",
    "Tolerance",
    "rng_bit_generator",
]


def _jnp():
    import pyjax.numpy as jnp

    return jnp


def _arr(x):
    from pyjax.numpy import _core

    return x if _core._is_array(x) else _core.asarray(x)


# --- small types ----------------------------------------------------------------------------------

DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


class DotAlgorithm(NamedTuple):
    """A dot algorithm spec (operand/accumulation types); accepted as `precision=` and otherwise
    ignored: pyjax computes in the operand dtype, accumulating half precision in float32."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (JAX's presets); accepted as `precision=`, with no effect in pyjax."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[  # noqa: UP007  (a runtime alias, as JAX's)
    None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset
]


class RandomAlgorithm(enum.IntEnum):
    """Bit-generator algorithms of XLA's RngBitGenerator (for rng_bit_generator)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


class AccuracyMode(enum.Enum):
    """Accuracy request for transcendental ops (JAX's `accuracy=`); pyjax has one implementation each."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An error bound request for transcendental ops (JAX's `accuracy=`); recorded, not enforced."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


# --- fft ------------------------------------------------------------------------------------------


class FftType(enum.IntEnum):
    """Kind of lax.fft: complex forward/inverse, real-to-complex, complex-to-real."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self) -> str:
        return str(self.value)


def _fft_type(t: Any) -> FftType:
    if isinstance(t, FftType):
        return t
    if isinstance(t, str):
        try:
            return FftType[t.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{t}'") from None
    try:
        return FftType(t)
    except ValueError:
        raise TypeError(f"Unknown FFT type value '{t}'") from None


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """XLA's Fft over the len(fft_lengths) minor axes (IFFT normalized by 1/n, like numpy's ifft)."""
    t = _fft_type(fft_type)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    x = _arr(x)
    aval = get_aval(x)
    shape, nl = aval.shape, len(lengths)
    if aval.ndim < nl:
        raise ValueError(
            f"FFT input shape {shape} must have at least as many input dimensions as fft_lengths {lengths}."
        )
    jfft = _jnp().fft
    axes = tuple(range(aval.ndim - nl, aval.ndim))
    if t is FftType.RFFT:
        if aval.dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if aval.dtype.name not in ("float32", "float64"):
            raise ValueError(f"RFFT input must be float32 or float64, got {aval.dtype.name}")
    if t is FftType.IRFFT:
        want = lengths[:-1] + (lengths[-1] // 2 + 1,) if nl else ()
    else:
        want = lengths
    if shape[aval.ndim - nl :] != want:
        if t is FftType.IRFFT:
            raise ValueError(
                f"IRFFT input shape {shape} minor dimensions must be equal to the fft_lengths {lengths} "
                f"with the last one halved plus one: {want}"
            )
        raise ValueError(f"FFT input shape {shape} minor dimensions must be equal to fft_lengths {lengths}")
    if t is FftType.FFT:
        return jfft.fftn(x, axes=axes) if nl else jfft._complex_input(x, "fft")
    if t is FftType.IFFT:
        return jfft.ifftn(x, axes=axes) if nl else jfft._complex_input(x, "ifft")
    if t is FftType.RFFT:
        return jfft.rfftn(x, axes=axes)
    if not nl:
        return lax.real(jfft._complex_input(x, "irfft"))
    return jfft.irfftn(x, s=lengths, axes=axes)


# --- ragged dot -----------------------------------------------------------------------------------


class RaggedDotDimensionNumbers:
    """Dimension numbers of ragged_dot_general: dot_general's, the lhs ragged dimension, the rhs group one."""

    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")

    def __init__(
        self,
        dot_dimension_numbers: DotDimensionNumbers,
        lhs_ragged_dimensions: Sequence[int],
        rhs_group_dimensions: Sequence[int],
    ) -> None:
        (lc, rc), (lb, rb) = dot_dimension_numbers
        ints = lambda s: tuple(operator.index(i) for i in s)  # noqa: E731
        object.__setattr__(self, "dot_dimension_numbers", ((ints(lc), ints(rc)), (ints(lb), ints(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", ints(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", ints(rhs_group_dimensions))

    def __setattr__(self, name, value):
        raise AttributeError("RaggedDotDimensionNumbers is immutable")

    def _key(self) -> tuple:
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions, self.rhs_group_dimensions)

    def __eq__(self, other) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
            f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
            f"rhs_group_dimensions={self.rhs_group_dimensions})"
        )


_RAGGED_DOT_DN = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: PrecisionLike = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
) -> Any:
    """Grouped matmul: consecutive row blocks of lhs (m, k), sized by group_sizes (g,), each times
    its own rhs[i] (k, n); rows past sum(group_sizes) are zero. The core op of mixture-of-experts."""
    return ragged_dot_general(lhs, rhs, group_sizes, _RAGGED_DOT_DN, precision, preferred_element_type, group_offset)


def _group_mask(group_sizes, dims_shape: tuple, n: int):
    """Boolean (dims..., n, g): position i along a ragged axis of length n lies in group j."""
    gs = lax.convert_element_type(group_sizes, dtypes.int32)
    g = get_aval(gs).shape[-1]
    ends = _jnp().cumsum(gs, axis=-1)
    starts = lax.sub(ends, gs)
    nd = len(dims_shape)
    shape = dims_shape + (n, g)
    keep = tuple(range(nd)) + (nd + 1,)
    pos = lax.broadcasted_iota(dtypes.int32, shape, nd)
    lo = lax.broadcast_in_dim(starts, shape, keep)
    hi = lax.broadcast_in_dim(ends, shape, keep)
    return lax.bitwise_and(lax.ge(pos, lo), lax.lt(pos, hi))


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: PrecisionLike = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
) -> Any:
    """dot_general with one ragged lhs dimension split into groups by group_sizes: a non-contracting
    one (each group meets its own rhs slice along the rhs group dimension), a contracting one (one
    partial product per group, stacked in a new leading axis) or a batch one (plain dot_general)."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported by pyjax")
    dn = ragged_dot_dimension_numbers
    lhs, rhs, group_sizes = _arr(lhs), _arr(rhs), _arr(group_sizes)
    la, ra, ga = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    if ga.dtype.kind not in "iu":
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of np.integer.")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    r = dn.lhs_ragged_dimensions[0] % la.ndim if la.ndim else 0
    mode = "contracting" if r in lc else "batch" if r in lb else "noncontracting"
    rg = dn.rhs_group_dimensions
    if mode == "noncontracting":
        if len(rg) != 1:
            raise TypeError(
                "ragged_dot_general requires exactly one rhs group dimension when lhs ragged dimension "
                "is noncontracting."
            )
        if rg[0] in rc or rg[0] in rb:
            raise TypeError(
                "ragged_dot_general requires rhs group dimension numbers to be distinct from contracting "
                "and batch dimensions."
            )
    elif rg:
        raise TypeError(
            "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension is "
            "contracting or batch."
        )
    if ga.ndim < 1:
        raise TypeError("expected rank of group_sizes to be >=1.")
    g = ga.shape[-1]
    d = preferred_element_type
    if d is None and la.dtype is not ra.dtype:
        d = dtypes.promote_types(la.dtype, ra.dtype)
    if mode == "noncontracting":
        if ra.shape[rg[0]] != g:
            raise TypeError(f"expected rhs group dimension size to be {g}, got {ra.shape[rg[0]]}.")
    # dimensions of group_sizes other than g: the batch dims, then the outer dims of the ragged kind
    if mode == "batch":
        outer = [i for i in lb if i < r]
    elif mode == "contracting":
        outer = [i for i in lc if i < r]
    else:
        outer = [i for i in range(r) if i not in lc and i not in lb]
    lead = [] if mode == "batch" else list(lb)
    gs_dims = lead + outer
    if ga.ndim > 1:
        want = tuple(la.shape[i] for i in gs_dims) + (g,)
        if ga.shape != want:
            raise TypeError(f"expected group_sizes to have shape {want}, got {ga.shape}.")
    else:
        gs_dims = []
    if mode == "batch":
        # every batch element is in exactly one group; XLA computes all of them
        return lax.dot_general(lhs, rhs, dn.dot_dimension_numbers, precision, d)
    gdims_shape = tuple(la.shape[i] for i in gs_dims)
    mask = _group_mask(group_sizes, gdims_shape, la.shape[r])  # (gs dims..., n, g)
    full = la.shape + (g,)
    mask = lax.broadcast_in_dim(mask, full, tuple(gs_dims) + (r, la.ndim))
    lhs_g = lax.broadcast_in_dim(lhs, full, tuple(range(la.ndim)))
    lhs_g = lax.select(mask, lhs_g, lax.full_like(lhs_g, 0))
    if mode == "noncontracting":
        gdn = ((tuple(lc) + (la.ndim,), tuple(rc) + (rg[0],)), (tuple(lb), tuple(rb)))
        return lax.dot_general(lhs_g, rhs, gdn, precision, d)
    out = lax.dot_general(lhs_g, rhs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))), precision, d)
    # g is lhs's last free dimension: after the batch dims and lhs's other free dims
    n_lhs_free = la.ndim - len(lc) - len(lb)
    gpos = len(lb) + n_lhs_free
    nd = get_aval(out).ndim
    return lax.transpose(out, (gpos,) + tuple(i for i in range(nd) if i != gpos))


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


# --- composite ------------------------------------------------------------------------------------


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """Mark a function as the named composite op `name`: pyjax has no compiler that matches
    composites, so it always runs the decomposition (name, version and attributes are recorded)."""

    @functools.wraps(decomposition)
    def _composite(*args, **kwargs):
        return decomposition(*args, **kwargs)

    _composite.composite_name = name
    _composite.composite_version = version
    return _composite


# --- rng_bit_generator ----------------------------------------------------------------------------


def rng_bit_generator(
    key: Any, shape: Sequence[int], dtype: Any = dtypes.uint32, algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT
) -> tuple:
    """XLA's RngBitGenerator: not available in pyjax, since its bits could not be matched with
    XLA's (Philox 4x32-10 on CPU) bit for bit; use pyjax.random, which is bit-exact with JAX."""
    RandomAlgorithm(algorithm)
    raise NotImplementedError(
        f"lax.rng_bit_generator ({RandomAlgorithm(algorithm)}) is not implemented in pyjax: its output "
        "could not be made bit-exact with XLA's. Use pyjax.random (bit-exact with jax.random) instead."
    )
