"""wasm layer."""
