// WebAssembly manager for pyjax's browser host: one linear memory shared by every kernel
// module, a compile cache keyed by the module bytes' hash, and exports handed to Python as
// plain functions (one FFI crossing per kernel call).

export class WasmManager {
  constructor() {
    this.memory = null;
    this.modules = new Map(); // key -> WebAssembly.Module
    this.instances = []; // index -> WebAssembly.Instance
  }

  /** Create the shared memory (64 KiB pages). */
  init(pages = 16, maxPages = 65536) {
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: maxPages });
    return this.memory.buffer.byteLength;
  }

  /** Does this engine accept the module (feature probes such as SIMD / relaxed SIMD)? */
  validate(bytes) {
    return WebAssembly.validate(bytes);
  }

  /** Compile bytes (Uint8Array) once per key; synchronous (kernels are far below 8 MB). */
  compile(key, bytes) {
    let m = this.modules.get(key);
    if (!m) {
      m = new WebAssembly.Module(bytes);
      this.modules.set(key, m);
    }
    return key;
  }

  /** Instantiate a compiled module against the shared memory; returns an instance index. */
  instantiate(key) {
    const inst = new WebAssembly.Instance(this.modules.get(key), { env: { memory: this.memory } });
    this.instances.push(inst);
    return this.instances.length - 1;
  }

  exportNames(i) {
    return Object.keys(this.instances[i].exports);
  }

  getExport(i, name) {
    return this.instances[i].exports[name];
  }

  pages() {
    return this.memory.buffer.byteLength / 65536;
  }

  /** Grow by `pages`; returns the old page count, or -1 when the memory cannot grow. */
  grow(pages) {
    try {
      return this.memory.grow(pages);
    } catch (e) {
      return -1;
    }
  }

  /** A fresh Uint8Array view (views detach when the memory grows). */
  view(ptr, nbytes) {
    return new Uint8Array(this.memory.buffer, ptr, nbytes);
  }

  read(ptr, nbytes) {
    return new Uint8Array(this.memory.buffer, ptr, nbytes).slice();
  }

  write(ptr, bytes) {
    new Uint8Array(this.memory.buffer, ptr, bytes.byteLength).set(bytes);
  }
}
