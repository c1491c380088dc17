"""pyjax.experimental.sparse._base: JAXSparse, the abstract base of the sparse array classes (BCOO, BCSR),
with the array-like attributes they share (ndim, size, T, len, repr) and the errors they raise."""

from __future__ import annotations

import abc
import math

from pyjax.core.core import Tracer


class SparseEfficiencyError(ValueError):
    """An operation would store many explicit zeros (raised where JAX raises it)."""


class SparseEfficiencyWarning(UserWarning):
    """An operation stores many explicit zeros."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """JAX's cuSPARSE fallback warning (kept for name compatibility; pyjax has no cuSPARSE)."""


class JAXSparse(abc.ABC):
    """Base class of the high-level sparse array types: a shape plus buffers that are pytree leaves."""

    data: object
    shape: tuple[int, ...]
    __hash__ = None
    __array_priority__ = 2000  # above tracers': dense arrays' operators defer to the sparse reflected ones

    def __init__(self, args, *, shape):
        self.shape = tuple(int(s) for s in shape)

    @property
    @abc.abstractmethod
    def dtype(self): ...

    @property
    @abc.abstractmethod
    def nse(self) -> int: ...

    def __len__(self):
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _repr_extra(self) -> str:
        return ""

    def __repr__(self):
        name = type(self).__name__
        try:
            text = f"{name}({self.dtype}{list(self.shape)}, nse={self.nse}{self._repr_extra()})"
        except Exception:
            text = f"{name}(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    @abc.abstractmethod
    def tree_flatten(self): ...

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @abc.abstractmethod
    def todense(self): ...

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for buf in self.tree_flatten()[0]:
            buf.block_until_ready()
        return self
