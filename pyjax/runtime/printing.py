"""repr/str of concrete arrays in JAX's format (`Array([1., 2.], dtype=float32)`).

JAX prints through numpy's array2string. With numpy present (and a dtype numpy knows) we do
the same; without numpy (Pyodide offline) or for bfloat16, a pure-Python formatter follows
numpy's default print options: shortest round-trip digits (at most 8 after the point),
aligned columns, scientific notation for wide ranges, lines wrapped at 75 characters and
arrays over 1000 elements summarized with `...`.
"""

from __future__ import annotations

import contextlib
import math
import struct

from pyjax.core import dtypes

try:
    import numpy as np
except ImportError:  # pragma: no cover - exercised by the no-numpy test in a subprocess
    np = None

_PREFIX = "Array("

# The pure-Python formatter's options (numpy keeps its own when present; both are set together):
# 8 significant digits, arrays past 1000 elements summarized to 3 edge items, 75 columns.
_OPTIONS = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 75}
_OPTIONS.update({"suppress": False, "nanstr": "nan", "infstr": "inf", "formatter": None, "sign": "-"})
_OPTIONS.update({"floatmode": "maxprec", "legacy": False})


def get_printoptions() -> dict:
    """The current print options (numpy's when numpy is present, as jnp.get_printoptions is in JAX)."""
    if np is not None:
        return np.get_printoptions()
    return dict(_OPTIONS)


def set_printoptions(**options) -> None:
    """Set print options (precision, threshold, edgeitems, linewidth, suppress, ...) for arrays."""
    unknown = set(options) - set(_OPTIONS) - {"override_repr"}
    if unknown:
        raise TypeError(f"set_printoptions() got unexpected keyword arguments {sorted(unknown)}")
    if np is not None:
        np.set_printoptions(**options)
    _OPTIONS.update({k: v for k, v in options.items() if v is not None and k in _OPTIONS})
    for k in ("precision", "threshold", "edgeitems", "linewidth"):
        _OPTIONS[k] = int(_OPTIONS[k])


@contextlib.contextmanager
def printoptions(**options):
    """Context manager: set print options inside the block, restore them after."""
    saved_np = np.get_printoptions() if np is not None else None
    saved = dict(_OPTIONS)
    try:
        set_printoptions(**options)
        yield get_printoptions()
    finally:
        if saved_np is not None:
            np.set_printoptions(**saved_np)
        _OPTIONS.clear()
        _OPTIONS.update(saved)


def _dtype_suffix(x) -> str:
    d = x.aval.dtype
    return f"dtype={d.name}" + (", weak_type=True" if x.aval.weak_type else "") + ")"


def array_repr(x) -> str:
    """JAX's repr: `Array(<array2string with ', ' separators>, dtype=..., weak_type=True)`."""
    tail = _dtype_suffix(x)
    if x.size == 0:
        return f"{_PREFIX}[], shape={x.aval.shape}, {tail}"
    if _use_numpy(x):
        body = np.array2string(x._numpy(), prefix=_PREFIX, suffix=",", separator=", ")
    else:
        body = format_array(x.tolist(), x.aval.shape, x.aval.dtype.name, separator=", ", prefix=_PREFIX, suffix=",")
    last_line = len(body) - body.rfind("\n") + 1
    width = np.get_printoptions()["linewidth"] if np is not None else _OPTIONS["linewidth"]
    sep = " " * len(_PREFIX) if last_line + len(tail) + 1 > width else " "
    return f"{_PREFIX}{body},{sep}{tail}"


def array_str(x) -> str:
    """JAX's str: numpy's str of the value (scalars print like numpy scalars)."""
    if _use_numpy(x):
        return str(x._numpy())
    name = x.aval.dtype.name
    if not x.aval.shape:
        return format_scalar(x.item(), name)
    if x.size == 0:
        return "[]"
    return format_array(x.tolist(), x.aval.shape, name, separator=" ")


def _use_numpy(x) -> bool:
    return np is not None and x.aval.dtype.name != "bfloat16"


# --- pure-Python formatter --------------------------------------------------------------------


_PART = {"complex64": "float32", "complex128": "float64"}


def format_scalar(v, dtype_name: str) -> str:
    """str() of one element as a numpy scalar of that dtype prints it."""
    if dtype_name in _PART:  # numpy: (re+imj), each part printed on its own, re dropped when 0
        v, part = complex(v), _PART[dtype_name]
        im = _short_part(format_scalar(v.imag, part))
        sign = "" if im.startswith("-") else "+"
        if v.real == 0 and math.copysign(1.0, v.real) > 0:
            return f"{im}j"
        re = _short_part(format_scalar(v.real, part))
        return f"({re}{sign}{im}j)"
    if dtype_name == "bool":
        return str(bool(v))
    if dtype_name == "bfloat16" or dtype_name in dtypes.FLOAT8:
        return _bf16_str(v)
    if isinstance(v, int) or dtype_name[0] in "iu":
        return str(int(v))
    if not math.isfinite(v):
        return _nonfinite(v)
    # numpy scalars switch to scientific notation outside [1e-4, cutoff); cutoff depends on precision
    cutoff = {"float16": 1e3, "float32": 1e6}.get(dtype_name, 1e16)
    a = abs(v)
    digits, exp = _shortest(v, dtype_name)
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if a == 0 or 1e-4 <= a < cutoff:
        ip, fp = _positional_parts(digits, exp)
        return f"{sign}{ip}.{fp or '0'}"
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mant}e{_exp_str(exp, 2)}"


def format_array(
    nested, shape: tuple, dtype_name: str, separator: str = " ", prefix: str = "", suffix: str = ""
) -> str:
    """numpy.array2string of a nested list (default print options), e.g. `[[0. 1.]\\n [2. 3.]]`."""
    size = math.prod(shape)
    summarize = size > _OPTIONS["threshold"]
    if not shape:
        return _formatter([nested], dtype_name, scalar=True)(nested)
    shown = _flatten(_edges(nested, len(shape)) if summarize else nested, len(shape))
    fmt = _formatter(shown, dtype_name, scalar=False)
    width = _OPTIONS["linewidth"] - len(suffix)
    return _layout(nested, len(shape), fmt, separator, " " + " " * len(prefix), width, summarize)


def _edges(nested, ndim: int):
    """The leading and trailing `edgeitems` along every axis (what a summarized print shows)."""
    if ndim == 0:
        return nested
    e = _OPTIONS["edgeitems"]
    items = nested if len(nested) <= 2 * e else nested[:e] + nested[-e:]
    return [_edges(x, ndim - 1) for x in items]


def _flatten(nested, ndim: int) -> list:
    if ndim == 0:
        return [nested]
    out = []
    for e in nested:
        out.extend(_flatten(e, ndim - 1))
    return out


def _layout(nested, ndim, fmt, separator, indent, width, summarize) -> str:
    """Nested brackets with wrapping: rows of the last axis fill lines up to `width`."""

    def wrap(text, line, word, limit, hang):
        if len(line) + len(word) > limit and len(line) > len(hang):
            text += line.rstrip() + "\n"
            line = hang
        return text, line + word

    def rec(node, depth, hang, limit):
        axes_left = ndim - depth
        n = len(node)
        e = _OPTIONS["edgeitems"]
        idx = list(range(e)) + [None] + list(range(n - e, n)) if summarize and n > 2 * e else list(range(n))
        inner_hang, inner_limit = hang + " ", limit - 1
        if axes_left == 1:
            elem_limit = limit - max(len(separator.rstrip()), 1)
            text, line = "", hang
            for k, i in enumerate(idx):
                word = "..." if i is None else fmt(node[i])
                last = k == len(idx) - 1
                text, line = wrap(text, line, word, limit - 1 if last else elem_limit, hang)
                if not last:
                    line += separator
            text += line
        else:
            line_sep = separator.rstrip() + "\n" * (axes_left - 1)
            parts = [hang + ("..." if i is None else rec(node[i], depth + 1, inner_hang, inner_limit)) for i in idx]
            text = line_sep.join(parts)
        return "[" + text[len(hang) :] + "]"

    return rec(nested, 0, indent, width)


def _formatter(values: list, dtype_name: str, scalar: bool):
    """A function formatting each element to a common width, chosen from the values shown."""
    if dtype_name in _PART:
        return _complex_formatter(values, _PART[dtype_name])
    if dtype_name == "bool":
        return (lambda v: str(bool(v))) if scalar else (lambda v: str(bool(v)).rjust(5))
    if dtype_name in dtypes.INTN:  # ml_dtypes prints each element of its types on its own, unaligned
        return lambda v: str(int(v))
    if dtype_name[0] in "iu":
        w = max(len(str(int(v))) for v in values)
        return lambda v: str(int(v)).rjust(w)
    if dtype_name == "bfloat16" or dtype_name in dtypes.FLOAT8:
        return _bf16_str
    return _float_formatter(values, dtype_name)


def _float_formatter(values: list, dtype_name: str):
    finite = [v for v in values if math.isfinite(v)]
    nonzero = [abs(v) for v in finite if v != 0]
    # numpy's rule: scientific when the largest value needs more digits than the dtype holds
    # (10**min(8, precision)), for tiny values, or when values span more than 3 decades
    # (comparisons happen in the dtype's precision, as numpy does them)
    big = {"float16": 1e3, "float32": 1e6}.get(dtype_name, 1e8)
    if nonzero:
        lo, hi = min(nonzero), max(nonzero)
        ratio = _in_dtype(hi / lo, dtype_name) if lo else math.inf
        sci = hi >= big or lo < _in_dtype(1e-4, dtype_name) or ratio > 1e3
    else:
        sci = False

    if sci:
        # all mantissas get as many fraction digits as the longest shortest-form one needs
        def sci_digits(v, nfrac=None):
            digits, exp = _shortest(v, dtype_name)
            if len(digits) - 1 > _OPTIONS["precision"]:
                digits, exp = _round_sig(v, _OPTIONS["precision"] + 1)
            if nfrac is not None and len(digits) - 1 < nfrac:
                digits, exp = _round_sig(v, nfrac + 1)
            return digits, exp

        parts = [sci_digits(v) for v in finite]
        nfrac = max((len(d) - 1 for d, _ in parts), default=0)
        exp_w = max([2] + [len(str(abs(e))) for _, e in parts])
        pad_left = max((1 + (math.copysign(1.0, v) < 0) for v in finite), default=0)

        def finite_str(v):
            digits, exp = sci_digits(v, nfrac)
            ip = ("-" if math.copysign(1.0, v) < 0 else "") + digits[0]
            return f"{ip.rjust(pad_left)}.{digits[1:]}e{_exp_str(exp, exp_w)}"

    else:

        def pos_parts(v):
            digits, exp = _shortest(v, dtype_name)
            ip, fp = _positional_parts(digits, exp)
            if len(fp) > _OPTIONS["precision"]:
                ip, fp = _fixed(v)
            return ("-" if math.copysign(1.0, v) < 0 else "") + ip, fp

        parts = [pos_parts(v) for v in finite]
        pad_left = max((len(ip) for ip, _ in parts), default=0)
        pad_right = max((len(fp) for _, fp in parts), default=0)

        def finite_str(v):
            ip, fp = pos_parts(v)
            return f"{ip.rjust(pad_left)}.{fp.ljust(pad_right)}"

    width = max([len(finite_str(v)) for v in finite[:1]] + [len(_nonfinite(v)) for v in values if not math.isfinite(v)])

    def fmt(v):
        return (finite_str(v) if math.isfinite(v) else _nonfinite(v)).rjust(width)

    return fmt


def _short_part(s: str) -> str:
    """numpy prints the parts of a complex scalar without a trailing '.0'."""
    mant, e, exp = s.partition("e")
    mant = mant[:-2] if mant.endswith(".0") else mant
    return mant + e + exp


def _complex_formatter(values: list, part: str):
    """numpy's layout: real parts aligned as floats, then a signed imaginary part and 'j' (its padding after)."""
    values = [complex(v) for v in values]
    re_fmt = _float_formatter([v.real for v in values], part)
    im_fmt = _float_formatter([abs(v.imag) for v in values], part)

    def fmt(v):
        v = complex(v)
        im = im_fmt(abs(v.imag)).lstrip()
        sign = "-" if math.copysign(1.0, v.imag) < 0 else "+"
        body = im.rstrip()
        return f"{re_fmt(v.real)}{sign}{body}j" + " " * (len(im) - len(body))

    return fmt


def _nonfinite(v) -> str:
    if math.isnan(v):
        return "nan"
    return "-inf" if v < 0 else "inf"


def _exp_str(exp: int, width: int) -> str:
    return ("-" if exp < 0 else "+") + str(abs(exp)).rjust(width, "0")


def _positional_parts(digits: str, exp: int) -> tuple[str, str]:
    """Integer and fraction digit strings of 0.d1d2... * 10**(exp+1) written positionally."""
    if digits == "0":
        return "0", ""
    if exp >= 0:
        ip = digits[: exp + 1].ljust(exp + 1, "0")
        return ip, digits[exp + 1 :]
    return "0", "0" * (-exp - 1) + digits


def _fixed(v: float) -> tuple[str, str]:
    """Exact value rounded to `precision` fractional digits, trailing zeros dropped."""
    s = f"{abs(v):.{_OPTIONS['precision']}f}"
    ip, fp = s.split(".")
    return ip, fp.rstrip("0")


def _round_sig(v: float, n: int) -> tuple[str, int]:
    """The exact value rounded to n significant digits: (digits, decimal exponent)."""
    s = f"{abs(v):.{n - 1}e}"
    mant, exp = s.split("e")
    return mant.replace(".", ""), int(exp)


_ROUNDTRIP = {"float32": "<f", "float16": "<e"}


def _in_dtype(v: float, dtype_name: str) -> float:
    """v rounded to the dtype (overflow gives inf)."""
    fmt = _ROUNDTRIP.get(dtype_name)
    if fmt is None or not math.isfinite(v):
        return v
    try:
        return struct.unpack(fmt, struct.pack(fmt, v))[0]
    except OverflowError:
        return math.inf


def _shortest(v: float, dtype_name: str) -> tuple[str, int]:
    """Shortest digits that round-trip in the dtype: (significant digits, decimal exponent)."""
    a = abs(v)
    if a == 0:
        return "0", 0
    fmt = _ROUNDTRIP.get(dtype_name)
    if fmt is None:  # float64: Python's repr is already the shortest round-trip
        mant, _, exp = repr(a).partition("e")
        return _normalize(mant, int(exp or 0))
    for n in range(1, 18):
        s = f"{a:.{n - 1}e}"
        try:
            back = struct.unpack(fmt, struct.pack(fmt, float(s)))[0]
        except OverflowError:
            continue
        if back == a:
            mant, exp = s.split("e")
            digits = mant.replace(".", "").rstrip("0") or "0"
            return digits, int(exp)
    mant, exp = f"{a:.16e}".split("e")  # pragma: no cover - every float round-trips within 17 digits
    return mant.replace(".", "").rstrip("0"), int(exp)


def _normalize(mant: str, exp: int) -> tuple[str, int]:
    """Digits and exponent (value = d.ddd * 10**exp) from a positional mantissa like '123.45'."""
    ip, _, fp = mant.partition(".")
    all_digits = (ip + fp).lstrip("0")
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    e10 = len(ip) - 1 - lead_zeros + exp
    return (all_digits.rstrip("0") or "0"), e10


def _bf16_str(v) -> str:
    """ml_dtypes prints bfloat16 like C++ streams print a float: 6 significant digits, %g style."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    return f"{v:g}"
