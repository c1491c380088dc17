"""placeholder"""


def compile_routine(r, backend):
    raise NotImplementedError(f"wasm backend: routine {r.name}")
