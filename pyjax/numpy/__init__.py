"""pyjax.numpy: JAX's numpy API."""

from __future__ import annotations  # noqa: F401  (exported by `import *` before the split)

from pyjax import runtime as _runtime  # noqa: F401  (installs the executor)
from pyjax.core.dtypes import (  # noqa: F401
    bool_type as bool_,
    dtype as _dtype_fn,
    finfo,
    iinfo,
    promote_types,
)
from pyjax.core import dtypes as _dtypes
from pyjax.dtypes import issubdtype  # noqa: F401  (knows typed-key dtypes too)
from pyjax.numpy._promotion import *  # noqa: F401,F403
from pyjax.numpy._elementwise import *  # noqa: F401,F403
from pyjax.numpy._reductions import *  # noqa: F401,F403

# Names that `from _core import *` exported before numpy was filed by topic, kept so dir() is unchanged.
import builtins  # noqa: F401,E402
import math  # noqa: F401,E402
import operator  # noqa: F401,E402
from pyjax.core import core, dtypes  # noqa: F401,E402
from pyjax.core.core import Tracer, get_aval  # noqa: F401,E402
from pyjax.core.dtypes import DType  # noqa: F401,E402
from pyjax.lax import lax  # noqa: F401,E402
from pyjax.lax._util import canonical_axis  # noqa: F401,E402
from pyjax.runtime.array import Array  # noqa: F401,E402
from pyjax._typing import Array as ndarray  # noqa: F401
from pyjax.numpy import _methods

float16 = _dtypes.SCALAR_TYPES["float16"]
float32 = _dtypes.SCALAR_TYPES["float32"]
float64 = _dtypes.SCALAR_TYPES["float64"]
int8 = _dtypes.SCALAR_TYPES["int8"]
int16 = _dtypes.SCALAR_TYPES["int16"]
int32 = _dtypes.SCALAR_TYPES["int32"]
int64 = _dtypes.SCALAR_TYPES["int64"]
uint8 = _dtypes.SCALAR_TYPES["uint8"]
uint16 = _dtypes.SCALAR_TYPES["uint16"]
uint32 = _dtypes.SCALAR_TYPES["uint32"]
uint64 = _dtypes.SCALAR_TYPES["uint64"]
bfloat16 = _dtypes.SCALAR_TYPES["bfloat16"]
float8_e4m3fn = _dtypes.SCALAR_TYPES["float8_e4m3fn"]
float8_e5m2 = _dtypes.SCALAR_TYPES["float8_e5m2"]
float8_e4m3fnuz = _dtypes.SCALAR_TYPES["float8_e4m3fnuz"]
float8_e5m2fnuz = _dtypes.SCALAR_TYPES["float8_e5m2fnuz"]
float8_e4m3b11fnuz = _dtypes.SCALAR_TYPES["float8_e4m3b11fnuz"]
float8_e4m3 = _dtypes.SCALAR_TYPES["float8_e4m3"]
float8_e3m4 = _dtypes.SCALAR_TYPES["float8_e3m4"]
float8_e8m0fnu = _dtypes.SCALAR_TYPES["float8_e8m0fnu"]
float6_e2m3fn = _dtypes.SCALAR_TYPES["float6_e2m3fn"]
float6_e3m2fn = _dtypes.SCALAR_TYPES["float6_e3m2fn"]
float4_e2m1fn = _dtypes.SCALAR_TYPES["float4_e2m1fn"]
int4, uint4 = _dtypes.SCALAR_TYPES["int4"], _dtypes.SCALAR_TYPES["uint4"]
int2, uint2 = _dtypes.SCALAR_TYPES["int2"], _dtypes.SCALAR_TYPES["uint2"]
int1, uint1 = _dtypes.SCALAR_TYPES["int1"], _dtypes.SCALAR_TYPES["uint1"]
complex64 = _dtypes.SCALAR_TYPES["complex64"]
complex128 = _dtypes.SCALAR_TYPES["complex128"]
complex_ = complex128
csingle, cdouble = complex64, complex128
float_ = float64
int_ = int64
uint = uint64
single, double, half = float32, float64, float16
bool = bool_  # noqa: A001

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
euler_gamma = 0.5772156649015329
newaxis = None


def dtype(spec):
    """jnp.dtype(spec): the canonical pyjax dtype object."""
    return _dtype_fn(spec)


_methods.install()
from pyjax.numpy._sorting import *  # noqa: F401,F403,E402
from pyjax.numpy import linalg  # noqa: F401,E402
from pyjax.numpy.linalg import _numpy_vecdot as vecdot  # noqa: F401,E402
from pyjax.numpy._einsum import einsum, einsum_path  # noqa: F401,E402
from pyjax.numpy._indexing import *  # noqa: F401,F403,E402
from pyjax.numpy._setops import *  # noqa: F401,F403,E402
from pyjax.numpy._differences import *  # noqa: F401,F403,E402
from pyjax.numpy._statistics import *  # noqa: F401,F403,E402
from pyjax.numpy._polynomial import *  # noqa: F401,F403,E402
from pyjax.numpy._manipulation import *  # noqa: F401,F403,E402
from pyjax.numpy._pad import *  # noqa: F401,F403,E402
from pyjax.numpy._creation import *  # noqa: F401,F403,E402
from pyjax.numpy._ranges import *  # noqa: F401,F403,E402
from pyjax.numpy._floating import *  # noqa: F401,F403,E402
from pyjax.numpy._functional import *  # noqa: F401,F403,E402
from pyjax.numpy._convolution import *  # noqa: F401,F403,E402
from pyjax.numpy._windows import *  # noqa: F401,F403,E402
from pyjax.numpy._products import *  # noqa: F401,F403,E402
from pyjax.numpy._scalar_types import *  # noqa: F401,F403,E402
from pyjax.numpy._printing import *  # noqa: F401,F403,E402
from pyjax.numpy._index_tricks import *  # noqa: F401,F403,E402
from pyjax.numpy._bits import *  # noqa: F401,F403,E402
from pyjax.numpy import fft  # noqa: F401,E402
from pyjax.numpy._ufuncs import *  # noqa: F401,F403,E402  (jnp.add, ... as ufunc objects)
from pyjax.numpy._io import fromfile, load, save, savez  # noqa: F401,E402
