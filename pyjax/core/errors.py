"""JAX's exception classes (same names and base classes, so user `except` clauses carry over)."""

from __future__ import annotations

_CONTROL_FLOW_HINT = (
    "Python control flow on traced values is not possible: use lax.cond, lax.switch, "
    "lax.while_loop, lax.fori_loop or jnp.where instead, or mark the argument static with "
    "jit's static_argnums/static_argnames."
)


class JAXTypeError(TypeError):
    pass


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where a concrete Python value is needed."""

    def __init__(self, tracer, context: str = ""):
        aval = getattr(tracer, "aval", tracer)
        msg = f"Abstract tracer value encountered where concrete value is expected: {aval}\n"
        if context:
            msg += context + "\n"
        super().__init__(msg + _CONTROL_FLOW_HINT)


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        super().__init__(tracer, "The truth value of a traced array was requested (bool() / if / while).")


class TracerIntegerConversionError(JAXTypeError):
    def __init__(self, tracer):
        aval = getattr(tracer, "aval", tracer)
        super().__init__(
            "The __index__() method was called on a traced array with shape "
            f"{aval}. Index with a concrete value, or use lax.dynamic_slice.\n" + _CONTROL_FLOW_HINT
        )


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer):
        aval = getattr(tracer, "aval", tracer)
        super().__init__(
            f"The numpy.ndarray conversion method __array__() was called on a traced array {aval}. "
            "Use pyjax.numpy functions inside transformed functions, not numpy ones."
        )


class UnexpectedTracerError(JAXTypeError):
    pass


class KeyReuseError(JAXTypeError):
    pass


class JaxRuntimeError(RuntimeError):
    """A failure while running a computation (JAX's XlaRuntimeError)."""


class JaxprTypeError(TypeError):
    pass


class InconclusiveDimensionOperation(Exception):
    pass


class JAXIndexError(IndexError):
    pass


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index was traced: its True count (the result's shape) is unknown."""

    def __init__(self, aval):
        super().__init__(
            f"Array boolean indices must be concrete; got {aval}\n\n"
            "Boolean indexing needs a concrete mask because the result's shape depends on its values. "
            "Inside jit use jnp.where(mask, x, fill), or jnp.nonzero(mask, size=...) with a static size."
        )
