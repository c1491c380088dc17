"""pyjax.alias_jax(): `import jax` resolves to pyjax. Each case runs in a subprocess, so the real JAX
that this pytest process uses as the oracle stays untouched."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> subprocess.CompletedProcess:
    code = textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def _ok(code: str) -> str:
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_alias_resolves_jax_and_its_submodules():
    out = _ok(
        """
        import sys, pyjax
        jax = pyjax.alias_jax()
        assert pyjax.alias_jax() is jax  # idempotent
        import jax as j2, jax.numpy as jnp, jax.scipy.special, jax.numpy.linalg
        from jax import lax, random, nn, tree_util
        from jax.scipy.special import logsumexp
        import jax.experimental, jax.typing, jax.dtypes, jax.sharding, jax.flatten_util
        import jax.test_util, jax.extend, jax.extend.core, jax.core, jax.interpreters.ad
        from jax.experimental import checkify
        from jax._src import compiler  # chex imports it
        from jax._src.util import safe_map, safe_zip  # custom interpreters (JAX's docs) import them
        assert safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6] and safe_zip("ab", [1, 2]) == [("a", 1), ("b", 2)]
        try:
            safe_map(max, [1], [1, 2])
        except ValueError:
            pass
        else:
            raise AssertionError("safe_map took lists of different lengths")
        assert jax.core is pyjax.extend.core and jax.core.Tracer is pyjax.core.core.Tracer
        assert checkify is pyjax.experimental.checkify and jax.interpreters.ad is pyjax.extend.interpreters.ad
        import jax.image  # loaded lazily by pyjax
        assert j2 is jax and jax.__version__ == pyjax._alias.JAX_API_VERSION
        assert jnp is pyjax.numpy and lax is pyjax.lax and nn is pyjax.nn and tree_util is pyjax.tree_util
        assert jax.numpy.linalg is pyjax.numpy.linalg and jax.image is pyjax.image
        assert sys.modules["jax.scipy.special"] is pyjax.scipy.special and logsumexp is pyjax.scipy.special.logsumexp
        assert pyjax.numpy.__spec__.name == "pyjax.numpy"  # the alias keeps pyjax's module specs
        assert jax.jit is pyjax.jit and "grad" in dir(jax)
        import numpy as np
        assert np.dtype("bfloat16") == jnp.bfloat16.dtype  # ml_dtypes registered, as importing jax does
        assert not any(n.startswith("jaxlib") for n in sys.modules)  # the real jax never loaded
        print(float(jax.grad(lambda x: jnp.sin(x) * 2)(0.0)))
        try:
            import jax.no_such_module
        except ModuleNotFoundError as e:
            assert "jax.no_such_module" in str(e), e
        else:
            raise AssertionError("jax.no_such_module imported")
        """
    )
    assert out.strip() == "2.0"


def test_alias_refuses_after_the_real_jax():
    proc = _run(
        """
        import jax, pyjax
        pyjax.alias_jax()
        """
    )
    assert proc.returncode != 0 and "RuntimeError" in proc.stderr and "already imported" in proc.stderr, proc.stderr


_OPTAX_PROGRAM = """
import jax, jax.numpy as jnp, optax
params = {"w": jnp.array([1.0, -2.0])}
opt = optax.adam(0.1)
state = opt.init(params)
loss = lambda p: jnp.sum(p["w"] ** 2)
for _ in range(3):
    updates, state = opt.update(jax.grad(loss)(params), state)
    params = optax.apply_updates(params, updates)
"""


def test_alias_runs_chex():
    out = _ok(
        """
        import pyjax
        pyjax.alias_jax()
        import chex, jax, jax.numpy as jnp
        chex.assert_shape(jnp.ones((2, 3)), (2, 3))

        @chex.chexify
        @jax.jit
        def f(x):
            chex.assert_tree_all_finite(x)
            return x * 2

        print(f(jnp.ones(2)).tolist())
        try:
            f(jnp.array([jnp.nan]))
            f.wait_checks()
        except AssertionError as e:
            print("caught", "assert_tree_all_finite" in str(e))
        """
    )
    assert out.split("\n")[:2] == ["[2.0, 2.0]", "caught True"], out


def test_alias_runs_optax_as_jax_does():
    out = _ok("import pyjax\npyjax.alias_jax()\n" + _OPTAX_PROGRAM + "print(params['w'].tolist())")
    scope: dict = {}
    exec(_OPTAX_PROGRAM, scope)  # the same program on the real JAX, in this process
    got = [float(v) for v in out.strip().strip("[]").split(",")]
    want = scope["params"]["w"].tolist()
    assert all(abs(a - b) <= 1e-6 * (1 + abs(b)) for a, b in zip(got, want)), (got, want)
