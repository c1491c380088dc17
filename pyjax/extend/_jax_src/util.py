"""jax._src.util under alias_jax: the list helpers that custom interpreters and libraries import
(safe_map and safe_zip insist on equal lengths; the others split and merge lists)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def _same_lengths(name: str, args: Sequence[Sequence]) -> None:
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"{name} length mismatch: {tuple(len(x) for x in args)}")


def safe_map(f: Callable, *args: Sequence) -> list:
    """map(f, *args) as a list; the arguments must have equal lengths."""
    args = tuple(list(a) for a in args)
    _same_lengths("safe_map", args)
    return list(map(f, *args))


def safe_zip(*args: Sequence) -> list:
    """zip(*args) as a list; the arguments must have equal lengths."""
    args = tuple(list(a) for a in args)
    _same_lengths("safe_zip", args)
    return list(zip(*args))


def unzip2(pairs) -> tuple[tuple, tuple]:
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def unzip3(triples) -> tuple[tuple, tuple, tuple]:
    a_s, b_s, c_s = [], [], []
    for a, b, c in triples:
        a_s.append(a)
        b_s.append(b)
        c_s.append(c)
    return tuple(a_s), tuple(b_s), tuple(c_s)


def split_list(args: Sequence, ns: Sequence[int]) -> list[list]:
    """args cut into pieces of lengths ns, then the rest."""
    args, out = list(args), []
    for n in ns:
        out.append(args[:n])
        args = args[n:]
    out.append(args)
    return out


def partition_list(bs: Sequence[bool], xs: Sequence) -> tuple[list, list]:
    """(the xs whose flag is False, the xs whose flag is True)."""
    falses, trues = [], []
    for b, x in zip(bs, xs):
        (trues if b else falses).append(x)
    return falses, trues


def merge_lists(bs: Sequence[bool], falses: Sequence, trues: Sequence) -> list:
    """partition_list undone: the items back in order of their flags."""
    f, t = iter(falses), iter(trues)
    return [next(t) if b else next(f) for b in bs]


def curry(f: Callable) -> Callable[..., Any]:
    """curry(f)(*a)(*b) == f(*a, *b)."""
    import functools

    return functools.partial(functools.partial, f)
