"""backends layer."""
