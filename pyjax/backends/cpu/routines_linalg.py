"""cpu backend routines for the linalg primitives (numpy and pure-Python implementations).

`lu`: LU decomposition with partial pivoting (LAPACK getrf semantics): the pivot of column j is
the first row of largest magnitude at or below j; a zero pivot column is left as is (no division),
so singular matrices factor without error and show a zero on U's diagonal. Outputs are the packed
factors, the 0-based pivot rows and the resulting row permutation. Computed in float64.
"""

from __future__ import annotations

import math

from pyjax.backends.cpu.rounding import normalizer


def _lu_numpy(r, ins):
    import numpy as np

    (a,) = ins
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    nb = math.prod(batch)
    w = a.astype(np.float64).reshape((nb, m, n)).copy()
    piv = np.zeros((nb, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (nb, 1))
    rows = np.arange(nb)
    with np.errstate(all="ignore"):
        for j in range(k):
            col = np.abs(w[:, j:, j])
            # the first row of largest magnitude (NaNs never win, as with LAPACK's idamax)
            p = (np.argmax(np.where(np.isnan(col), -1.0, col), axis=-1) + j).astype(np.int32)
            piv[:, j] = p
            swap = p != j
            if swap.any():
                rj = w[rows, j, :].copy()
                w[rows, j, :] = w[rows, p, :]
                w[rows, p, :] = rj
                pj = perm[rows, j].copy()
                perm[rows, j] = perm[rows, p]
                perm[rows, p] = pj
            pivot = w[:, j, j]
            safe = np.where(pivot == 0, 1.0, pivot)
            w[:, j + 1 :, j] = np.where((pivot != 0)[:, None], w[:, j + 1 :, j] / safe[:, None], w[:, j + 1 :, j])
            if j + 1 < n and j + 1 < m:
                w[:, j + 1 :, j + 1 :] -= w[:, j + 1 :, j : j + 1] * w[:, j : j + 1, j + 1 :]
    return [w.reshape(a.shape).astype(a.dtype), piv.reshape(batch + (k,)), perm.reshape(batch + (m,))]


def register_numpy(routines: dict) -> None:
    """Add name -> fn(routine, inputs shaped per routine.in_avals) -> list of outputs."""
    routines["lu"] = _lu_numpy


def _lu_python(r, ins):
    aval = r.in_avals[0]
    m, n = aval.shape[-2:]
    k = min(m, n)
    norm = normalizer(aval.dtype)
    flat = ins[0]
    size = m * n
    nb = len(flat) // size if size else math.prod(aval.shape[:-2])
    out_lu, out_piv, out_perm = [], [], []
    for b in range(nb):
        w = [[float(flat[b * size + i * n + j]) for j in range(n)] for i in range(m)]
        perm = list(range(m))
        for j in range(k):
            best, p = -1.0, j
            for i in range(j, m):
                v = abs(w[i][j])
                if v == v and v > best:
                    best, p = v, i
            out_piv.append(p)
            if p != j:
                w[j], w[p] = w[p], w[j]
                perm[j], perm[p] = perm[p], perm[j]
            pivot = w[j][j]
            if pivot != 0:
                for i in range(j + 1, m):
                    w[i][j] = w[i][j] / pivot
            for i in range(j + 1, m):
                f, row, prow = w[i][j], w[i], w[j]
                for c in range(j + 1, n):
                    row[c] = row[c] - f * prow[c]
        out_lu.extend(norm(v) for row in w for v in row)
        out_perm.extend(perm)
    return [out_lu, out_piv, out_perm]


def register_python(routines: dict) -> None:
    """Add name -> fn(routine, flat input lists) -> list of flat output lists."""
    routines["lu"] = _lu_python
