// The static server (scripts/serve.mjs) as `npm start` runs it: a child process
// whose banner must name the address it really binds, that must survive paths
// it cannot stream (a directory named index.html, a socket, a file deleted
// while it is being served), that sends the pages' CSP, whose --help only
// prints usage, and that serves what `npm start` built (dist/) unless web/ is newer,
// saying which folder and why.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer as createSocketServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../../scripts/serve.mjs', import.meta.url));
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self' https://huggingface.co https://*.huggingface.co https://*.hf.co; object-src 'none'; base-uri 'none'";

const children = [];
const dirs = [];
after(() => {
  for (const child of children) if (child.exitCode === null) child.kill();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder to serve, with index.html, app.js and whatever `extra` adds. */
function site(extra = () => {}) {
  const root = mkdtempSync(join(tmpdir(), 'attnlab-serve-'));
  dirs.push(root);
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>ok</title>');
  writeFileSync(join(root, 'app.js'), 'export const ok = 1;\n');
  extra(root);
  return root;
}

/** Runs the server; resolves to { child, banner, url, output() } once it prints its banner. */
function start(args) {
  const child = spawn(process.execPath, [SERVER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no banner within 10 s: ${out}`)), 10000);
    child.stdout.on('data', () => {
      const m = out.match(/serving .*?(http:\/\/\S+?\/)[\s;]/);
      if (!m) return;
      clearTimeout(timer);
      ok({ child, banner: out.trim(), url: m[1], output: () => out });
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the server exited (${code}) before its banner: ${out}`));
    });
  });
}

/** Runs the server to completion; resolves to { code, stdout, stderr } (fails if it is still running after 5 s). */
function runToEnd(args) {
  const child = spawn(process.execPath, [SERVER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`still running after 5 s (it started a server?): ${stdout}${stderr}`)), 5000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

const alive = (child) => child.exitCode === null && child.signalCode === null;

test('--help prints the usage and exits without serving', async () => {
  const { code, stdout } = await runToEnd(['--help', '--port', '0']);
  assert.equal(code, 0);
  assert.match(stdout, /^Usage: node scripts\/serve\.mjs/);
  for (const flag of ['--root', '--port', '--host', '--help']) assert.ok(stdout.includes(flag), `usage names ${flag}`);
  assert.doesNotMatch(stdout, /serving/);
});

test('without --root it serves the built site, dist/, unless there is none or web/ changed after it; --help says so', async () => {
  const { defaultRoot } = await import('../../scripts/serve.mjs');
  const base = mkdtempSync(join(tmpdir(), 'attnlab-roots-'));
  dirs.push(base);
  const web = join(base, 'web');
  const dist = join(base, 'dist');
  mkdirSync(join(web, 'learn'), { recursive: true });
  writeFileSync(join(web, 'learn', 'main.js'), 'export {};\n');
  utimesSync(join(web, 'learn', 'main.js'), 1000, 1000);
  let chosen = await defaultRoot({ web, dist });
  assert.equal(chosen.root, web, 'no build: the sources');
  assert.match(chosen.why, /no dist\/ yet/);
  mkdirSync(dist);
  writeFileSync(join(dist, 'index.html'), '<!doctype html>');
  utimesSync(join(dist, 'index.html'), 2000, 2000);
  chosen = await defaultRoot({ web, dist });
  assert.equal(chosen.root, dist, 'built after the last edit: the built site');
  assert.match(chosen.why, /^the built site, each page's modules bundled/);
  utimesSync(join(web, 'learn', 'main.js'), 3000, 3000);
  chosen = await defaultRoot({ web, dist });
  assert.equal(chosen.root, web, 'an edit after the build is served, not hidden behind the old build');
  assert.match(chosen.why, /web\/ changed after dist\/ was built/);

  const { stdout } = await runToEnd(['--help']);
  assert.match(stdout.replace(/\s+/g, ' '), /Default: dist\/ of this repository, the built site \(npm start builds it first\): each page's modules bundled/);
  const { banner, child } = await start(['--port', '0']);
  const repo = await defaultRoot();
  assert.ok(banner.includes(`serving ${repo.root} (${repo.why}) at http`), banner);
  child.kill();
});

test('a bad argument prints what is wrong and the usage, and exits 2', async () => {
  const { code, stderr } = await runToEnd(['--prot', '8080']);
  assert.equal(code, 2);
  assert.match(stderr, /unknown argument "--prot"/);
  assert.match(stderr, /Usage:/);
  const port = await runToEnd(['--port', 'eighty']);
  assert.equal(port.code, 2);
  assert.match(port.stderr, /port must be a whole number/);
});

test('the banner names the address the server binds, and that address serves', async () => {
  const { url, child } = await start(['--root', site(), '--port', '0']);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/, 'the loopback address it binds, not a name that may resolve to ::1');
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /<title>ok<\/title>/);
  child.kill();
});

test('--host names the interface, and the banner says so', async () => {
  const { url, banner, child } = await start(['--root', site(), '--port', '0', '--host', '0.0.0.0']);
  assert.match(banner, /every interface \(0\.0\.0\.0\) on port \d+; open http:\/\/127\.0\.0\.1:\d+\//);
  assert.equal((await fetch(url)).status, 200);
  child.kill();
});

test('every response carries the strict Content-Security-Policy; only an ?embed page may be framed by another site', async () => {
  const { url, child } = await start(['--root', site(), '--port', '0']);
  for (const path of ['', 'index.html', 'app.js', 'missing.html']) {
    const res = await fetch(url + path);
    await res.arrayBuffer();
    assert.equal(res.headers.get('content-security-policy'), `${CSP}; frame-ancestors 'self'`, `/${path} (${res.status})`);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  }
  for (const [path, ancestors] of [['index.html?embed', '*'], ['index.html?embed&origin=https%3A%2F%2Fcourse.example', 'https://course.example']]) {
    const res = await fetch(url + path);
    await res.arrayBuffer();
    assert.equal(res.headers.get('content-security-policy'), `${CSP}; frame-ancestors ${ancestors}`, path);
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin', path);
  }
  child.kill();
});

test('a directory named index.html is a 404, and the server keeps serving', async () => {
  const root = site((dir) => {
    mkdirSync(join(dir, 'sub', 'index.html'), { recursive: true });
  });
  const { url, child, output } = await start(['--root', root, '--port', '0']);
  for (const path of ['sub/', 'sub/index.html']) {
    const res = await fetch(url + path).catch((err) => ({ status: `no answer (${err.cause?.code ?? err.message})` }));
    assert.equal(res.status, 404, `/${path}`);
  }
  await new Promise((ok) => setTimeout(ok, 100));
  assert.ok(alive(child), `the server died: ${output()}`);
  assert.equal((await fetch(`${url}app.js`)).status, 200);
  child.kill();
});

test('a path that stat describes but open refuses (a socket) is a 404, and the server keeps serving', async (t) => {
  const root = site();
  const socket = createSocketServer();
  await new Promise((ok) => socket.listen(join(root, 'live.sock'), ok));
  t.after(() => socket.close());
  const { url, child, output } = await start(['--root', root, '--port', '0']);
  const res = await fetch(`${url}live.sock`).catch((err) => ({ status: `no answer (${err.cause?.code ?? err.message})` }));
  assert.equal(res.status, 404);
  await new Promise((ok) => setTimeout(ok, 100));
  assert.ok(alive(child), `the server died: ${output()}`);
  assert.equal((await fetch(url)).status, 200);
  child.kill();
});

test('files deleted and replaced while they are requested never stop the server', async () => {
  const root = site();
  const { url, child, output } = await start(['--root', root, '--port', '0']);
  const file = join(root, 'churn.js');
  const body = 'x'.repeat(200000);
  let churning = true;
  const churn = (async () => {
    while (churning) {
      // written aside and renamed into place: the file is whole or absent, never half-written
      writeFileSync(`${file}.tmp`, body);
      renameSync(`${file}.tmp`, file);
      await new Promise((ok) => setImmediate(ok));
      try { unlinkSync(file); } catch { /* already gone */ }
      await new Promise((ok) => setImmediate(ok));
    }
  })();
  const statuses = new Set();
  const wrong = [];
  try {
    for (let i = 0; i < 300 && alive(child); i++) {
      statuses.add(await fetch(`${url}churn.js`).then(async (r) => {
        const text = await r.text().catch(() => null);
        // a 200 is the whole file, or a cut-off body the client sees as an error; never other bytes
        if (r.status === 200 && text !== null && text !== body) wrong.push(text.length);
        return r.status;
      }, () => 'cut'));
    }
  } finally {
    churning = false;
    await churn;
  }
  assert.ok(alive(child), `the server died under churn: ${output()}`);
  assert.deepEqual(wrong, [], 'bodies of the wrong length');
  for (const s of statuses) assert.ok([200, 404, 'cut'].includes(s), `status ${s}`);
  assert.equal((await fetch(url)).status, 200);
  child.kill();
});

test('paths outside the root are refused', async () => {
  const { url, child } = await start(['--root', site(), '--port', '0']);
  for (const path of ['..%2f..%2fetc%2fpasswd', '%2e%2e/%2e%2e/etc/passwd', 'a%00b']) {
    const res = await fetch(url + path);
    assert.ok([403, 404].includes(res.status), `/${path}: ${res.status}`);
    assert.doesNotMatch(await res.text(), /root:/);
  }
  child.kill();
});
