// Byte-compiles an unpacked pure-Python wheel with the CPython inside the served Pyodide, so the
// page imports pyjax from cached bytecode instead of compiling ~1 MB of source on every load
// (the cost of `import pyjax` in the browser is almost all compilation).
//
// usage: node site/precompile.mjs <pyodide dir> <unpacked wheel dir>
// Writes __pycache__/*.cpython-3XX.pyc (checked-hash: used only while the source is unchanged).

import path from "node:path";

const [pyodideDir, pkgDir] = process.argv.slice(2).map((p) => path.resolve(p));
const { loadPyodide } = await import(path.join(pyodideDir, "pyodide.mjs"));
const py = await loadPyodide({ indexURL: pyodideDir + "/" });
py.FS.mkdir("/pkg");
py.FS.mount(py.FS.filesystems.NODEFS, { root: pkgDir }, "/pkg");
const ok = py.runPython(`
import compileall, py_compile
compileall.compile_dir("/pkg", quiet=1, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
`);
if (!ok) {
  console.error("precompile: compileall reported errors");
  process.exit(1);
}
