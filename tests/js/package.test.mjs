// Packaging: `import('attnlab')` resolves through package.json "exports" to
// the engine module (the same loadEngine), the TypeScript declarations that
// package.json names exist and declare the API, and the engine module runs
// unchanged in a worker_threads Worker on both builds with the same numbers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadEngine } from '../../web/engine/index.js';
import { withEngines } from './builds.mjs';
import { simdSupported } from '../../web/engine/wasm.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ENGINE_PATH = join(ROOT, 'web/engine/index.js');
const ENGINE_URL = pathToFileURL(ENGINE_PATH).href;
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));


const X = [
  [0.43, 0.15, 0.89], [0.22, 0.58, 0.33], [0.77, 0.25, 0.10],
  [0.05, 0.80, 0.55], [0.57, 0.85, 0.64], [0.55, 0.87, 0.66],
];
const SOFTMAX_2 = [0.1435, 0.1462, 0.1263, 0.1720, 0.2046, 0.2074];
const SUM_2 = [0.1304, 0.1354, 0.0953, 0.1801, 0.2275, 0.2313];
const fourDecimals = (xs) => Array.from(xs, (x) => x.toFixed(4));

/** The declarations file package.json points at ("types", and exports["."].types if present). */
function typesPaths() {
  const paths = [];
  if (PKG.types) paths.push(PKG.types);
  if (PKG.typings) paths.push(PKG.typings);
  const dot = PKG.exports?.['.'];
  if (dot && typeof dot === 'object' && dot.types) paths.push(dot.types);
  return [...new Set(paths)];
}

/** The declarations with comments removed, so a name in a comment does not count. */
function declarations(path) {
  return readFileSync(join(ROOT, path), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
}

describe('package', () => {
  test('package.json names the package attnlab, an ES module with "exports" for "."', () => {
    assert.equal(PKG.name, 'attnlab');
    assert.equal(PKG.type, 'module');
    assert.ok(PKG.exports, 'package.json has "exports"');
  });

  test("import('attnlab') resolves (self-reference) to the engine module and the same loadEngine", async () => {
    assert.equal(import.meta.resolve('attnlab'), ENGINE_URL, 'attnlab resolves to web/engine/index.js');
    const pkg = await import('attnlab');
    assert.equal(typeof pkg.loadEngine, 'function');
    assert.equal(pkg.loadEngine, loadEngine, 'the same function object as the relative import');
    const engine = await pkg.loadEngine({ simd: false });
    assert.equal(engine.simd, false);
    assert.deepEqual(fourDecimals(engine.attend({ queries: [X[1]], keys: X }).weights.data), fourDecimals(SOFTMAX_2));
  });

  test('loadEngine() without options loads the SIMD build where supported', async () => {
    const engine = await loadEngine();
    assert.equal(engine.simd, simdSupported());
    assert.equal(typeof engine.attend, 'function');
    assert.equal(typeof engine.selfAttention, 'function');
    assert.equal(typeof engine.heapUsed, 'function');
    assert.equal(typeof engine.heapUsed(), 'number');
  });

  test('package.json "types" names a declarations file that exists', () => {
    assert.ok(PKG.types || PKG.typings, 'package.json has "types"');
    const paths = typesPaths();
    for (const path of paths) {
      assert.match(path, /\.d\.(m|c)?ts$/, `${path} is a .d.ts file`);
      assert.ok(existsSync(join(ROOT, path)), `${path} exists`);
    }
    const dot = PKG.exports?.['.'];
    if (dot && typeof dot === 'object' && dot.types) {
      assert.equal(Object.keys(dot)[0], 'types', 'exports["."].types comes first (TypeScript reads conditions in order)');
    }
  });

  test('the declarations declare loadEngine, attend, selfAttention and heapUsed', () => {
    for (const path of typesPaths()) {
      const d = declarations(path);
      assert.match(d, /export\s+(declare\s+)?(async\s+)?function\s+loadEngine\s*[(<]|export\s+(declare\s+)?const\s+loadEngine\s*:/, `${path}: loadEngine`);
      assert.match(d, /loadEngine[^;]*Promise\s*</, `${path}: loadEngine returns a Promise`);
      assert.match(d, /\battend\s*\(/, `${path}: attend(...)`);
      assert.match(d, /\bselfAttention\s*\(/, `${path}: selfAttention(...)`);
      assert.match(d, /\bheapUsed\s*\(/, `${path}: heapUsed(...)`);
      assert.match(d, /\bsimd\??\s*:\s*boolean/, `${path}: simd: boolean`);
      for (const option of ['queries', 'keys', 'values', 'score', 'params', 'normalize', 'temperature', 'mask', 'keyLengths']) {
        assert.match(d, new RegExp(`\\b${option}\\??\\s*:`), `${path}: attend option ${option}`);
      }
      for (const option of ['wq', 'wk', 'wv', 'wo', 'heads', 'causal']) {
        assert.match(d, new RegExp(`\\b${option}\\??\\s*:`), `${path}: selfAttention option ${option}`);
      }
      for (const score of ['dot', 'scaled_dot', 'general', 'additive', 'cosine', 'location']) {
        assert.ok(d.includes(`'${score}'`) || d.includes(`"${score}"`), `${path}: score '${score}'`);
      }
      for (const code of ['ERR_SHAPE', 'ERR_VALUE', 'ERR_ARG', 'ERR_PARAM', 'ERR_LIMIT', 'ERR_ZERO_SUM', 'ERR_NOMEM']) {
        assert.ok(d.includes(code), `${path}: error code ${code}`);
      }
    }
  });

  test('the files package.json publishes include the engine and both WASM builds', () => {
    if (!PKG.files) return; // everything is published
    const covers = (file) => PKG.files.some((f) => file === f || file.startsWith(`${f.replace(/\/$/, '')}/`) || (f.includes('*') && new RegExp(`^${f.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`).test(file)));
    for (const file of ['web/engine/index.js', 'web/engine/index.d.ts', 'web/wasm/attnlab-simd.wasm', 'web/wasm/attnlab-scalar.wasm']) {
      assert.ok(covers(file), `"files" covers ${file}`);
    }
  });

  test('every name the engine module exports is declared in index.d.ts and documented in docs/api.md, and neither names one it lacks', async () => {
    const exported = Object.keys(await import('attnlab')).sort();
    const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    for (const path of typesPaths()) {
      const d = declarations(path);
      const declared = [...d.matchAll(/export\s+(?:declare\s+)?(?:class|function|const|let)\s+(\w+)/g)].map((m) => m[1]);
      for (const name of exported) assert.ok(declared.includes(name), `${path} declares ${name}`);
      for (const name of declared) assert.ok(exported.includes(name), `${path} declares ${name}, which index.js does not export`);
    }
    for (const name of exported) assert.match(api, new RegExp(`\\b${name}\\b`), `docs/api.md names ${name}`);
    // what the docs import from the package, and the constant tables they cite, exist
    for (const [, names] of api.matchAll(/import\s*\{([^}]*)\}\s*from\s*'attnlab'/g)) {
      for (const name of names.split(',').map((n) => n.trim()).filter(Boolean)) assert.ok(exported.includes(name), `docs/api.md imports ${name} from attnlab`);
    }
    for (const [, name] of api.matchAll(/`([A-Z][A-Z0-9]*_LIMITS)\b/g)) assert.ok(exported.includes(name), `docs/api.md cites ${name}, which index.js does not export`);
  });
});

/** Runs an inline ES-module worker that imports the engine by URL and computes the tutorial example. */
function inWorker(simd, specifier = ENGINE_URL) {
  const source = `
    import { parentPort, workerData } from 'node:worker_threads';
    const { loadEngine } = await import(workerData.specifier);
    const engine = await loadEngine({ simd: workerData.simd, threads: 1 });
    const x = workerData.x;
    const soft = engine.attend({ queries: [x[1]], keys: x });
    const sum = engine.attend({ queries: [x[1]], keys: x, normalize: 'sum' });
    const self = engine.selfAttention({ x });
    let error = null;
    try { engine.attend({ queries: x, keys: x, temperature: 0 }); } catch (err) { error = { code: err.code, message: err.message }; }
    parentPort.postMessage({
      simd: engine.simd,
      scores: soft.scores.data, weights: soft.weights.data, context: soft.context.data,
      sumWeights: sum.weights.data, selfWeights: self.weights[0].data, selfOutput: self.output.data,
      error, heapUsed: engine.heapUsed(),
    });`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), {
    workerData: { simd, specifier, x: X },
  });
  return new Promise((ok, fail) => {
    let settled = false;
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn(value);
    };
    const timer = setTimeout(() => {
      settle(fail, new Error('worker timed out'));
      worker.terminate();
    }, 20000);
    worker.once('message', (m) => {
      settle(ok, m);
      worker.terminate();
    });
    worker.once('error', (err) => settle(fail, err));
    worker.once('exit', (code) => settle(fail, new Error(`worker exited (${code}) before posting a result`)));
  });
}

for (const { simd, name, skip, engine } of await withEngines()) {
  describe(`worker_threads (${name})`, { skip }, () => {
    test('the engine module loads in a Worker and gives the same numbers as the main thread', async () => {
      const w = await inWorker(simd);
      assert.equal(w.simd, simd, 'the worker loaded the requested build');
      assert.deepEqual(fourDecimals(w.weights), fourDecimals(SOFTMAX_2), 'tutorial softmax weights');
      assert.deepEqual(fourDecimals(w.sumWeights), fourDecimals(SUM_2), 'tutorial sum weights');
      const soft = engine.attend({ queries: [X[1]], keys: X });
      const sum = engine.attend({ queries: [X[1]], keys: X, normalize: 'sum' });
      const self = engine.selfAttention({ x: X });
      // same build, same inputs: bit-identical results
      assert.deepEqual(w.scores, soft.scores.data);
      assert.deepEqual(w.weights, soft.weights.data);
      assert.deepEqual(w.context, soft.context.data);
      assert.deepEqual(w.sumWeights, sum.weights.data);
      assert.deepEqual(w.selfWeights, self.weights[0].data);
      assert.deepEqual(w.selfOutput, self.output.data);
      // errors work the same way inside the worker
      assert.ok(w.error, 'temperature 0 threw in the worker');
      assert.equal(w.error.code, 'ERR_VALUE');
      assert.match(w.error.message, /temperature/);
      assert.equal(typeof w.heapUsed, 'number');
    });

    test("a Worker importing the package name 'attnlab' gets the same numbers", async () => {
      // a data: module cannot resolve bare names, so resolve 'attnlab' here and hand the worker the URL
      const w = await inWorker(simd, import.meta.resolve('attnlab'));
      assert.equal(w.simd, simd);
      assert.deepEqual(w.weights, engine.attend({ queries: [X[1]], keys: X }).weights.data);
    });

    test('several workers at once', async () => {
      const results = await Promise.all([inWorker(simd), inWorker(simd), inWorker(simd)]);
      for (const w of results) assert.deepEqual(w.weights, results[0].weights);
      assert.deepEqual(fourDecimals(results[0].weights), fourDecimals(SOFTMAX_2));
    });
  });
}
