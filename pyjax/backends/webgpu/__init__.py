"""webgpu layer."""
