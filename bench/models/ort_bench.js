// ort_bench.js - time an ONNX model with ONNX Runtime (onnxruntime-node).
//
//   node ort_bench.js MODEL.onnx [--threads=T] [--warmup=W] [--runs=R]
//        [--dims=N=64,...] [--io=DIR] [--profile=DIR] [--inputs=SPEC.json]
//
// Creates one session (graphOptimizationLevel 'all', executionMode
// 'sequential', intraOpNumThreads T, interOpNumThreads 1), feeds random
// inputs (floats in [-1, 1), other types 0; or DIR/in_<i>.bin with --io,
// writing DIR/out_<i>.bin and DIR/out_<i>.json, the output's dims and type:
// how the NumPy references and lgen's outputs are checked), runs W untimed
// warm-up runs, then
// R timed ones, and prints one line: "ort runs=R median_ms=... min_ms=...".
// These times include the Node binding's copies of inputs and outputs, as
// large as the run itself for 64 MB tensors. With --profile, a second
// session with ORT's profiler on (its trace written into DIR) runs the same
// warm-up and timed runs, and the line also gets session_times_ms and
// session_median_ms, ORT's own model_run durations (without the binding,
// with the profiler's small cost per node; both are upper bounds of ORT's
// time, and the callers take the smaller median), and node_median_ms, each
// node's median kernel time in execution order.
// Symbolic dims of the inputs take their values from --dims. The inputs'
// names, shapes and element types come from SPEC.json (default
// MODEL.onnx.inputs.json): [{"name", "shape": [dim or name], "type"}], type
// an ONNX Runtime tensor type ('float32' when absent).
// Finds onnxruntime-node through NODE_PATH (bench/run.sh installs it into
// bench-build/node_modules).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const o = { threads: 1, warmup: 3, runs: 10, dims: {}, io: null, profile: null, inputs: null, model: null };
  for (const a of argv) {
    const m = /^--([a-z]+)=(.*)$/.exec(a);
    if (!m) { o.model = a; continue; }
    if (m[1] === 'dims') {
      for (const kv of m[2].split(',').filter(Boolean)) {
        const [k, v] = kv.split('=');
        o.dims[k] = parseInt(v, 10);
      }
    } else if (m[1] === 'io' || m[1] === 'profile' || m[1] === 'inputs') {
      o[m[1]] = m[2];
    } else if (m[1] in o) {
      o[m[1]] = parseInt(m[2], 10);
    } else {
      throw new Error('unknown option ' + a);
    }
  }
  if (!o.model) throw new Error('usage: node ort_bench.js MODEL.onnx [--threads=T] [--warmup=W] [--runs=R] [--dims=N=64] [--io=DIR] [--inputs=SPEC.json]');
  return o;
}

// Input shapes are not exposed by every onnxruntime-node version, so they
// come from a side file that bench/run_models.py writes next to the model:
// MODEL.onnx.inputs.json = [{"name": ..., "shape": [dim or name, ...]}].
function inputShapes(specPath, dims) {
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));
  return spec.map((i) => ({
    name: i.name,
    type: i.type || 'float32',
    shape: i.shape.map((d) => {
      if (typeof d === 'number') return d;
      if (!(d in dims)) throw new Error('give --dims=' + d + '=VALUE');
      return dims[d];
    }),
  }));
}

// The typed array that holds each ONNX Runtime tensor type.
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function median(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

function sessionOptions(o, profile) {
  const opts = {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
  };
  if (profile) {
    opts.enableProfiling = true;
    opts.profileFilePrefix = path.join(o.profile, 'ort_profile');
  }
  return opts;
}

// From the newest trace in o.profile (a JSON array of events with "name",
// "cat" and "dur" in us) the last `runs` runs: each run's model_run
// duration and its nodes' kernel times in order (ms).
async function profiledRuns(o, feeds) {
  fs.mkdirSync(o.profile, { recursive: true });
  const before = new Set(fs.readdirSync(o.profile));
  const session = await ort.InferenceSession.create(o.model, sessionOptions(o, true));
  for (let i = 0; i < o.warmup + o.runs; i++) await session.run(feeds);
  await session.endProfiling();
  const made = fs.readdirSync(o.profile).filter((f) => !before.has(f) && f.endsWith('.json'));
  if (made.length !== 1) throw new Error('--profile: expected one new trace in ' + o.profile);
  const trace = JSON.parse(fs.readFileSync(path.join(o.profile, made[0]), 'utf8'));
  fs.unlinkSync(path.join(o.profile, made[0]));
  const runs = [];
  let nodes = [];
  for (const e of trace) {
    if (e.cat === 'Node' && /_kernel_time$/.test(e.name)) {
      nodes.push(e.dur / 1e3);
    } else if (e.name === 'model_run') {
      runs.push({ ms: e.dur / 1e3, nodes });
      nodes = [];
    }
  }
  return runs.slice(-o.runs);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(o.model, sessionOptions(o, false));
  const feeds = {};
  let seed = 12345;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 1073741824 - 1; };
  inputShapes(o.inputs || o.model + '.inputs.json', o.dims).forEach((inp, i) => {
    const n = inp.shape.reduce((a, b) => a * b, 1);
    const Arr = ARRAYS[inp.type];
    if (!Arr) throw new Error('input ' + inp.name + ': unknown type ' + inp.type);
    let data;
    if (o.io) {
      // copied: a Buffer's offset need not be aligned for the element type
      const buf = fs.readFileSync(path.join(o.io, 'in_' + i + '.bin'));
      if (buf.length !== n * Arr.BYTES_PER_ELEMENT) throw new Error('in_' + i + '.bin: wrong size for ' + inp.name);
      const ab = new ArrayBuffer(buf.length);
      new Uint8Array(ab).set(buf);
      data = new Arr(ab);
    } else {
      data = new Arr(n);
      if (inp.type === 'float32' || inp.type === 'float64') for (let k = 0; k < n; k++) data[k] = rand();
    }
    feeds[inp.name] = new ort.Tensor(inp.type, data, inp.shape);
  });
  let out;
  for (let i = 0; i < o.warmup; i++) out = await session.run(feeds);
  const times = [];
  for (let i = 0; i < o.runs; i++) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (o.io) {
    session.outputNames.forEach((name, i) => {
      const d = (out || {})[name] ? out[name].data : null;
      if (d) {
        fs.writeFileSync(path.join(o.io, 'out_' + i + '.bin'), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        fs.writeFileSync(path.join(o.io, 'out_' + i + '.json'), JSON.stringify({ name, dims: out[name].dims, type: out[name].type }));
      }
    });
  }
  const ms = times.length ? median(times) : 0;
  const mn = times.length ? Math.min(...times) : 0;
  let line = 'ort runs=' + times.length + ' median_ms=' + ms.toFixed(4) + ' min_ms=' + mn.toFixed(4) +
             ' times_ms=' + times.map((t) => t.toFixed(4)).join(',');
  if (o.profile) {
    const runs = await profiledRuns(o, feeds);
    const st = runs.map((r) => r.ms);
    const nn = runs.length ? Math.min(...runs.map((r) => r.nodes.length)) : 0;
    const per = [];
    for (let k = 0; k < nn; k++) per.push(median(runs.map((r) => r.nodes[k])));
    line += ' session_median_ms=' + (st.length ? median(st) : 0).toFixed(4) +
            ' session_times_ms=' + st.map((t) => t.toFixed(4)).join(',') +
            ' node_median_ms=' + per.map((t) => t.toFixed(4)).join(',');
  }
  console.log(line);
}

main().catch((e) => { console.error('ort_bench: ' + (e && e.message ? e.message : e)); process.exit(2); });
