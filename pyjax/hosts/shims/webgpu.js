// WebGPU manager for pyjax's browser host: buffers and pipelines by integer handle, a whole
// list of kernel dispatches per call (one command encoder), async readback.
// Python crosses the FFI once per dispatch batch; data moves as typed-array copies.
// A plain script: pyjax/hosts/browser.py evaluates it with the wasm shims in one scope.

const SPEC_DEFAULT_LIMITS = {
  maxStorageBufferBindingSize: 134217728,
  maxBufferSize: 268435456,
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupSizeZ: 64,
  maxComputeWorkgroupsPerDimension: 65535,
  maxStorageBuffersPerShaderStage: 8,
  maxUniformBufferBindingSize: 65536,
};

const USAGE_STORAGE = 0x80 | 0x04 | 0x08 | 0x100; // STORAGE | COPY_SRC | COPY_DST | INDIRECT
const USAGE_UNIFORM = 0x40 | 0x08; // UNIFORM | COPY_DST
const USAGE_STAGING = 0x01 | 0x08; // MAP_READ | COPY_DST

class WebGPUManager {
  constructor() {
    this.device = null;
    this.buffers = new Map(); // handle -> {gpu, nbytes}
    this.pool = new Map(); // size class -> [GPUBuffer]
    this.nextHandle = 1;
    this.pipelines = []; // {gpu, writable, hasUniform}
    this.pipelineIds = new Map(); // wgsl + entry -> handle
    this.layouts = new Map();
    this.ubuf = null;
    this.ubufSize = 0;
    this.lost = null; // reason string once the device is lost
    this.pendingError = null;
    this.stats = { dispatches: 0, submits: 0, replays: 0, bindGroups: 0 };
    this.recordings = new Map(); // handle -> recording (see record)
    this.nextRecording = 0;
  }

  /** Request an adapter and a device with explicit limits; resolves to a description. */
  async init({ adapterLimits = false } = {}) {
    if (!("gpu" in navigator)) throw new Error("WebGPU is not available in this browser (navigator.gpu missing)");
    const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
    if (!adapter) throw new Error("WebGPU: no adapter available");
    const requiredLimits = {};
    for (const [k, v] of Object.entries(SPEC_DEFAULT_LIMITS)) {
      const have = adapter.limits[k];
      if (have === undefined) continue;
      requiredLimits[k] = adapterLimits ? have : Math.min(v, have);
    }
    const features = [];
    if (adapter.features.has("shader-f16")) features.push("shader-f16");
    this.device = await adapter.requestDevice({ requiredLimits, requiredFeatures: features });
    this.device.lost.then((info) => {
      this.lost = `${info.reason}: ${info.message}`;
    });
    this.device.addEventListener("uncapturederror", (ev) => {
      this.pendingError = ev.error.message;
    });
    this.limits = {};
    for (const k of Object.keys(SPEC_DEFAULT_LIMITS)) this.limits[k] = this.device.limits[k];
    this.limits.minUniformBufferOffsetAlignment = this.device.limits.minUniformBufferOffsetAlignment;
    const info = adapter.info || {};
    return {
      hasF16: features.includes("shader-f16"),
      features: [...adapter.features],
      limits: this.limits,
      adapter: `${info.vendor || "?"} ${info.architecture || ""} ${info.description || ""}`.trim(),
      isFallbackAdapter: !!info.isFallbackAdapter,
    };
  }

  _check() {
    if (this.lost) throw new Error(`DeviceLost: ${this.lost}`);
    if (this.pendingError) {
      const e = this.pendingError;
      this.pendingError = null;
      throw new Error(`WebGPU error: ${e}`);
    }
  }

  static sizeClass(n) {
    n = Math.max(256, n);
    const p = 2 ** Math.floor(Math.log2(n));
    const q = p / 4;
    return Math.ceil(n / q) * q;
  }

  createBuffer(nbytes) {
    this._check();
    const cls = WebGPUManager.sizeClass(nbytes);
    const free = this.pool.get(cls);
    const gpu = free && free.length ? free.pop() : this.device.createBuffer({ size: cls, usage: USAGE_STORAGE });
    const h = this.nextHandle++;
    this.buffers.set(h, { gpu, nbytes, cls });
    return h;
  }

  releaseBuffer(h) {
    const b = this.buffers.get(h);
    if (!b) return;
    this.buffers.delete(h);
    if (!this.pool.has(b.cls)) this.pool.set(b.cls, []);
    this.pool.get(b.cls).push(b.gpu);
  }

  liveBuffers() {
    return this.buffers.size;
  }

  /** GPU memory held: live buffers, pooled free buffers and the uniform buffer, in bytes. */
  memoryStats() {
    let liveBytes = 0;
    let pooled = 0;
    let pooledBytes = 0;
    for (const b of this.buffers.values()) liveBytes += b.cls;
    for (const [cls, free] of this.pool) {
      pooled += free.length;
      pooledBytes += cls * free.length;
    }
    const totalBytes = liveBytes + pooledBytes + this.ubufSize;
    return { live: this.buffers.size, liveBytes, pooled, pooledBytes, totalBytes, pipelines: this.pipelines.length };
  }

  bufferSize(h) {
    return this.buffers.get(h).nbytes;
  }

  /** Write bytes (a Uint8Array) at a byte offset; unaligned tails are padded to 4 bytes. */
  write(h, data, offset = 0) {
    this._check();
    const b = this.buffers.get(h);
    let bytes = data;
    if (bytes.byteLength % 4 !== 0 || offset % 4 !== 0) {
      // queue.writeBuffer needs 4-byte alignment: read-modify-write is avoided by padding with zeros
      const start = offset - (offset % 4);
      const padded = new Uint8Array(Math.ceil((offset - start + bytes.byteLength) / 4) * 4);
      padded.set(bytes, offset - start);
      bytes = padded;
      offset = start;
    }
    this.device.queue.writeBuffer(b.gpu, offset, bytes);
  }

  copy(src, dst, nbytes, srcOffset = 0, dstOffset = 0) {
    this._check();
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(this.buffers.get(src).gpu, srcOffset, this.buffers.get(dst).gpu, dstOffset, Math.ceil(nbytes / 4) * 4);
    this.device.queue.submit([enc.finish()]);
  }

  /** Read nbytes at offset through a staging buffer; resolves to a Uint8Array. */
  async read(h, nbytes, offset = 0) {
    this._check();
    const b = this.buffers.get(h);
    const start = offset - (offset % 4);
    const size = Math.max(4, Math.ceil((offset - start + nbytes) / 4) * 4);
    const staging = this.device.createBuffer({ size, usage: USAGE_STAGING });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(b.gpu, start, staging, 0, size);
    this.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Uint8Array(staging.getMappedRange().slice(offset - start, offset - start + nbytes));
    staging.unmap();
    staging.destroy();
    this._check();
    return out;
  }

  /** Wait for all submitted work (a 0-byte readback). */
  async sync() {
    await this.device.queue.onSubmittedWorkDone();
    this._check();
  }

  _layout(writable, hasUniform) {
    const key = writable.join(",") + (hasUniform ? "|u" : "");
    let l = this.layouts.get(key);
    if (!l) {
      const entries = writable.map((w, i) => ({
        binding: i,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: w ? "storage" : "read-only-storage" },
      }));
      if (hasUniform)
        entries.push({
          binding: writable.length,
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type: "uniform", hasDynamicOffset: true },
        });
      const group = this.device.createBindGroupLayout({ entries });
      l = { key, group, layout: this.device.createPipelineLayout({ bindGroupLayouts: [group] }) };
      this.layouts.set(key, l);
    }
    return l;
  }

  /** Compile a pipeline (cached by WGSL text and entry). Validation errors reject. */
  async pipeline(wgsl, entry, writable, hasUniform) {
    this._check();
    const key = entry + "\u0000" + wgsl;
    if (this.pipelineIds.has(key)) return this.pipelineIds.get(key);
    const module = this.device.createShaderModule({ code: wgsl });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === "error");
    if (errors.length) {
      throw new Error("WGSLCompileError: " + errors.map((m) => `line ${m.lineNum}:${m.linePos}: ${m.message}`).join("\n"));
    }
    this.device.pushErrorScope("validation");
    const h = this._addPipeline(key, module, entry, writable, hasUniform);
    const err = await this.device.popErrorScope();
    if (err) throw new Error("WGSLCompileError: " + err.message);
    return h;
  }

  /**
   * `pipeline` without waiting, for callers that cannot await (Pyodide code run without JSPI):
   * WGSL errors then surface as a WebGPU error from a later call (the next read at the latest).
   */
  pipelineNow(wgsl, entry, writable, hasUniform) {
    this._check();
    const key = entry + "\u0000" + wgsl;
    if (this.pipelineIds.has(key)) return this.pipelineIds.get(key);
    return this._addPipeline(key, this.device.createShaderModule({ code: wgsl }), entry, writable, hasUniform);
  }

  _addPipeline(key, module, entry, writable, hasUniform) {
    writable = Array.from(writable, (w) => !!w);
    const l = this._layout(writable, hasUniform);
    const gpu = this.device.createComputePipeline({ layout: l.layout, compute: { module, entryPoint: entry } });
    const h = this.pipelines.length;
    this.pipelines.push({ gpu, writable, hasUniform, group: l.group, layoutKey: l.key });
    this.pipelineIds.set(key, h);
    return h;
  }

  /**
   * Keep steps for replaying: records as dispatch's, with buffer positions instead of handles
   * (an indirect grid's buffer too). Their uniforms go into a buffer of the recording's own,
   * written once; bind groups are made at the first replay and remade only for the positions
   * whose handles changed since the last replay (a program's weights stay, its outputs vary).
   */
  record(steps, uniforms, nbuffers) {
    this._check();
    const rec = { nbuffers, pipes: [], groupOf: [], uoffs: [], grids: [], distinct: [], ubuf: null, groups: null, last: null };
    if (uniforms && uniforms.byteLength) {
      rec.ubuf = this.device.createBuffer({ size: Math.ceil(uniforms.byteLength / 16) * 16, usage: USAGE_UNIFORM });
      this.device.queue.writeBuffer(rec.ubuf, 0, uniforms);
    }
    const seen = new Map(); // pipeline layout + positions + uniform size -> index in distinct
    let i = 0;
    while (i < steps.length) {
      const p = this.pipelines[steps[i]];
      const nbuf = steps[i + 1];
      const pos = Array.from(steps.subarray(i + 2, i + 2 + nbuf));
      i += 2 + nbuf;
      const usize = steps[i + 1];
      const key = `${p.layoutKey}|${pos.join(",")}|${usize}`;
      let d = seen.get(key);
      if (d === undefined) {
        d = rec.distinct.length;
        seen.set(key, d);
        rec.distinct.push({ group: p.group, pos, usize: p.hasUniform ? usize : 0 });
      }
      rec.pipes.push(p);
      rec.groupOf.push(d);
      rec.uoffs.push(p.hasUniform ? [steps[i]] : []);
      rec.grids.push([steps[i + 2], steps[i + 3], steps[i + 4]]);
      i += 5;
    }
    const h = this.nextRecording++;
    this.recordings.set(h, rec);
    return h;
  }

  releaseRecording(h) {
    const rec = this.recordings.get(h);
    if (!rec) return;
    this.recordings.delete(h);
    if (rec.ubuf) rec.ubuf.destroy();
  }

  /** The recording's bind groups on these buffer handles (see record). */
  _replayGroups(rec, hs) {
    const last = rec.last;
    const groups = rec.groups ? rec.groups.slice() : new Array(rec.distinct.length);
    for (let d = 0; d < rec.distinct.length; d++) {
      const { group, pos, usize } = rec.distinct[d];
      if (last && pos.every((k) => hs[k] === last[k])) continue;
      const entries = pos.map((k, b) => {
        const buf = this.buffers.get(hs[k]);
        return { binding: b, resource: { buffer: buf.gpu, offset: 0, size: Math.max(4, Math.ceil(buf.nbytes / 4) * 4) } };
      });
      if (usize) entries.push({ binding: pos.length, resource: { buffer: rec.ubuf, offset: 0, size: usize } });
      groups[d] = this.device.createBindGroup({ layout: group, entries });
      this.stats.bindGroups++;
    }
    rec.groups = groups;
    rec.last = hs;
    return groups;
  }

  _replay(pass, rec, hs) {
    const groups = this._replayGroups(rec, hs);
    for (let s = 0; s < rec.pipes.length; s++) {
      pass.setPipeline(rec.pipes[s].gpu);
      pass.setBindGroup(0, groups[rec.groupOf[s]], rec.uoffs[s]);
      const g = rec.grids[s];
      if (g[0] < 0) pass.dispatchWorkgroupsIndirect(this.buffers.get(hs[g[1]]).gpu, g[2]);
      else pass.dispatchWorkgroups(g[0], g[1], g[2]);
    }
    this.stats.replays++;
    return rec.pipes.length;
  }

  /**
   * Record many dispatches in one encoder and submit once.
   * steps: Int32Array of records [pipeline, nbuf, buf..., uniformOffset, uniformSize, gx, gy, gz]
   * or, for a replay of a recording, [-1 - recording, nbuf, buf...];
   * uniforms: Uint8Array with every step's uniform data at its (aligned) offset.
   */
  dispatch(steps, uniforms) {
    this._check();
    if (uniforms && uniforms.byteLength) {
      if (uniforms.byteLength > this.ubufSize) {
        if (this.ubuf) this.ubuf.destroy();
        this.ubufSize = Math.max(4096, 2 ** Math.ceil(Math.log2(uniforms.byteLength)));
        this.ubuf = this.device.createBuffer({ size: this.ubufSize, usage: USAGE_UNIFORM });
      }
      this.device.queue.writeBuffer(this.ubuf, 0, uniforms);
    }
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    let i = 0;
    let n = 0;
    while (i < steps.length) {
      if (steps[i] < 0) {
        const nbuf = steps[i + 1];
        n += this._replay(pass, this.recordings.get(-1 - steps[i]), Array.from(steps.subarray(i + 2, i + 2 + nbuf)));
        i += 2 + nbuf;
        continue;
      }
      const p = this.pipelines[steps[i]];
      const nbuf = steps[i + 1];
      const entries = [];
      for (let k = 0; k < nbuf; k++) {
        const b = this.buffers.get(steps[i + 2 + k]);
        entries.push({ binding: k, resource: { buffer: b.gpu, offset: 0, size: Math.max(4, Math.ceil(b.nbytes / 4) * 4) } });
      }
      i += 2 + nbuf;
      const uoff = steps[i];
      const usize = steps[i + 1];
      if (p.hasUniform) entries.push({ binding: nbuf, resource: { buffer: this.ubuf, offset: 0, size: usize } });
      pass.setPipeline(p.gpu);
      pass.setBindGroup(0, this.device.createBindGroup({ layout: p.group, entries }), p.hasUniform ? [uoff] : []);
      this.stats.bindGroups++;
      // x < 0: indirect, with the workgroup counts an earlier step wrote into buffer steps[i + 3] at byte steps[i + 4]
      if (steps[i + 2] < 0) pass.dispatchWorkgroupsIndirect(this.buffers.get(steps[i + 3]).gpu, steps[i + 4]);
      else pass.dispatchWorkgroups(steps[i + 2], steps[i + 3], steps[i + 4]);
      i += 5;
      n++;
    }
    pass.end();
    this.device.queue.submit([enc.finish()]);
    this.stats.dispatches += n;
    this.stats.submits += 1;
  }
}
