// A thread of WasmManager's pool (wasm.js): instantiates the kernels it is sent against the
// shared memory, then sleeps on the control block (Atomics.wait) and runs chunks of the calls
// the caller publishes there. It returns to its event loop only to receive modules: the caller
// counts its broadcasts in MSGS, and the worker leaves its loop while it has not yet received
// them all (the message handler re-enters the loop once it has).
// A classic worker script: wasm.js runs it from a Blob of wasm-threads.js (runChunks, the
// control block's layout) followed by this file.

let ctrl = null;
let memory = null;
let thread = 0;
let received = 0;
const fns = [];

function loop() {
  for (;;) {
    if (Atomics.load(ctrl, MSGS) !== received) return; // modules are waiting in the message queue
    const w = Atomics.load(ctrl, WAKE);
    runChunks(ctrl, fns, thread, (e) => console.error(`pyjax wasm thread ${thread}:`, e));
    Atomics.wait(ctrl, WAKE, w);
  }
}

self.onmessage = (ev) => {
  const m = ev.data;
  if (m.kind === "init") {
    ({ ctrl, memory, thread } = m);
    Atomics.add(ctrl, UP, 1);
  } else if (m.kind === "instance") {
    try {
      fns[m.index] = new WebAssembly.Instance(m.module, { env: { memory } }).exports.run;
    } catch (e) {
      console.error(`pyjax wasm thread ${thread}: cannot instantiate a kernel:`, e); // others run it
    }
    received++;
    Atomics.store(ctrl, RECEIVED + thread, received);
  }
  if (ctrl && Atomics.load(ctrl, MSGS) === received) loop();
};
