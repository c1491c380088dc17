"""interpreters layer."""
