"""pyjax.image: jax.image's resize and scale_and_translate, composed from pyjax.numpy."""

from pyjax.image._resize import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
