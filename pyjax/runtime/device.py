"""Devices and backends: which backend runs an array's work, chosen lazily by platform name."""

from __future__ import annotations

import contextlib
import threading
import warnings

from pyjax import backends
from pyjax.core.config import config
from pyjax.runtime.buffers import LOCK

KNOWN_PLATFORMS = tuple(backends.REGISTRY)


class Device:
    """One device of a backend (each backend has exactly one device, id 0)."""

    __slots__ = ("platform", "id", "_backend")

    def __init__(self, platform: str):
        self.platform = platform
        self.id = 0
        self._backend = None

    @property
    def backend(self):
        if self._backend is None:
            with LOCK:  # two threads asking at once get one backend
                if self._backend is None:
                    self._backend = backends.create(self.platform)
        return self._backend

    device_kind = property(lambda self: self.platform)
    process_index = 0

    def __repr__(self):
        return backends.device_repr(self.platform) + "(id=0)"

    def __str__(self):
        return f"{self.platform}:0"


class Sharding:
    """How an array's elements are laid out over devices (jax.sharding.Sharding); pyjax has one device."""

    memory_kind: str | None = "device"

    @property
    def device_set(self) -> set:
        """The devices this sharding spans."""
        raise NotImplementedError

    is_fully_replicated = property(lambda self: True)
    is_fully_addressable = property(lambda self: True)
    num_devices = property(lambda self: len(self.device_set))
    addressable_devices = property(lambda self: self.device_set)

    def shard_shape(self, global_shape: tuple) -> tuple:
        """The shape of each shard of an array of global_shape (the whole array on one device)."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: tuple) -> dict:
        """Device -> the index (tuple of slices) of the part of the array it holds."""
        return {d: tuple(slice(None) for _ in global_shape) for d in self.device_set}

    def addressable_devices_indices_map(self, global_shape: tuple) -> dict:
        """devices_indices_map restricted to this process's devices (all of them)."""
        return self.devices_indices_map(global_shape)

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Do both shardings place an ndim-array the same way? (On one device: same devices.)"""
        return isinstance(other, Sharding) and self.device_set == other.device_set

    def with_memory_kind(self, kind: str) -> Sharding:
        """A copy of this sharding in memory kind (pyjax has only 'device' memory)."""
        raise NotImplementedError


class SingleDeviceSharding(Sharding):
    """The sharding of an array that lives whole on one device."""

    def __init__(self, device, *, memory_kind: str | None = None):
        self._device = device
        self.memory_kind = memory_kind or "device"

    device_set = property(lambda self: {self._device})
    device = property(lambda self: self._device)

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        """A copy in memory kind."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def __eq__(self, other):
        return (
            isinstance(other, SingleDeviceSharding)
            and self._device is other._device
            and self.memory_kind == other.memory_kind
        )

    def __hash__(self):
        return hash((self._device, self.memory_kind))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


_devices: dict[str, Device] = {}


def started_devices() -> list[Device]:
    """The devices whose backend exists already (asking a Device for its backend starts it)."""
    return [d for d in _devices.values() if d._backend is not None]


_unavailable: dict[str, str] = {}


class _DefaultStack(threading.local):
    """`with pyjax.default_device(d)` scopes, per thread as in JAX."""

    def __init__(self):
        self.devices: list[Device] = []


_default = _DefaultStack()
_chosen: list[Device] = []  # set by init_async; cleared when jax_platforms changes


def _available(platform: str) -> bool:
    """Can this platform's backend be created here? (tried once, remembered)."""
    if platform in _devices:
        return True
    if platform in _unavailable:
        return False
    if platform not in KNOWN_PLATFORMS:
        raise RuntimeError(f"Unknown backend {platform!r}; known platforms: {', '.join(KNOWN_PLATFORMS)}")
    dev = Device(platform)
    try:
        dev.backend  # noqa: B018 - creating it is the availability check
    except Exception as e:  # a missing host package or adapter makes the platform unavailable
        _unavailable[platform] = f"{type(e).__name__}: {e}"
        return False
    _devices[platform] = dev
    return True


# Without jax_platforms: webgpu once it was initialized (pyjax.init_async), then these.
DEFAULT_PLATFORMS = ["wasm", "cpu"]  # cpu (the slow reference) where wasmtime is missing


def _platform_list() -> list[str]:
    names = [p.strip() for p in (config.jax_platforms or "").split(",") if p.strip()]
    if names:
        return names
    return (["webgpu"] if "webgpu" in _devices else []) + DEFAULT_PLATFORMS


def get_device(platform: str) -> Device:
    if not _available(platform):
        reason = _unavailable.get(platform, "")
        raise RuntimeError(
            f"Backend '{platform}' failed to initialize: {reason}. "
            f"Available backends are {[p for p in KNOWN_PLATFORMS if p in _devices]}"
        )
    return _devices[platform]


def default_device() -> Device:
    stack = _default.devices
    if stack:
        return stack[-1]
    if _chosen:
        return _chosen[0]
    for name in _platform_list():
        if _available(name):
            return _devices[name]
        if len(_platform_list()) == 1:
            get_device(name)  # raises with the reason
    warnings.warn(f"No requested platform is available ({_platform_list()}); falling back to cpu.", stacklevel=2)
    return get_device("cpu")


def devices(backend: str | None = None) -> list[Device]:
    """pyjax.devices(): the devices of a backend (default: the default backend)."""
    if backend is None:
        return [default_device()]
    return [get_device(backend)]


def local_devices(process_index=None, backend=None) -> list[Device]:
    return devices(backend)


def device_count(backend=None) -> int:
    return len(devices(backend))


def default_backend() -> str:
    return default_device().platform


@contextlib.contextmanager
def default_device_ctx(device):
    """with pyjax.default_device(pyjax.devices('cpu')[0]): ..."""
    if isinstance(device, str):
        device = get_device(device)
    stack = _default.devices
    stack.append(device)
    try:
        yield device
    finally:
        stack.pop()


async def init_async(platform: str = "webgpu") -> Device:
    """Initialize a backend and make it the default device (the browser's entry point: await it).

    WebGPU in the browser needs an asynchronous adapter/device request, so call
    `await pyjax.init_async("webgpu")` before using it. Without an adapter (or navigator.gpu)
    pyjax warns once and falls back to wasm; asking for the webgpu device afterwards raises a
    clear error. `await pyjax.init_async("wasm")` also waits until the wasm thread pool's
    workers run (where the page is cross-origin isolated).
    """
    global _fallback_warned
    dev = _devices.get(platform)
    if dev is not None and dev._backend is not None and dev._backend.lost:
        del _devices[platform]  # the device was lost: its arrays are gone, start a new one
    if platform not in _devices:
        try:
            await backends.backend_class(platform).prepare_async()
            _unavailable.pop(platform, None)  # an earlier sync attempt may have failed (no JSPI)
            _async_failed.discard(platform)
        except Exception as e:  # no navigator.gpu / no adapter: fall back to the first default
            _unavailable[platform] = f"{type(e).__name__}: {e}"
            _async_failed.add(platform)
            fallback = DEFAULT_PLATFORMS[0]
            if not _fallback_warned:
                name = {"webgpu": "WebGPU"}.get(platform, platform)
                warnings.warn(f"pyjax: {name} is unavailable ({e}); using {fallback} instead.", stacklevel=2)
            _fallback_warned = True
            platform = fallback
    dev = get_device(platform)
    await dev.backend.start_async()  # the browser's wasm host: its thread pool starts while we wait
    _chosen[:] = [dev]
    return dev


_fallback_warned = False  # the fallback warns once
_async_failed: set[str] = set()  # platforms whose asynchronous setup failed: a config change keeps that


def _on_config(name, value):
    if name == "jax_platforms":
        _chosen.clear()
        for k in list(_unavailable):
            if k not in _async_failed:
                del _unavailable[k]


config.on_update(_on_config)
