"""Ordering tokens (JAX's create_token, after_all) and dce_sink.

JAX threads tokens through side effects to order them; pyjax runs effects in program order, so a
Token carries nothing. It is a pytree with no leaves, so it passes in and out of jit and vmap.
"""

from __future__ import annotations

from typing import Any

from pyjax.core.pytree import register_pytree_node
from pyjax.lax.decomposed import CallingPrimitive

__all__ = ["Token", "create_token", "after_all", "dce_sink", "create_token_p", "after_all_p"]


class Token:
    """An ordering token; every token is interchangeable with every other."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token()"


register_pytree_node(Token, lambda t: ((), None), lambda aux, children: Token())


def create_token(_: Any = None) -> Token:
    """A new token (the argument is ignored, as in JAX)."""
    return Token()


def after_all(*operands: Token) -> Token:
    """A token ordered after all the given tokens."""
    if any(not isinstance(t, Token) for t in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return Token()


def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Marks val as used (JAX keeps it from dead-code elimination); pyjax computes what it is given."""
    del val, prevent_mlir_dce


create_token_p = CallingPrimitive("create_token", lambda *_, **__: Token())
after_all_p = CallingPrimitive("after_all", lambda *tokens, **__: after_all(*tokens))
