"""jax.monitoring: events, durations and scalars that libraries record, delivered to registered listeners
(pyjax itself records none; listeners see what user code and libraries record)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

_listeners: dict = {"event": [], "duration": [], "span": [], "scalar": []}


def record_event(event: str, **kwargs: Any) -> None:
    """Tell every event listener that event happened."""
    for fn in list(_listeners["event"]):
        fn(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: Any) -> None:
    """Tell every duration listener that event took duration seconds."""
    for fn in list(_listeners["duration"]):
        fn(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs: Any) -> None:
    """Tell every time-span listener that event ran from start_time to end_time."""
    for fn in list(_listeners["span"]):
        fn(event, start_time, end_time, **kwargs)


def record_scalar(key: str, value: float | int, **kwargs: Any) -> None:
    """Tell every scalar listener the value recorded under key."""
    for fn in list(_listeners["scalar"]):
        fn(key, value, **kwargs)


def _register(kind: str) -> Callable:
    def register(callback: Callable) -> None:
        _listeners[kind].append(callback)

    register.__doc__ = f"Call callback for every recorded {kind}."
    return register


def _unregister(kind: str) -> Callable:
    def unregister(callback: Callable) -> None:
        if callback not in _listeners[kind]:
            raise AssertionError(f"{callback} is not a registered {kind} listener")
        _listeners[kind].remove(callback)

    unregister.__doc__ = f"Stop calling callback for recorded {kind}s."
    return unregister


register_event_listener = _register("event")
register_event_duration_secs_listener = _register("duration")
register_event_time_span_listener = _register("span")
register_scalar_listener = _register("scalar")
unregister_event_listener = _unregister("event")
unregister_event_duration_listener = _unregister("duration")
unregister_event_time_span_listener = _unregister("span")
unregister_scalar_listener = _unregister("scalar")


def clear_event_listeners() -> None:
    """Forget every listener."""
    for v in _listeners.values():
        v.clear()
