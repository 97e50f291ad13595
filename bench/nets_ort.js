#!/usr/bin/env node
/* nets_ort.js - the ONNX Runtime side of bench/nets: one ONNX model, batch as exported, median ms.

   Usage (bench/nets runs it once per network with --node, default `node`):

     node bench/nets_ort.js --model M.onnx --input M.input.bin --output M.output.bin
          [--threads 1,2] [--runs 20] [--warmup 3] [--shapes 1x3x224x224;...] [--ort DIR]

   The module: --ort DIR (the onnxruntime-node package, or a directory holding
   node_modules/onnxruntime-node), else $FUSE_ORT_DIR (the same), else build/ort (what
   `make bench-ort-setup` installs), else /work/ort/node_modules/onnxruntime-node, else
   require('onnxruntime-node'); a given --ort is the only place looked at. When none loads it prints `ort unavailable: <why>` and exits 0.

   For each thread count N: InferenceSession.create(model, {intraOpNumThreads: N,
   interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all'}) timed
   (ORT's load time: parsing, graph optimization, kernel and weight preparation), the inputs
   fed by the session's input names with the shapes of --shapes (what fuse.h loaded; one
   `AxBxC` per input, `;` between inputs) or else of the session's input metadata (one
   symbolic dimension may be left for the input file's size to fix), --warmup runs (the
   outputs of the first, concatenated in the session's output order, checked against the
   output file: max|got - want| / max|want|, -1 when the file is missing, inf when the sizes
   differ), then --runs single awaited session.run calls timed. Prints, for bench/nets.c:

     ort version V
     ort init MS          (the environment set-up, once per process, before the sessions)
     result THREADS MEDIAN_MS BEST_MS RUNS RELERR CREATE_MS

   Input files are raw float32 little-endian, the inputs one after another in graph order
   (converted for integer inputs). Errors go out as `ort error: ...` with exit status 1. */
'use strict';

const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const a = { threads: [1, 2], runs: 20, warmup: 3, shapes: null, ort: null };
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (v === undefined) throw new Error('missing value after ' + k);
    i++;
    if (k === '--model') a.model = v;
    else if (k === '--input') a.input = v;
    else if (k === '--output') a.output = v;
    else if (k === '--threads') a.threads = v.split(',').filter((s) => s).map(Number);
    else if (k === '--runs') a.runs = Math.max(1, parseInt(v, 10) || 1);
    else if (k === '--warmup') a.warmup = Math.max(1, parseInt(v, 10) || 1);
    else if (k === '--shapes') a.shapes = v.split(';').map((s) => s.split('x').map(Number));
    else if (k === '--ort') a.ort = v;
    else throw new Error('unknown option ' + k);
  }
  if (!a.model || !a.input) throw new Error('--model and --input are required');
  if (a.threads.some((n) => !(n >= 1))) throw new Error('bad --threads');
  return a;
}

/* the onnxruntime-node module and where it came from; throws with every place tried */
function loadOrt(dir) {
  const tried = [];
  const candidates = [];
  const addDir = (d, what) => {
    if (!d) return;
    d = path.resolve(d); /* require() takes a relative path for a package name */
    candidates.push([path.join(d, 'node_modules', 'onnxruntime-node'), what]);
    candidates.push([d, what]);
  };
  addDir(dir, '--ort'); /* given: the only place looked at */
  if (!dir) {
    addDir(process.env.FUSE_ORT_DIR, 'FUSE_ORT_DIR');
    addDir(path.join(__dirname, '..', 'build', 'ort'), 'build/ort');
    candidates.push(['/work/ort/node_modules/onnxruntime-node', 'default']);
  }
  for (const [d, what] of candidates) {
    if (!fs.existsSync(path.join(d, 'package.json'))) {
      tried.push(d + ' (' + what + '): not there');
      continue;
    }
    try {
      return { ort: require(d), from: d };
    } catch (e) {
      tried.push(d + ' (' + what + '): ' + String(e.message).split('\n')[0]);
    }
  }
  if (!dir) {
    try {
      return { ort: require('onnxruntime-node'), from: 'require' };
    } catch (e) {
      tried.push("require('onnxruntime-node'): " + String(e.message).split('\n')[0]);
    }
  }
  throw new Error(tried.join('; '));
}

function readFloats(file) {
  const b = fs.readFileSync(file);
  if (b.length % 4) throw new Error(file + ': size not a multiple of 4');
  const f = new Float32Array(b.length / 4);
  for (let i = 0; i < f.length; i++) f[i] = b.readFloatLE(i * 4);
  return f;
}

const product = (dims) => dims.reduce((p, d) => p * d, 1);

/* per input: its dims, from --shapes or the session's metadata (one unknown dimension in all
   is fixed by the input file's size) */
function inputShapes(session, given, total) {
  const names = session.inputNames;
  if (given) {
    if (given.length !== names.length)
      throw new Error('--shapes has ' + given.length + ' shapes, the model ' + names.length + ' inputs');
    return given;
  }
  const meta = session.inputMetadata;
  if (!meta) throw new Error('this onnxruntime-node has no inputMetadata: pass --shapes');
  const shapes = names.map((n, i) => {
    const m = Array.isArray(meta) ? meta[i] : meta[n];
    if (!m || !m.shape) throw new Error('no shape for input ' + n + ': pass --shapes');
    return m.shape.map((d) => (typeof d === 'number' && d > 0 ? d : -1));
  });
  const unknown = [];
  let known = 0;
  shapes.forEach((s, i) => {
    s.forEach((d, j) => { if (d < 0) unknown.push([i, j]); });
    known += product(s.filter((d) => d > 0)) * (s.includes(-1) ? 0 : 1);
  });
  if (unknown.length > 1) throw new Error('symbolic dimensions in the inputs: pass --shapes');
  if (unknown.length === 1) {
    const [i, j] = unknown[0];
    const rest = product(shapes[i].filter((d) => d > 0));
    shapes[i][j] = (total - known) / rest;
    if (!Number.isInteger(shapes[i][j]) || shapes[i][j] < 1)
      throw new Error('the input file does not fit input ' + names[i]);
  }
  return shapes;
}

/* the feeds: the input file split by the shapes, converted to each input's type */
function makeFeeds(ort, session, shapes, x) {
  const meta = session.inputMetadata;
  const feeds = {};
  let at = 0;
  session.inputNames.forEach((name, i) => {
    const n = product(shapes[i]);
    if (at + n > x.length) throw new Error('the input file is too short for input ' + name);
    const part = x.subarray(at, at + n);
    at += n;
    const m = meta ? (Array.isArray(meta) ? meta[i] : meta[name]) : null;
    const type = m && m.type ? m.type : 'float32';
    let data;
    if (type === 'float32') data = Float32Array.from(part);
    else if (type === 'int64') data = BigInt64Array.from(part, (v) => BigInt(Math.round(v)));
    else if (type === 'int32') data = Int32Array.from(part, (v) => Math.round(v));
    else if (type === 'bool') data = Uint8Array.from(part, (v) => (v ? 1 : 0));
    else throw new Error('input ' + name + ' has type ' + type);
    feeds[name] = new ort.Tensor(type, data, shapes[i]);
  });
  if (at !== x.length)
    throw new Error('the input file has ' + x.length + ' floats, the inputs take ' + at);
  return feeds;
}

/* max|got - want| / max|want| over the outputs concatenated in output order */
function relError(session, result, want) {
  if (!want) return -1;
  let diff = 0, top = 0, k = 0;
  for (const name of session.outputNames) {
    const data = result[name].data;
    for (let i = 0; i < data.length; i++, k++) {
      if (k >= want.length) return Infinity;
      const d = Math.abs(Number(data[i]) - want[k]), w = Math.abs(want[k]);
      if (!(d <= Infinity) || d === Infinity) return Infinity;
      if (d > diff) diff = d;
      if (w > top) top = w;
    }
  }
  if (k !== want.length) return Infinity;
  return top > 0 ? diff / top : diff;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

async function measure(ort, a, threads, x, want) {
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(a.model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const createMs = nowMs() - t0;
  const feeds = makeFeeds(ort, session, inputShapes(session, a.shapes, x.length), x);
  let err = -1;
  for (let i = 0; i < a.warmup; i++) {
    const result = await session.run(feeds);
    if (i === 0) err = relError(session, result, want);
  }
  const t = [];
  for (let i = 0; i < a.runs; i++) {
    const s = nowMs();
    await session.run(feeds);
    t.push(nowMs() - s);
  }
  if (session.release) await session.release();
  t.sort((p, q) => p - q);
  const n = t.length;
  const median = n % 2 ? t[(n - 1) / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  return { median, best: t[0], runs: n, err, createMs };
}

async function main() {
  let a, found;
  try {
    a = parseArgs(process.argv);
  } catch (e) {
    console.log('ort error: ' + e.message);
    process.exit(2);
  }
  try {
    found = loadOrt(a.ort);
  } catch (e) {
    console.log('ort unavailable: ' + e.message);
    process.exit(0);
  }
  const { ort } = found;
  const version = (ort.env && ort.env.versions && (ort.env.versions.node || ort.env.versions.common)) ||
    require(path.join(found.from === 'require' ? 'onnxruntime-node' : found.from, 'package.json')).version;
  console.log('ort version ' + version);
  /* ORT's environment (logging, the process-wide state) is made once per process, on the
     first session: made here, timed on its own, so that the create times are the sessions' */
  try {
    const t0 = nowMs();
    require(path.join(found.from === 'require' ? 'onnxruntime-node' : found.from, 'dist', 'binding.js')).initOrt();
    console.log('ort init ' + (nowMs() - t0).toFixed(1));
  } catch (e) { /* another layout: the first create time includes it */ }
  try {
    const x = readFloats(a.input);
    const want = a.output && fs.existsSync(a.output) ? readFloats(a.output) : null;
    for (const n of a.threads) {
      const r = await measure(ort, a, n, x, want);
      const e = r.err === Infinity ? 'inf' : r.err.toPrecision(6);
      console.log(['result', n, r.median.toFixed(4), r.best.toFixed(4), r.runs, e,
        r.createMs.toFixed(1)].join(' '));
    }
  } catch (e) {
    console.log('ort error: ' + String(e.message).split('\n')[0]);
    process.exit(1);
  }
}

main();
