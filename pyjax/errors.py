"""JAX's exception classes, importable as `pyjax.errors` (`from jax.errors import ...` carries over)."""

from pyjax.core.errors import (  # noqa: F401
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JaxprTypeError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxprTypeError",
    "JaxRuntimeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
