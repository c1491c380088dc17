"""jnp.einsum and jnp.einsum_path.

Subscripts are parsed numpy-style (implicit or explicit output, '...' broadcasting, repeated
labels on one operand meaning a diagonal). Each operand first loses its private labels (diagonals
become strided views, labels used nowhere else are summed), then operands are contracted two at
a time with lax.dot_general, always picking the pair whose result is smallest (greedy, like
opt_einsum's default); an explicit contraction path is honoured.
"""

from __future__ import annotations

import builtins
import math

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.numpy import _manipulation
from pyjax.numpy._promotion import _aval, _is_array, _weak_result, asarray

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _ell_label(i: int) -> str:
    """Private label for the i-th broadcast (ellipsis) dimension, counted from the right."""
    return chr(0x2460 + i)


def _from_sublists(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) -> (subscripts, operands)."""
    args = list(args)
    out = None
    if len(args) % 2 == 1:
        out = args.pop()
    ops, terms = args[0::2], args[1::2]

    def conv(sub):
        s = ""
        for x in sub:
            if x is Ellipsis:
                s += "..."
            else:
                i = int(x)
                if not 0 <= i < len(_LETTERS):
                    raise ValueError(f"einsum: subscript index {i} out of range [0, {len(_LETTERS)})")
                s += _LETTERS[i]
        return s

    subs = ",".join(conv(t) for t in terms)
    if out is not None:
        subs += "->" + conv(out)
    return subs, ops


def _parse(subscripts: str, shapes: list) -> tuple[list, list, dict]:
    """(input label lists, output labels, label -> size) with '...' expanded to private labels."""
    subscripts = subscripts.replace(" ", "")
    if (
        subscripts.count("->") > 1
        or subscripts.count("-") != subscripts.count("->")
        or subscripts.count(">") != subscripts.count("->")
    ):
        raise ValueError("Subscripts can only contain one '->'.")
    explicit = "->" in subscripts
    lhs, out_sub = subscripts.split("->") if explicit else (subscripts, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"Number of einsum subscripts, {len(terms)}, must be equal to the number of operands, {len(shapes)}."
        )
    for t in terms + ([out_sub] if explicit else []):
        if "." in t and (t.count(".") != 3 or "..." not in t):
            raise ValueError("Invalid Ellipses.")
        for ch in t.replace("...", ""):
            if ch not in _LETTERS:
                raise ValueError(f"Character '{ch}' is not a valid symbol.")
    ins = []
    n_ell = 0
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        letters = t.replace("...", "")
        if "..." in t:
            e = len(shape) - len(letters)
            if e < 0:
                raise ValueError(
                    f"Einstein sum subscript '{t}' does not contain the correct number of indices for operand {k}."
                )
            pre, post = t.split("...")
            labels = list(pre) + [_ell_label(i) for i in range(e - 1, -1, -1)] + list(post)
            n_ell = builtins.max(n_ell, e)
        else:
            if len(letters) != len(shape):
                raise ValueError(
                    f"Einstein sum subscript '{t}' does not contain the correct number of indices for operand {k}."
                )
            labels = list(letters)
        ins.append(labels)
    sizes: dict = {}
    for k, (labels, shape) in enumerate(zip(ins, shapes)):
        for lab, d in zip(labels, shape):
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = d
            elif d != prev and d != 1:
                shown = lab if lab in _LETTERS else "..."
                raise ValueError(
                    f"Size of label '{shown}' for operand {k} ({d}) does not match previous terms ({prev})."
                )
    ell = [_ell_label(i) for i in range(n_ell - 1, -1, -1)]
    if explicit:
        out_letters = out_sub.replace("...", "")
        for ch in out_letters:
            if out_letters.count(ch) > 1:
                raise ValueError(f"Output character '{ch}' appeared more than once in the output.")
            if not builtins.any(ch in t for t in terms):
                raise ValueError(f"Output character '{ch}' did not appear in the input")
        if "..." in out_sub:
            pre, post = out_sub.split("...")
            out = list(pre) + ell + list(post)
        else:
            out = list(out_sub)
    else:
        counts: dict = {}
        for t in terms:
            for ch in t.replace("...", ""):
                counts[ch] = counts.get(ch, 0) + 1
        out = ell + sorted(ch for ch, c in counts.items() if c == 1)
    return ins, out, sizes


def _sum_labels(x, labels: list, drop: set):
    axes = tuple(i for i, lab in enumerate(labels) if lab in drop)
    if not axes:
        return x, labels
    if _aval(x).dtype is dtypes.bool_:
        x = lax.reduce_or(x, axes)
    else:
        x = lax.reduce_sum(x, axes)
    return x, [lab for lab in labels if lab not in drop]


def _prepare(x, labels: list, sizes: dict, keep: set):
    """Take diagonals of repeated labels, squeeze broadcast size-1 axes, sum labels not in keep."""
    labels = list(labels)
    while True:
        dup = next((lab for lab in labels if labels.count(lab) > 1), None)
        if dup is None:
            break
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        x = _manipulation.diagonal(x, 0, i, j)
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [dup]
    shape = _aval(x).shape
    sq = [i for i, (lab, d) in enumerate(zip(labels, shape)) if d == 1 and sizes[lab] != 1]
    if sq:
        x = lax.reshape(x, tuple(d for i, d in enumerate(shape) if i not in sq))
        labels = [lab for i, lab in enumerate(labels) if i not in sq]
    return _sum_labels(x, labels, {lab for lab in labels if lab not in keep})


def _contract(x, xl, y, yl, keep: set, pet):
    """dot_general of two labelled operands; labels in keep survive, shared others are contracted."""
    x, xl = _sum_labels(x, xl, {lab for lab in xl if lab not in keep and lab not in yl})
    y, yl = _sum_labels(y, yl, {lab for lab in yl if lab not in keep and lab not in xl})
    shared = [lab for lab in xl if lab in yl]
    batch = [lab for lab in shared if lab in keep]
    contract = [lab for lab in shared if lab not in keep]
    dn = (
        (tuple(xl.index(lab) for lab in contract), tuple(yl.index(lab) for lab in contract)),
        (tuple(xl.index(lab) for lab in batch), tuple(yl.index(lab) for lab in batch)),
    )
    out = lax.dot_general(x, y, dn, preferred_element_type=pet)
    labels = batch + [lab for lab in xl if lab not in shared] + [lab for lab in yl if lab not in shared]
    return out, labels


def _result_size(la, lb, keep, sizes):
    return math.prod(sizes[lab] for lab in set(la) | set(lb) if lab in keep)


def _greedy_path(labels: list, out: list, sizes: dict) -> list:
    cur = [list(lab) for lab in labels]
    path = []
    while len(cur) > 1:
        best = None
        for i in range(len(cur)):
            for j in range(i + 1, len(cur)):
                keep = set(out)
                for k, lab in enumerate(cur):
                    if k not in (i, j):
                        keep.update(lab)
                cost = _result_size(cur[i], cur[j], keep, sizes)
                if best is None or cost < best[0]:
                    best = (cost, i, j, keep)
        _, i, j, keep = best
        merged = [lab for lab in dict.fromkeys(cur[i] + cur[j]) if lab in keep]
        cur = [lab for k, lab in enumerate(cur) if k not in (i, j)] + [merged]
        path.append((i, j))
    return path


def _normalize_path(optimize, n: int, labels, out, sizes) -> list:
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        optimize = optimize[1:]
    if isinstance(optimize, (list, tuple)) and builtins.all(isinstance(p, (list, tuple)) for p in optimize):
        return [tuple(int(i) for i in p) for p in optimize]
    if optimize not in (
        True,
        False,
        None,
        "greedy",
        "optimal",
        "auto",
        "dp",
        "branch-2",
        "branch-all",
        "random-greedy",
        "eager",
        "no-optimize",
    ):
        raise ValueError(f"einsum: unknown optimize={optimize!r}")
    return _greedy_path(labels, out, sizes)


def einsum(
    subscripts, /, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None, _dot_general=None
):
    """Einstein summation over the operands described by `subscripts` (numpy's grammar)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + tuple(operands))
    if not operands:
        raise ValueError("No input operands")
    ops = [o if _is_array(o) else asarray(o) for o in operands]
    d, weak = _weak_result(*ops)
    ops = [lax._convert(o, d, weak) if _aval(o).dtype is not d else o for o in ops]
    pet = dtypes.canonicalize(preferred_element_type) if preferred_element_type is not None else None
    labels, out_labels, sizes = _parse(subscripts, [_aval(o).shape for o in ops])
    path = _normalize_path(optimize, len(ops), labels, out_labels, sizes)
    return _run(ops, labels, out_labels, sizes, path, pet)


def _run(ops, labels, out_labels, sizes, path, pet):
    cur = []
    for k, (x, lab) in enumerate(zip(ops, labels)):
        keep = set(out_labels)
        for j, other in enumerate(labels):
            if j != k:
                keep.update(other)
        cur.append(_prepare(x, lab, sizes, keep))
    for step in path:
        if len(step) == 1:
            continue
        i, j = step
        keep = set(out_labels)
        for k, (_, lab) in enumerate(cur):
            if k not in (i, j):
                keep.update(lab)
        (x, xl), (y, yl) = cur[i], cur[j]
        res = _contract(x, xl, y, yl, keep, pet)
        cur = [c for k, c in enumerate(cur) if k not in (i, j)] + [res]
    if len(cur) != 1:
        raise ValueError(f"einsum: the contraction path leaves {len(cur)} operands instead of one")
    x, xl = cur[0]
    x, xl = _sum_labels(x, xl, {lab for lab in xl if lab not in out_labels})
    missing = [lab for lab in out_labels if lab not in xl]
    if missing:  # output labels whose every occurrence was a broadcast size-1 axis
        x = lax.reshape(x, _aval(x).shape + (1,) * len(missing))
        xl = xl + missing
    perm = [xl.index(lab) for lab in out_labels]
    x = lax.transpose(x, perm)
    if pet is not None and _aval(x).dtype is not pet:
        x = lax.convert_element_type(x, pet)
    return x


def einsum_path(subscripts, /, *operands, optimize="greedy"):
    """(contraction path, description) that einsum would follow for these operands."""
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts,) + tuple(operands))
    shapes = [tuple(o.shape) if hasattr(o, "shape") else _aval(asarray(o)).shape for o in operands]
    labels, out_labels, sizes = _parse(subscripts, shapes)
    path = _normalize_path(optimize, len(shapes), labels, out_labels, sizes)

    def show(ls):
        return "".join(lab if lab in _LETTERS else "." for lab in ls)

    lines = [f"  Complete contraction:  {','.join(show(lab) for lab in labels)}->{show(out_labels)}"]
    cur = [list(lab) for lab in labels]
    for i, j in (p for p in path if len(p) == 2):
        keep = set(out_labels)
        for k, lab in enumerate(cur):
            if k not in (i, j):
                keep.update(lab)
        merged = [lab for lab in dict.fromkeys(cur[i] + cur[j]) if lab in keep]
        lines.append(f"  {show(cur[i])},{show(cur[j])}->{show(merged)}")
        cur = [lab for k, lab in enumerate(cur) if k not in (i, j)] + [merged]
    return list(path), "\n".join(lines)


__all__ = ["einsum", "einsum_path"]
