// The wasm thread pool's shared part: the control block's layout (an Int32Array over a
// SharedArrayBuffer) and the chunk loop that the caller (wasm.js) and every pool worker
// (wasm-worker.js) run. A plain script, not a module: browser.py evaluates it in one scope with
// wasm.js and webgpu.js, and wasm.js starts its workers from a Blob of this file + wasm-worker.js.

const WAKE = 0; // bumped (and notified) when a call is published or modules were posted
const CLAIM = 1; // gen << 18 | nchunks << 9 | next chunk: claimed by compare-and-swap
const DONE = 2; // finished chunks of the current call (the last one notifies)
const MSGS = 3; // module broadcasts posted to every worker (workers count the ones received)
const FAILED = 4; // a chunk threw in a worker
const INST = 5; // instance index of the call
const NARGS = 6; // number of arguments
const LOARG = 7; // argument index of lo (hi follows it)
const SARG = 8; // argument index of the per-thread scratch pointer, or -1
const SSTRIDE = 9; // scratch bytes per thread
const UP = 10; // pool workers that received their "init" (WasmManager.ready waits for them)
const STATS = 16; // chunks run, per thread (thread 0 is the caller)
const MAX_THREADS = 64;
const RECEIVED = STATS + MAX_THREADS; // modules instantiated, per worker thread
const ARGS = RECEIVED + MAX_THREADS;
const MAX_ARGS = 64;
const MAX_CHUNKS = 256;
const BOUNDS = ARGS + MAX_ARGS; // chunk k is rows [BOUNDS[k], BOUNDS[k + 1])
const CTRL_INTS = BOUNDS + MAX_CHUNKS + 1;

/**
 * Claim and run chunks of the published call until none are left (caller and workers alike).
 * `fns[i]` is instance i's `run` export (undefined: this thread cannot run that call yet); an
 * exception marks the call failed (FAILED) and goes to `onError`; returns the chunks run.
 */
function runChunks(ctrl, fns, thread, onError = null) {
  let ran = 0;
  for (;;) {
    const c = Atomics.load(ctrl, CLAIM);
    const n = (c >>> 9) & 0x1ff;
    const k = c & 0x1ff;
    if (k >= n) return ran;
    if (fns[Atomics.load(ctrl, INST)] === undefined) return ran; // not received yet: others run it
    if (Atomics.compareExchange(ctrl, CLAIM, c, c + 1) !== c) continue;
    // Claimed: the call cannot change until this chunk is done, so its parameters are stable now.
    // (Only if 16384 calls passed between the load and the swap could the claim belong to a later
    // call, which then is also the call whose parameters are read here.)
    const fn = fns[ctrl[INST]];
    const args = new Array(ctrl[NARGS]);
    for (let i = 0; i < args.length; i++) args[i] = ctrl[ARGS + i];
    const la = ctrl[LOARG];
    args[la] = ctrl[BOUNDS + k];
    args[la + 1] = ctrl[BOUNDS + k + 1];
    if (ctrl[SARG] >= 0) args[ctrl[SARG]] += thread * ctrl[SSTRIDE];
    try {
      if (fn === undefined) throw new Error("a worker thread lacks the kernel of the chunk it claimed");
      fn(...args);
    } catch (e) {
      Atomics.store(ctrl, FAILED, 1);
      if (onError) onError(e);
    }
    ran++;
    Atomics.add(ctrl, STATS + thread, 1);
    finish(ctrl, n);
  }
}

function finish(ctrl, n) {
  if (Atomics.add(ctrl, DONE, 1) + 1 === n) Atomics.notify(ctrl, DONE);
}
