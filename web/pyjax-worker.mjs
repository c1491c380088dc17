// Module Web Worker running pyjax under Pyodide; driven by loadPyjax({worker: true}).
import { loadPyjax } from "./pyjax.mjs";

let py = null;
self.onmessage = async (ev) => {
  const { id, kind, payload } = ev.data;
  try {
    if (kind === "init") {
      py = await loadPyjax({
        ...payload,
        worker: false,
        stdout: (line) => self.postMessage({ line }),
        onProgress: (progress) => self.postMessage({ progress }),
      });
      self.postMessage({ id, ok: true, value: py.timings });
    } else {
      const value = await py.run(payload);
      self.postMessage({ id, ok: true, value: value === undefined ? null : JSON.parse(JSON.stringify(value)) });
    }
  } catch (e) {
    self.postMessage({ id, ok: false, error: String(e && e.message ? e.message : e) });
  }
};
