"""Elementwise math written once: each non-core function as a decomposition into core scalar ops.

A backend renders core ops only (arithmetic, comparisons, where, floor, sqrt, casts, bitcasts,
integer and bit ops) plus whatever native math it declares; `expand` rewrites every other
elementwise function of a kernel (exp, log, tanh, ...) into core ops through the table
`DECOMPOSITIONS`, so each backend inherits all of them and a vectorizing backend renders the
same decomposition as SIMD lanes.

The float32 algorithms are branch-free (both sides of a `where` are computed: GPUs and SIMD
lanes run them anyway): range reduction by k ln2 with a two-part ln2, exponent/mantissa split
from the bits (subnormals included), minimax polynomials (relative error fits, rounded to f32,
fitted ranges noted below). They use only + - * / (each rounded once), floor, sqrt and
integer/bit operations, never exact-cancellation tricks such as (a + b) - a that loose float
compilers fold, and test NaN with the core `isnan`. Measured max error in
tests/test_math_decompositions.py: within 3e-7 relative of the float64 value (contract 2e-6).
float16/bfloat16 are computed in float32 and rounded once. float64 runs the same expressions
with its own coefficient sets and thresholds (int64 bit operations for the exponent split):
within 2e-15 relative (tests/wasm/test_mathlib.py).
"""

from __future__ import annotations

from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Node
from pyjax.compiler.mathlib import exponential, expr, hyperbolic, power, special, trigonometric
from pyjax.compiler.mathlib.expr import F32, V
from pyjax.core import dtypes

__all__ = ["DECOMPOSITIONS", "EXACT_ARITHMETIC", "expand", "expand_kernel", "logaddexp"]

# op -> builder (arguments and result as V, float32 or float64), one table per topic module
DECOMPOSITIONS = {**exponential.TABLE, **hyperbolic.TABLE, **special.TABLE, **trigonometric.TABLE, **power.TABLE}
# ops whose decompositions rely on error-free transformations (see power.py)
EXACT_ARITHMETIC = power.EXACT_ARITHMETIC

# dtype name -> the precision it computes in
_COMPUTE = {"float32": F32, "float16": F32, "bfloat16": F32, "float64": expr.F64}
_COMPUTE.update({name: F32 for name in dtypes.FLOAT8})


def expand(root: Node, native: frozenset = frozenset(), memo: dict | None = None) -> Node:
    """root with every op of DECOMPOSITIONS (float64, float32, float16, bfloat16) that is not in
    `native` replaced by its decomposition into core ops. float16/bfloat16 compute in float32.
    `native` may also name "madd" (a * b + c, fused or not): the polynomials then use it."""
    memo = {} if memo is None else memo
    expr.native = native
    for n in ir.walk(root):
        if n in memo:
            continue
        srcs = tuple(memo[s] for s in n.srcs)
        out = n if srcs == n.srcs else ir.node(n.op, n.dtype, srcs, n.arg)
        if n.op in DECOMPOSITIONS and n.op not in native and n.dtype.name in _COMPUTE:
            args = [V(ir.cast(s, _COMPUTE[n.dtype.name])) for s in srcs]
            out = ir.cast(DECOMPOSITIONS[n.op](*args).n, n.dtype)
        memo[n] = out
    return memo[root]


def expand_kernel(k: Kernel, native: frozenset = frozenset(), memo: dict | None = None) -> Kernel:
    """k with its epilogue and body expanded (the same kernel object if nothing changed); memo,
    if given, receives each original node's image (the other new nodes are decompositions')."""
    memo = {} if memo is None else memo
    epilogue = expand(k.epilogue, native, memo)
    body = expand(k.body, native, memo) if k.body is not None else None
    if epilogue is k.epilogue and body is k.body:
        return k
    return Kernel(k.shape, k.in_dtypes, epilogue, k.reduce_op, k.reduce_axes, body, k.name)


def logaddexp(a: Node, b: Node, native: frozenset = frozenset()) -> Node:
    """log(exp(a) + exp(b)) as core ops, the step of the routines that combine with it (cumulative
    logsumexp): a + ln2 where a == b (equal infinities too), else max(a, b) + log1p(exp(-|a - b|));
    NaN passes (max propagates it)."""
    d = a.dtype
    tail = ir.alu("log1p", ir.alu("exp", ir.alu("neg", ir.alu("abs", ir.alu("sub", a, b)))))
    same = ir.alu("add", a, ir.const(expr.LN2, d))
    return expand(ir.where(ir.alu("eq", a, b), same, ir.alu("add", ir.alu("max", a, b), tail)), native)
