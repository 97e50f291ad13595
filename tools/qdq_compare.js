#!/usr/bin/env node
/* qdq_compare.js - a QDQ model in ONNX Runtime: how far ORT's output is from the fake-quantized
   reference (tools/quantize.py's .output.bin), and ORT's int8 time against its float time.

   Usage (from the repository root; node and onnxruntime-node):

     node tools/qdq_compare.js --model M.qdq.onnx --input M.qdq.input.bin
          [--output M.qdq.output.bin] [--float M.onnx] [--threads 1,2] [--runs 20]
          [--warmup 3] [--rounds 3] [--save-output FILE] [--ort DIR]

   For each thread count N: one session per model (intraOpNumThreads N, interOpNumThreads 1,
   sequential, graphOptimizationLevel 'all', so ORT turns the Q/DQ patterns into its integer
   kernels), the outputs of a first run compared, then --warmup runs of each, then --rounds
   rounds that each time --runs runs of the int8 model and then --runs of the float one
   (alternating, so that a busy neighbour on the machine slows both alike). --runs 0 only
   compares. --save-output writes the int8 model's outputs of the first thread count (raw
   float32 little-endian, in output order). The module: --ort DIR, else $FUSE_ORT_DIR, else
   build/ort, else /work/ort/node_modules/onnxruntime-node, else require('onnxruntime-node').

   Input and output files are raw float32 little-endian, the tensors one after another in graph
   order. Prints one line each, fields as key=value after a tag:

     ort version=V
     error threads=N int8_vs_reference=E int8_vs_reference_max=E int8_vs_fp32=E
     round threads=N round=R int8_ms=T fp32_ms=T
     result threads=N int8_ms=T fp32_ms=T int8_over_fp32=Q rounds=R runs=K int8_create_ms=T fp32_create_ms=T

   errors: ||got - want|| / ||want|| over all outputs (2-norm), and *_max the max-norm form
   max|got - want| / max|want| that bench/nets_ort.js prints; int8_vs_fp32 is ORT int8 against
   ORT float (the quantization's own cost, as ORT sees it). Times in ms, medians of each
   round's runs, then the median of the rounds. A failure prints `qdq error: ...`, exit 1. */
'use strict';

const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const a = { threads: [1, 2], runs: 20, warmup: 3, rounds: 3 };
  const keys = { '--model': 'model', '--input': 'input', '--output': 'output', '--float': 'float',
    '--save-output': 'save', '--ort': 'ort' };
  for (let i = 2; i < argv.length; i += 2) {
    const k = argv[i], v = argv[i + 1];
    if (v === undefined) throw new Error('missing value after ' + k);
    if (keys[k]) a[keys[k]] = v;
    else if (k === '--threads') a.threads = v.split(',').filter((s) => s).map(Number);
    else if (k === '--runs') a.runs = Math.max(0, parseInt(v, 10) || 0);
    else if (k === '--warmup') a.warmup = Math.max(0, parseInt(v, 10) || 0);
    else if (k === '--rounds') a.rounds = Math.max(1, parseInt(v, 10) || 1);
    else throw new Error('unknown option ' + k);
  }
  if (!a.model || !a.input) throw new Error('--model and --input are required');
  if (a.threads.some((n) => !(n >= 1))) throw new Error('bad --threads');
  return a;
}

function loadOrt(dir) {
  const places = dir ? [dir] : [process.env.FUSE_ORT_DIR, path.join(__dirname, '..', 'build', 'ort'),
    '/work/ort/node_modules/onnxruntime-node'];
  for (const p of places.filter((d) => d)) {
    for (const d of [path.join(path.resolve(p), 'node_modules', 'onnxruntime-node'), path.resolve(p)]) {
      if (fs.existsSync(path.join(d, 'package.json'))) return require(d);
    }
  }
  if (dir) throw new Error('no onnxruntime-node in ' + dir);
  return require('onnxruntime-node');
}

function readFloats(file) {
  const b = fs.readFileSync(file);
  if (b.length % 4) throw new Error(file + ': size not a multiple of 4');
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

const product = (dims) => dims.reduce((p, d) => p * d, 1);
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const median = (t) => {
  const s = [...t].sort((p, q) => p - q), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
};

/* the input file split over the session's float inputs, by their (static) shapes */
function makeFeeds(ort, session, x) {
  const feeds = {};
  let at = 0;
  session.inputNames.forEach((name, i) => {
    const m = session.inputMetadata[i];
    if (m.type !== 'float32') throw new Error('input ' + name + ' has type ' + m.type);
    if (m.shape.some((d) => typeof d !== 'number' || d < 1))
      throw new Error('input ' + name + ' has symbolic dimensions');
    const n = product(m.shape);
    if (at + n > x.length) throw new Error('the input file is too short for input ' + name);
    feeds[name] = new ort.Tensor('float32', x.slice(at, at + n), m.shape);
    at += n;
  });
  if (at !== x.length) throw new Error('the input file has ' + x.length + ' floats, the inputs take ' + at);
  return feeds;
}

async function outputs(session, feeds) {
  const r = await session.run(feeds);
  const parts = session.outputNames.map((n) => Float32Array.from(r[n].data, Number));
  const all = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return all;
}

/* [||got - want|| / ||want||, max|got - want| / max|want|]; Infinity when the sizes differ */
function errors(got, want) {
  if (got.length !== want.length) return [Infinity, Infinity];
  let d2 = 0, w2 = 0, dmax = 0, wmax = 0;
  for (let i = 0; i < got.length; i++) {
    const d = got[i] - want[i];
    d2 += d * d, w2 += want[i] * want[i];
    dmax = Math.max(dmax, Math.abs(d)), wmax = Math.max(wmax, Math.abs(want[i]));
  }
  return [Math.sqrt(d2) / Math.sqrt(w2 || 1), dmax / (wmax || 1)];
}

async function create(ort, model, threads) {
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  return { session, createMs: nowMs() - t0 };
}

async function timeRuns(session, feeds, runs) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    const s = nowMs();
    await session.run(feeds);
    t.push(nowMs() - s);
  }
  return median(t);
}

const fmt = (e) => (e === Infinity ? 'inf' : e.toExponential(3));

async function compareAt(ort, a, threads, x, want, first) {
  const q = await create(ort, a.model, threads);
  const f = a.float ? await create(ort, a.float, threads) : null;
  const qFeeds = makeFeeds(ort, q.session, x), fFeeds = f ? makeFeeds(ort, f.session, x) : null;
  const got = await outputs(q.session, qFeeds);
  if (first && a.save) fs.writeFileSync(a.save, Buffer.from(got.buffer));
  const fields = ['error threads=' + threads];
  if (want) {
    const [e2, emax] = errors(got, want);
    fields.push('int8_vs_reference=' + fmt(e2), 'int8_vs_reference_max=' + fmt(emax));
  }
  if (f) fields.push('int8_vs_fp32=' + fmt(errors(got, await outputs(f.session, fFeeds))[0]));
  console.log(fields.join(' '));
  if (a.runs > 0) {
    for (let i = 0; i < a.warmup; i++) {
      await q.session.run(qFeeds);
      if (f) await f.session.run(fFeeds);
    }
    const tq = [], tf = [];
    for (let r = 0; r < a.rounds; r++) {
      tq.push(await timeRuns(q.session, qFeeds, a.runs));
      if (f) tf.push(await timeRuns(f.session, fFeeds, a.runs));
      console.log('round threads=' + threads + ' round=' + r + ' int8_ms=' + tq[r].toFixed(4) +
        (f ? ' fp32_ms=' + tf[r].toFixed(4) : ''));
    }
    const mq = median(tq), mf = f ? median(tf) : 0;
    console.log(['result threads=' + threads, 'int8_ms=' + mq.toFixed(4)]
      .concat(f ? ['fp32_ms=' + mf.toFixed(4), 'int8_over_fp32=' + (mq / mf).toFixed(3)] : [])
      .concat(['rounds=' + a.rounds, 'runs=' + a.runs, 'int8_create_ms=' + q.createMs.toFixed(1)])
      .concat(f ? ['fp32_create_ms=' + f.createMs.toFixed(1)] : []).join(' '));
  }
  for (const s of [q, f]) if (s && s.session.release) await s.session.release();
}

async function main() {
  try {
    const a = parseArgs(process.argv);
    const ort = loadOrt(a.ort);
    console.log('ort version=' + ort.env.versions.common);
    const x = readFloats(a.input);
    const want = a.output ? readFloats(a.output) : null;
    for (let i = 0; i < a.threads.length; i++) await compareAt(ort, a, a.threads[i], x, want, i === 0);
  } catch (e) {
    console.log('qdq error: ' + String(e.message).split('\n')[0]);
    process.exit(1);
  }
}

main();
