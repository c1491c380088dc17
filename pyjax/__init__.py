"""pyjax: JAX for the browser, in Python.

`import pyjax as jax; import pyjax.numpy as jnp` runs ordinary JAX programs on the cpu
reference backend, on WebAssembly (wasm) and on WebGPU (webgpu). Backends and hosts load
lazily, on first use.
"""

from pyjax.core.config import config
from pyjax import numpy  # noqa: F401  (installs array methods and the runtime)
from pyjax import tree_util  # noqa: F401
from pyjax import tree  # noqa: F401
from pyjax import lax  # noqa: F401
from pyjax.api import (  # noqa: F401
    ShapeDtypeStruct,
    block_until_ready,
    clear_caches,
    disable_jit,
    ensure_compile_time_eval,
    named_call,
    typeof,
    device_get,
    device_get_async,
    device_put,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
    pmap,
)
from pyjax.api import jacrev as jacobian  # noqa: F401  (JAX's alias of jacrev)
from pyjax._typing import Array  # noqa: F401
from pyjax.runtime.device import (  # noqa: F401
    default_backend,
    device_count,
    devices,
    local_devices,
)
from pyjax.runtime.device import default_device_ctx as default_device  # noqa: F401
from pyjax.runtime.device import init_async  # noqa: F401
from pyjax.custom_derivatives import checkpoint, checkpoint_policies, custom_jvp, custom_vjp, remat  # noqa: F401
from pyjax import custom_batching  # noqa: F401
from pyjax import typing  # noqa: F401
from pyjax import errors  # noqa: F401
from pyjax import flatten_util  # noqa: F401
from pyjax import random  # noqa: F401
from pyjax import nn  # noqa: F401
from pyjax import scipy  # noqa: F401
from pyjax import debug  # noqa: F401
from pyjax import dtypes  # noqa: F401
from pyjax import experimental  # noqa: F401
from pyjax import ops  # noqa: F401
from pyjax._callback import pure_callback  # noqa: F401
from pyjax._alias import alias_jax  # noqa: F401
from pyjax.api import (  # noqa: F401
    check_tracer_leaks,
    checking_leaks,
    closure_convert,
    copy_to_host_async,
    custom_gradient,
    debug_infs,
    debug_nans,
    default_matmul_precision,
    effects_barrier,
    enable_checks,
    enable_x64,
    explain_cache_misses,
    linear_transpose,
    live_arrays,
    local_device_count,
    log_compiles,
    make_array_from_callback,
    named_scope,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    print_environment_info,
    process_count,
    process_index,
    process_indices,
    transfer_guard,
)
from pyjax.api import process_count as host_count  # noqa: F401
from pyjax.api import process_index as host_id  # noqa: F401
from pyjax.runtime.device import Device  # noqa: F401
from pyjax.runtime.array import Shard  # noqa: F401
from pyjax import sharding, stages  # noqa: F401
from pyjax.sharding import NamedSharding, P, make_mesh, reshard, set_mesh  # noqa: F401
from pyjax._shard_map import shard_map, smap  # noqa: F401
from pyjax import ref  # noqa: F401
from pyjax.ref import Ref, ds, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from pyjax import distributed  # noqa: F401
from pyjax.sharding import MemorySpace as _MemorySpace
from pyjax.api import (  # noqa: F401
    allow_f16_reductions,
    array_garbage_collection_guard,
    auto_pcast,
    host_ids,
    make_user_context,
    jax2tf_associative_scan_reductions,
    remove_size_one_mesh_axis_from_type,
    debug_key_reuse,
    default_prng_impl,
    enable_custom_prng,
    fwd_and_bwd,
    legacy_prng_key,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    no_execution,
    no_tracing,
    softmax_custom_jvp,
    thread_guard,
    threefry_partitionable,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)

__version__ = "0.1.0"
memory = __import__("types").SimpleNamespace(Space=_MemorySpace)  # jax.memory.Space


def __getattr__(name: str):
    """pyjax.image, profiler, export, monitoring, ffi, dlpack and version load on first use, as JAX's do (keeps `import pyjax` fast)."""
    if name == "float0":  # numpy's dtype, made on first use
        from pyjax import dtypes as _dtypes

        return _dtypes.float0
    if name in ("image", "profiler", "export", "monitoring", "ffi", "dlpack", "version"):
        import importlib

        return importlib.import_module(f"pyjax.{name}")
    raise AttributeError(f"module 'pyjax' has no attribute {name!r}")


__all__ = ["config", "numpy", "lax", "tree_util", "jit", "grad", "value_and_grad", "vjp", "jvp", "vmap"]
