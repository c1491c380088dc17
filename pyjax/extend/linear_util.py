"""pyjax.extend.linear_util (jax.extend.linear_util): wrap_init, the function wrapper JAX's internals pass around."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class WrappedFun:
    """A function with fixed keyword params; call_wrapped(*args) calls it."""

    def __init__(self, f: Callable, params: dict | None = None, debug_info: Any = None):
        self.f = f
        self.params = dict(params or {})
        self.debug_info = debug_info

    def call_wrapped(self, *args):
        return self.f(*args, **self.params)

    __call__ = call_wrapped

    def __repr__(self):
        return f"Wrapped function: {getattr(self.f, '__name__', self.f)!r}"


def wrap_init(f: Callable, params: dict | None = None, *, debug_info: Any = None) -> WrappedFun:
    return WrappedFun(f, params, debug_info)


__all__ = ["WrappedFun", "wrap_init"]
