// WebAssembly manager for pyjax's browser host: one linear memory shared by every kernel
// module, a compile cache keyed by the module bytes' hash, and exports handed to Python as
// plain functions (one FFI crossing per kernel call).
//
// Threads: when the page is cross-origin isolated (SharedArrayBuffer available) and more than
// one thread is asked for, the memory is a shared WebAssembly.Memory and a pool of Workers
// (wasm-worker.js, started from a Blob URL) instantiates the same compiled modules against it.
// A kernel registered with `splitKernel` then runs its outermost-axis range [lo, hi) in chunks: the
// caller publishes the call in a shared control block and wakes the workers with
// Atomics.notify (no postMessage per call); every thread, the caller included, claims chunks
// with a compare-and-swap until none are left; the caller then waits for the last one
// (Atomics.wait in a Worker, a spin on Atomics.load on the main thread, where waiting is
// forbidden). Workers that are late or busy simply claim nothing, so a call never waits for a
// particular worker.
//
// A plain script evaluated by pyjax/hosts/browser.py after wasm-threads.js, in one function scope
// that also defines WORKER_SOURCE (the text of wasm-threads.js + wasm-worker.js); the scope
// returns WasmManager, prestartWorkers, threadsAvailable and defaultThreads to Python.

/** Can this page run wasm threads (cross-origin isolated, SharedArrayBuffer, Workers)? */
function threadsAvailable() {
  return (
    typeof SharedArrayBuffer !== "undefined" &&
    typeof Worker !== "undefined" &&
    globalThis.crossOriginIsolated === true
  );
}

/** The default thread count: min(hardwareConcurrency, 8) where threads are available, else 1. */
function defaultThreads() {
  if (!threadsAvailable()) return 1;
  const n = (globalThis.navigator && navigator.hardwareConcurrency) || 1;
  return Math.max(1, Math.min(n, 8));
}

const spareWorkers = [];
let workerURL = null;

/** A pool worker, from a Blob URL of its source (no file of its own to fetch: works in any page). */
function newWorker() {
  workerURL ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
  const w = new Worker(workerURL, { name: "pyjax-wasm" });
  w.onerror = (e) => console.error("pyjax wasm worker:", e.message || e);
  return w;
}

/**
 * Start `n` pool workers ahead of need (default: the default thread count - 1). A Worker only
 * starts once the thread that created it returns to its event loop, so workers created in the
 * middle of a long synchronous Python run would idle until it ends; WasmManager.init calls this
 * (`await pyjax.init_async("wasm")` then waits for them) and its pool takes these first.
 */
function prestartWorkers(n = (WasmManager.defaultThreads ?? defaultThreads()) - 1) {
  if (!threadsAvailable()) return;
  while (spareWorkers.length < Math.min(n, MAX_THREADS - 1)) spareWorkers.push(newWorker());
}

/** Rewrite a module's memory import (as pyjax's encoder writes it) to `shared` with a maximum. */
function shareMemoryImport(bytes, maxPages) {
  const leb = (v) => {
    const out = [];
    do {
      let b = v & 0x7f;
      v >>>= 7;
      if (v) b |= 0x80;
      out.push(b);
    } while (v);
    return out;
  };
  let p = 8;
  const read = () => {
    let v = 0;
    let shift = 0;
    let b;
    do {
      b = bytes[p++];
      v |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    return v >>> 0;
  };
  while (p < bytes.length) {
    const id = bytes[p++];
    const size = read();
    const start = p;
    if (id !== 2) {
      p = start + size;
      continue;
    }
    const count = read();
    for (let i = 0; i < count; i++) {
      for (let s = 0; s < 2; s++) {
        const len = read(); // module and field names
        p += len;
      }
      const kind = bytes[p++];
      if (kind === 0) read();
      else if (kind === 2) {
        const at = p;
        const flags = bytes[p++];
        const min = read();
        if (flags & 1) read();
        if (flags & 2) return bytes; // already shared
        const limits = [3, ...leb(min), ...leb(maxPages)];
        const body = [...bytes.subarray(start, at), ...limits, ...bytes.subarray(p, start + size)];
        const head = [...bytes.subarray(0, start - 1 - leb(size).length), 2, ...leb(body.length)];
        const out = new Uint8Array(head.length + body.length + bytes.length - (start + size));
        out.set(head);
        out.set(body, head.length);
        out.set(bytes.subarray(start + size), head.length + body.length);
        return out;
      } else throw new Error(`unexpected import kind ${kind}`);
    }
    return bytes;
  }
  return bytes;
}

class WasmManager {
  /** Thread count for managers created without one (loadPyjax({wasmThreads}) sets it). */
  static defaultThreads = null;

  constructor() {
    this.memory = null;
    this.shared = false;
    this.threads = 1;
    this.maxPages = 0;
    this.modules = new Map(); // key -> WebAssembly.Module
    this.instances = []; // index -> WebAssembly.Instance
    this.instanceKeys = []; // index -> module key
    this.jobs = []; // splitKernel handles -> parameters
    this.fns = []; // instance index -> `run` export, for instances used by split calls
    this.workers = null;
    this.ctrl = null;
    this.gen = 0;
    this.broadcast = new Set(); // instance indexes already posted to the workers
  }

  /**
   * Create the memory (64 KiB pages). `threads` (0: the default) > 1 makes it shared when the
   * page allows threads; the worker pool starts with the first split kernel.
   */
  init(pages = 16, maxPages = 65536, threads = 0) {
    let n = threads > 0 ? threads : (WasmManager.defaultThreads ?? defaultThreads());
    n = threadsAvailable() ? Math.max(1, Math.min(n, MAX_THREADS)) : 1;
    this.threads = n;
    this.shared = n > 1;
    this.maxPages = maxPages;
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: maxPages, shared: this.shared });
    if (this.shared) prestartWorkers(n - 1); // the pool itself waits for the first split kernel
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
      m = new WebAssembly.Module(this.shared ? shareMemoryImport(bytes, this.maxPages) : bytes);
      this.modules.set(key, m);
    }
    return key;
  }

  /** Instantiate a compiled module against the shared memory; returns an instance index. */
  instantiate(key) {
    const inst = new WebAssembly.Instance(this.modules.get(key), { env: { memory: this.memory } });
    this.instances.push(inst);
    this.instanceKeys.push(key);
    return this.instances.length - 1;
  }

  /**
   * Instantiate a module that imports other instances' functions (a driver calling kernels):
   * import `k.<names[n]>` is export `exports[n]` of instance `refs[n]`, or, for refs[n] < 0, the
   * split call of job -1 - refs[n] (runSplit over the worker pool). Returns an instance index.
   */
  link(key, names, refs, exports) {
    const k = {};
    for (let n = 0; n < names.length; n++) {
      const r = refs[n];
      if (r >= 0) k[names[n]] = this.instances[r].exports[exports[n]];
      else {
        const job = -1 - r;
        k[names[n]] = (...args) => this.runSplit(job, ...args);
      }
    }
    const inst = new WebAssembly.Instance(this.modules.get(key), { env: { memory: this.memory }, k });
    this.instances.push(inst);
    this.instanceKeys.push(key);
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

  /** A fresh Uint8Array view (views detach, or keep their old length if shared, on growth). */
  view(ptr, nbytes) {
    return new Uint8Array(this.memory.buffer, ptr, nbytes);
  }

  read(ptr, nbytes) {
    return new Uint8Array(this.memory.buffer, ptr, nbytes).slice();
  }

  write(ptr, bytes) {
    new Uint8Array(this.memory.buffer, ptr, bytes.byteLength).set(bytes);
  }

  // --- threads ---

  /**
   * Register export `name` of instance `i` for split calls; returns a handle for `runSplit`.
   * Arguments `loArg`, `loArg + 1` are its [lo, hi) range; chunks hold at least `minRows` rows,
   * a multiple of `align`; argument `scratchArg` (-1: none) is a scratch pointer that thread t
   * offsets by t * `scratchStride` bytes.
   */
  splitKernel(i, name, loArg, align = 1, minRows = 1, scratchArg = -1, scratchStride = 0) {
    if (name !== "run") throw new Error("split calls run the `run` export");
    this.fns[i] = this.instances[i].exports.run;
    // minRows down to a multiple of align: chunks are rounded up to align and a remainder below
    // minRows joins the last chunk, so 1024 rows, align 6 and minRows 512 would be one chunk.
    align = Math.max(1, align);
    minRows = Math.max(align, Math.floor(minRows / align) * align);
    this.jobs.push({ i, loArg, align, minRows, scratchArg, scratchStride });
    if (this.threads > 1) {
      this.startPool();
      this.post(i);
    }
    return this.jobs.length - 1;
  }

  /**
   * Start the worker pool (threads > 1) and resolve to the number of workers running once all
   * are (or `timeoutMs` passed: late workers just claim no chunks). Workers only start while
   * the creating thread is back in its event loop, which awaiting this gives them.
   */
  async ready(timeoutMs = 10000) {
    if (this.threads <= 1) return 0;
    this.startPool();
    const until = performance.now() + timeoutMs;
    while (Atomics.load(this.ctrl, UP) < this.workers.length && performance.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 2));
    return Atomics.load(this.ctrl, UP);
  }

  startPool() {
    if (this.workers) return;
    this.ctrl = new Int32Array(new SharedArrayBuffer(CTRL_INTS * 4));
    this.workers = [];
    for (let t = 1; t < this.threads; t++) {
      const w = spareWorkers.pop() || newWorker();
      w.postMessage({ kind: "init", thread: t, memory: this.memory, ctrl: this.ctrl });
      this.workers.push(w);
    }
  }

  /** Post instance i's module to every worker (they instantiate it on their next idle turn). */
  post(i) {
    if (this.broadcast.has(i)) return;
    this.broadcast.add(i);
    const module = this.modules.get(this.instanceKeys[i]);
    for (const w of this.workers) w.postMessage({ kind: "instance", index: i, module });
    Atomics.add(this.ctrl, MSGS, 1);
    Atomics.add(this.ctrl, WAKE, 1);
    Atomics.notify(this.ctrl, WAKE);
  }

  /**
   * Call a registered kernel with (...args), split over the pool when it is worth it. Chunks
   * shrink as the range is used up (guided scheduling: each takes 1/(2 * threads) of what is
   * left, at least minRows), so the last ones are short and no thread waits long for another.
   */
  runSplit(job, ...args) {
    const j = this.jobs[job];
    const fn = this.fns[j.i];
    const lo = args[j.loArg];
    const hi = args[j.loArg + 1];
    if (!this.workers || hi - lo < 2 * j.minRows || args.length > MAX_ARGS) return fn(...args);
    const c = this.ctrl;
    let n = 0;
    for (let at = lo; at < hi; n++) {
      c[BOUNDS + n] = at;
      let size = Math.max(j.minRows, Math.ceil((hi - at) / (2 * this.threads)));
      size = Math.ceil(size / j.align) * j.align;
      at = n === MAX_CHUNKS - 1 || hi - at - size < j.minRows ? hi : at + size; // no runt chunk at the end
    }
    c[BOUNDS + n] = hi;
    if (n < 2) return fn(...args);
    c[INST] = j.i;
    c[NARGS] = args.length;
    c[LOARG] = j.loArg;
    c[SARG] = j.scratchArg;
    c[SSTRIDE] = j.scratchStride;
    for (let a = 0; a < args.length; a++) c[ARGS + a] = args[a];
    Atomics.store(c, DONE, 0);
    Atomics.store(c, FAILED, 0);
    this.gen = (this.gen + 1) & 0x3fff; // 14 bits: a stale claim would need 16384 calls to match
    Atomics.store(c, CLAIM, (this.gen << 18) | (n << 9));
    Atomics.add(c, WAKE, 1);
    Atomics.notify(c, WAKE);
    let error = null;
    runChunks(c, this.fns, 0, (e) => (error = error || e));
    for (;;) {
      const d = Atomics.load(c, DONE);
      if (d >= n) break;
      if (this.canWait !== false) {
        try {
          Atomics.wait(c, DONE, d);
          this.canWait = true;
        } catch {
          this.canWait = false; // the main thread: spin instead
        }
      }
    }
    if (error) throw error;
    if (Atomics.load(c, FAILED)) throw new WebAssembly.RuntimeError("a kernel trapped in a wasm worker thread");
  }

  /**
   * Thread count, whether the memory is shared, workers created and running (up), chunks run per thread so far
   * (the caller first), modules each worker has instantiated and modules posted to them.
   */
  threadStats() {
    const chunks = [];
    const modules = [];
    for (let t = 0; t < this.threads; t++) {
      chunks.push(this.ctrl ? Atomics.load(this.ctrl, STATS + t) : 0);
      if (t > 0) modules.push(this.ctrl ? Atomics.load(this.ctrl, RECEIVED + t) : 0);
    }
    const workers = this.workers ? this.workers.length : 0;
    const up = this.ctrl ? Atomics.load(this.ctrl, UP) : 0;
    return { threads: this.threads, shared: this.shared, workers, up, chunks, modules, posted: this.broadcast.size };
  }

  /** Stop the worker pool (the manager keeps running single-threaded). */
  close() {
    if (this.workers) for (const w of this.workers) w.terminate();
    this.workers = null;
  }
}
