// scripts/vendor.mjs runs while pages read web/vendor/: the site build runs it, and the
// browser tests build the site two files at a time, beside another file's pages. So a run
// must leave a current file alone, replace a changed one whole (a new file renamed over
// it, so a reader holding or opening it sees the old bytes or the new, never half), and
// two runs at once must both succeed and agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const VENDOR = fileURLToPath(new URL('../../scripts/vendor.mjs', import.meta.url));

/** Runs vendor.mjs into `dir`; resolves with its exit code and stderr. */
const vendor = (dir) => new Promise((ok) => {
  execFile(process.execPath, [VENDOR, '--out', dir], (err, stdout, stderr) => ok({ code: err ? err.code ?? 1 : 0, stderr }));
});

/** Every file under `dir`: relative path -> { bytes, ino, mtimeMs }. */
async function snapshot(dir) {
  const files = new Map();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const s = await stat(path);
    files.set(relative(dir, path), { bytes: await readFile(path), ino: s.ino, mtimeMs: s.mtimeMs });
  }
  return files;
}

const scratch = () => mkdtemp(join(tmpdir(), 'attnlab-vendor-'));
let reference;
test.before(async () => {
  const dir = await scratch();
  const r = await vendor(dir);
  assert.equal(r.code, 0, r.stderr);
  reference = await snapshot(dir);
  await rm(dir, { recursive: true, force: true });
  assert.ok(['colortables.js', 'formulas.js', 'formulas.css', 'katex/katex.min.css'].every((f) => reference.has(f)));
  assert.ok([...reference.keys()].some((f) => f.startsWith('katex/fonts/') && f.endsWith('.woff2')), 'the KaTeX fonts are copied');
});

test('two runs at once into an empty folder both succeed and leave the same files as one run', async (t) => {
  const dir = await scratch();
  t.after(() => rm(dir, { recursive: true, force: true }));
  const runs = await Promise.all([vendor(dir), vendor(dir)]);
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  const got = await snapshot(dir);
  assert.deepEqual([...got.keys()].sort(), [...reference.keys()].sort(), 'no temporary file is left behind');
  for (const [path, { bytes }] of reference) assert.ok(got.get(path).bytes.equals(bytes), path);
});

test('a rerun over current files writes none of them', async (t) => {
  const dir = await scratch();
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal((await vendor(dir)).code, 0);
  const before = await snapshot(dir);
  await new Promise((ok) => setTimeout(ok, 20)); // a rewrite would show in the modification time
  assert.equal((await vendor(dir)).code, 0);
  const after = await snapshot(dir);
  for (const [path, b] of before) {
    assert.equal(after.get(path).ino, b.ino, `${path} was replaced`);
    assert.equal(after.get(path).mtimeMs, b.mtimeMs, `${path} was rewritten`);
  }
});

test('a changed file is replaced by a new one, not rewritten where a reader has it open', async (t) => {
  const dir = await scratch();
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal((await vendor(dir)).code, 0);
  const stale = ['formulas.js', 'katex/katex.min.css', [...reference.keys()].find((f) => f.startsWith('katex/fonts/'))];
  const inos = {};
  for (const f of stale) {
    await writeFile(join(dir, f), 'stale');
    inos[f] = (await stat(join(dir, f))).ino;
  }
  assert.equal((await vendor(dir)).code, 0);
  for (const f of stale) {
    assert.ok((await readFile(join(dir, f))).equals(reference.get(f).bytes), `${f} is current again`);
    assert.notEqual((await stat(join(dir, f))).ino, inos[f], `${f} was rewritten in place`);
  }
});

test('a reader looping over the files during two runs at once sees each file whole, old or new', async (t) => {
  const dir = await scratch();
  t.after(() => rm(dir, { recursive: true, force: true }));
  assert.equal((await vendor(dir)).code, 0);
  const old = new Map();
  for (const f of reference.keys()) {
    old.set(f, Buffer.from(`stale ${f}`));
    await writeFile(join(dir, f), old.get(f));
  }
  let running = true;
  const seen = [];
  const reader = (async () => {
    let reads = 0;
    while (running) {
      for (const f of reference.keys()) {
        const bytes = await readFile(join(dir, f)).catch((err) => err);
        reads++;
        if (bytes instanceof Error) seen.push(`${f}: ${bytes.code}`);
        else if (!bytes.equals(old.get(f)) && !bytes.equals(reference.get(f).bytes)) seen.push(`${f}: ${bytes.length} bytes`);
      }
    }
    return reads;
  })();
  const runs = await Promise.all([vendor(dir), vendor(dir)]);
  running = false;
  const reads = await reader;
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  assert.ok(reads > reference.size, `the reader read during the runs (${reads} reads)`);
  assert.deepEqual(seen, [], 'a reader saw a file that was neither the old one nor the new one');
});
