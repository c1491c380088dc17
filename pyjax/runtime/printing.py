"""repr/str of concrete arrays in JAX's format (`Array([1., 2.], dtype=float32)`)."""

from __future__ import annotations

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


def _np_value(x):
    return x._numpy()


def array_repr(x) -> str:
    d = x.aval.dtype
    suffix = f"dtype={d.name}" + (", weak_type=True" if x.aval.weak_type else "")
    if np is not None:
        a = _np_value(x)
        if a.size == 0:
            return f"Array([], shape={a.shape}, {suffix})"
        body = np.array2string(a, separator=", ", prefix="Array(")
        return f"Array({body}, {suffix})"
    return f"Array({_format_list(x.tolist(), d)}, {suffix})"


def array_str(x) -> str:
    if np is not None:
        return str(_np_value(x))
    return _format_list(x.tolist(), x.aval.dtype).replace(",", "")


def _format_list(v, d) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_format_list(e, d) for e in v) + "]"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        r = repr(v)
        return r[:-1] if r.endswith(".0") else r
    return str(v)
