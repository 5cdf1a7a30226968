// ort_run.js JOBS.json - run ONNX models with ONNX Runtime (onnxruntime-node)
// on given inputs, for the differential tests (tests/onnx-ops).
//
// JOBS.json: [{"model": PATH, "inputs": [{"name", "type", "shape", "file"}],
//              "out": DIR}, ...]; each input's file holds its raw
// little-endian elements; type is an ONNX Runtime tensor type ("float32",
// "int64", "bool", ...). For each job the outputs go to DIR/ort_<i>.bin, and
// DIR/ort.json lists their types and shapes, or {"error": MESSAGE} when ONNX
// Runtime refuses the model or the run. One process runs every job (a
// session each, one thread, all graph optimisations).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};

function load(inp) {
  const buf = fs.readFileSync(inp.file);
  const A = ARRAYS[inp.type];
  const data = new A(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
  return new ort.Tensor(inp.type, data, inp.shape);
}

async function main() {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const job of jobs) {
    let result;
    try {
      const session = await ort.InferenceSession.create(job.model, {
        graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
      });
      const feeds = {};
      for (const inp of job.inputs) feeds[inp.name] = load(inp);
      const outs = await session.run(feeds);
      result = { outputs: [] };
      session.outputNames.forEach((name, i) => {
        const t = outs[name];
        const d = t.data;
        fs.writeFileSync(path.join(job.out, 'ort_' + i + '.bin'), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        result.outputs.push({ name, type: t.type, shape: t.dims });
      });
    } catch (e) {
      result = { error: String(e && e.message ? e.message : e).slice(0, 500) };
    }
    fs.writeFileSync(path.join(job.out, 'ort.json'), JSON.stringify(result));
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
