'use strict'
// A TypeScript (or JavaScript) gene compiled to a WASI command with Javy, for `rotifer compile`:
// the source transpiled to CommonJS, wrapped in a shim that reads the input JSON from stdin,
// calls `express` and writes its output to stdout (a compiled TypeScript gene has no memory),
// then `javy build`. Javy is never downloaded: without a `javy` binary on PATH the command fails
// and says how to install it.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { CliError } = require('./errors')
const { transpile } = require('./transpile')

const JAVY_TIMEOUT_MS = 60_000
const ASYNC_EXPRESS = [/\basync\s+function\s+express\b/, /\bexpress\s*=\s*async\b/, /\bfunction\s+express\s*\([^)]*\)\s*:\s*Promise\s*</]

/** The `javy` executable on PATH, or null. */
function findJavy(env = process.env) {
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    if (!dir) continue
    const file = path.join(dir, 'javy')
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {
      // not here
    }
  }
  return null
}

const INSTALL = 'install Javy (a release binary named javy from https://github.com/bytecodealliance/javy/releases, or npm i -g javy-cli) and run rotifer compile again; or build gene.wasm yourself and run rotifer compile <gene> --lang wasm'

/** The shim Javy compiles: the gene's CommonJS code, then stdin → express → stdout. */
function shim(code) {
  return `const module = { exports: {} };
(function (module, exports) {
${code}
})(module, module.exports);
const gene = module.exports;
const express = typeof gene.express === 'function' ? gene.express : typeof gene.default === 'function' ? gene.default : gene.main;
const chunks = [];
let total = 0;
for (;;) {
  const buffer = new Uint8Array(1024);
  const n = Javy.IO.readSync(0, buffer);
  if (n === 0) break;
  chunks.push(buffer.subarray(0, n));
  total += n;
}
const bytes = new Uint8Array(total);
let at = 0;
for (const c of chunks) { bytes.set(c, at); at += c.length; }
const result = express(JSON.parse(new TextDecoder().decode(bytes)), {});
if (result && typeof result.then === 'function') throw new Error('express returned a Promise: a gene compiled to WASM has no event loop; make express synchronous, or run the gene under Node');
Javy.IO.writeSync(1, new TextEncoder().encode(JSON.stringify(result)));
`
}

/** Runs javy to its end; `{ status, stderr, timedOut, interrupted }`. Ctrl-C stops it. */
function runJavy(javy, args) {
  return new Promise((resolve) => {
    const child = spawn(javy, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    let timedOut = false
    let interrupted = false
    child.stderr.on('data', (d) => {
      if (stderr.length < 64 * 1024) stderr += d
    })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, JAVY_TIMEOUT_MS)
    const onInterrupt = () => {
      interrupted = true
      child.kill('SIGKILL')
    }
    process.on('SIGINT', onInterrupt)
    const done = (status, error) => {
      clearTimeout(timer)
      process.removeListener('SIGINT', onInterrupt)
      resolve({ status, stderr, timedOut, interrupted, error })
    }
    child.on('error', (e) => done(null, e))
    child.on('close', (status) => done(status, null))
  })
}

/** Compiles `source` (a file of `gene`) with Javy into the gene's gene.wasm; returns its bytes. */
async function compileWithJavy(gene, source, io, env = process.env) {
  const shown = path.join(gene.where, path.basename(source))
  // The source is judged before the toolchain is looked for: no Javy would help an async gene.
  const text = fs.readFileSync(source, 'utf8')
  if (ASYNC_EXPRESS.some((re) => re.test(text))) {
    throw new CliError(`${shown} declares an async express (E0025): a gene compiled to WASM needs a synchronous express, since Javy (QuickJS) has no event loop; return the value instead of a Promise, or leave the gene uncompiled to run it under Node`)
  }
  const javy = findJavy(env)
  if (!javy) throw new CliError(`compiling ${shown} to WebAssembly needs Javy, and no javy binary is on PATH (E0024): ${INSTALL}`)
  const code = transpile(text, source, 'cjs', null)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-javy-'))
  try {
    const shimFile = path.join(dir, 'gene-shim.js')
    const out = path.join(dir, 'gene.wasm')
    fs.writeFileSync(shimFile, shim(code), { mode: 0o600 })
    io.err(`Compiling ${shown} with ${javy}…`)
    const r = await runJavy(javy, ['build', shimFile, '-o', out])
    if (r.interrupted) {
      fs.rmSync(dir, { recursive: true, force: true })
      process.stderr.write('rotifer: interrupted; javy was stopped and nothing was written\n')
      process.exit(130)
    }
    if (r.timedOut) throw new CliError(`javy did not finish compiling ${shown} within ${JAVY_TIMEOUT_MS / 1000} s (E0024); it was stopped`)
    if (r.error) throw new CliError(`javy could not run (${r.error.code || r.error.message}) (E0024): ${INSTALL}`)
    if (r.status !== 0) throw new CliError(`javy failed to compile ${shown} (exit ${r.status}, E0024): ${r.stderr.trim().split('\n').slice(-3).join(' ') || 'no message'}`)
    const bytes = fs.readFileSync(out)
    fs.writeFileSync(path.join(gene.dir, 'gene.wasm'), bytes)
    return bytes
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

module.exports = { compileWithJavy, findJavy }
