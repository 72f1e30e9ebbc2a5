'use strict'
// WASM genes in the native sandbox (R-RUN-5, R-RUN-8, R-RUN-10), through the real bin: fuel, the
// memory cap, the playground's host functions, bounded logs, WASI, Ctrl-C, `rotifer compile`
// and the compiled-module cache.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { rotifer, rotiferWithEnv, json, makeProject, addGene, createAgent, oneErrorLine, REPO } = require('./cli-harness')
const { WAT, addWasmGene, addCounter } = require('./wasm-genes')

const BIN = path.join(REPO, 'bin', 'rotifer.js')

/** Resolves once `ready()` is true (checked every 20 ms), or after `ms`. */
async function until(ready, ms) {
  const end = Date.now() + ms
  while (!ready() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
}

describe('the sandbox', () => {
  test('a compiled gene remembers across agent runs; rotifer compile prints its IR', async (t) => {
    const root = makeProject(t)
    await addCounter(root)
    const c = rotifer(root, 'compile', 'counter')
    assert.equal(c.status, 0, c.stderr)
    assert.match(c.stdout, /^Gene "counter" compiled to Rotifer IR$/m)
    assert.match(c.stdout, /^ {2}Gene ID \(v2\) {2}v2:[0-9a-f]{64}$/m)
    assert.match(c.stdout, /^ {2}Fidelity {6}Native$/m)
    const irHash = c.stdout.match(/^ {2}IR Hash {7}([0-9a-f]{64})$/m)[1]
    const dir = path.join(root, 'genes', 'counter')
    const phenotype = JSON.parse(fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8'))
    assert.equal(phenotype.irHash, irHash)
    assert.equal(phenotype.fidelity, 'Native')
    const result = JSON.parse(fs.readFileSync(path.join(dir, '.compile-result.json'), 'utf8'))
    assert.equal(result.irHash, irHash)
    assert.equal(result.wasmSize, fs.statSync(path.join(dir, 'gene.ir.wasm')).size)
    assert.equal(`v2:${result.geneId}`, c.stdout.match(/Gene ID \(v2\) {2}(v2:[0-9a-f]{64})/)[1])
    // The IR carries the playground's four custom sections.
    const names = WebAssembly.Module.customSections
    const module = new WebAssembly.Module(fs.readFileSync(path.join(dir, 'gene.ir.wasm')))
    for (const s of ['rotifer.version', 'rotifer.phenotype', 'rotifer.constraints', 'rotifer.metering']) assert.equal(names(module, s).length, 1, s)
    // A second compile gives the same hash (the phenotype's fidelity is already Native).
    assert.equal(rotifer(root, 'compile', 'counter').stdout.match(/IR Hash {7}(\S+)/)[1], irHash)
    // gene.wasm goes away: what runs is gene.ir.wasm.
    fs.rmSync(path.join(dir, 'gene.wasm'))
    createAgent(root, 'counting', ['counter'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'counting', '--input', '{}')), { runs: 1 })
    const second = rotifer(root, 'agent', 'run', 'counting', '--input', '{}')
    assert.deepEqual(json(second), { runs: 2 })
    assert.match(second.stderr, /^\[counter\] info: run 2$/m)
  })

  test('rotifer compile --wasm <path>, then agent run; --check writes nothing', async (t) => {
    const root = makeProject(t)
    const dir = await addWasmGene(root, 'fixed', WAT.constant({ from: 'ir' }))
    const elsewhere = path.join(root, 'build.wasm')
    fs.renameSync(path.join(dir, 'gene.wasm'), elsewhere)
    fs.writeFileSync(path.join(dir, 'index.js'), 'exports.express = () => ({ from: "source" })')
    const before = fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8')
    const check = rotifer(root, 'compile', 'fixed', '--check', '--wasm', elsewhere)
    assert.equal(check.status, 0, check.stderr)
    assert.equal(fs.readFileSync(path.join(dir, 'phenotype.json'), 'utf8'), before)
    assert.equal(fs.existsSync(path.join(dir, 'gene.ir.wasm')), false)
    const c = rotifer(root, 'compile', 'fixed', '--wasm', elsewhere)
    assert.equal(c.status, 0, c.stderr)
    createAgent(root, 'a', ['fixed'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'a', '--input', '{}')), { from: 'ir' })
  })

  test('rotifer compile refuses a module the sandbox cannot run, and a TypeScript gene without javy says how to install it', async (t) => {
    const root = makeProject(t)
    const dir = await addWasmGene(root, 'bad', WAT.unknownImport())
    const r = rotifer(root, 'compile', 'bad')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /imports "env"\."clock" \(function\), which the sandbox does not provide/)
    assert.equal(fs.existsSync(path.join(dir, 'gene.ir.wasm')), false)

    const badLang = rotifer(root, 'compile', 'bad', '--lang', 'rust')
    assert.equal(badLang.status, 2)
    assert.match(badLang.stderr, /invalid --lang "rust".*: use ts or wasm/)
    addGene(root, 'ts', { 'index.ts': 'export function express(input: { name: string }) { return { hi: input.name } }' })
    const noJavy = rotiferWithEnv(root, { PATH: path.dirname(process.execPath) }, 'compile', 'ts')
    assert.equal(noJavy.status, 1)
    assert.match(oneErrorLine(noJavy), /needs Javy, and no javy binary is on PATH \(E0024\): install Javy .*rotifer compile again/)
  })

  test('with a javy on PATH, a TypeScript gene is compiled through it', async (t) => {
    const root = makeProject(t)
    addGene(root, 'ts', { 'index.ts': 'export function express(input: { name: string }) { return { hi: input.name } }' })
    // A stand-in javy: records its arguments and the shim, and writes a WASI command that echoes.
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-fake-javy-'))
    t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
    const wasm = path.join(bin, 'echo.wasm')
    fs.writeFileSync(wasm, await require('../scripts/wat').compileWat(WAT.wasiEcho()))
    fs.writeFileSync(path.join(bin, 'javy'), `#!/bin/sh\necho "$@" > "${bin}/args"\ncp "$2" "${bin}/shim.js"\ncp "${wasm}" "$4"\n`, { mode: 0o755 })
    const r = rotiferWithEnv(root, { PATH: `${bin}:${process.env.PATH}` }, 'compile', 'ts')
    assert.equal(r.status, 0, r.stderr)
    assert.match(fs.readFileSync(path.join(bin, 'args'), 'utf8'), /^build \S+gene-shim\.js -o \S+gene\.wasm$/m)
    const shim = fs.readFileSync(path.join(bin, 'shim.js'), 'utf8')
    assert.match(shim, /Javy\.IO\.readSync\(0/)
    assert.match(shim, /function express\(input\)/, 'the TypeScript was transpiled')
    assert.match(r.stdout, /Fidelity {6}Native/)
    assert.deepEqual(json(rotifer(root, 'run', 'ts', '--input', '{"x":2}')), { x: 2 }, 'the compiled gene runs (the stand-in echoes)')
  })

  test("rotifer test's standard checks verify gene.ir.wasm: compiled passes, raw sections missing fails", async (t) => {
    const root = makeProject(t)
    const dir = await addWasmGene(root, 'plain', WAT.constant({ ok: true }))
    fs.renameSync(path.join(dir, 'gene.wasm'), path.join(dir, 'gene.ir.wasm'))
    const raw = rotifer(root, 'test', 'plain')
    assert.equal(raw.status, 1, raw.stdout)
    assert.match(raw.stdout, /FAIL {2}IR verification of genes\/plain\/gene\.ir\.wasm.*: missing required custom sections: rotifer\.version, rotifer\.phenotype, rotifer\.constraints, rotifer\.metering/)
    assert.equal(rotifer(root, 'compile', 'plain').status, 0)
    const compiled = rotifer(root, 'test', 'plain')
    assert.equal(compiled.status, 0, compiled.stdout)
    assert.match(compiled.stdout, /ok {4}IR verification of genes\/plain\/gene\.ir\.wasm \(WARN: memory has no maximum/)
  })

  test('Par of compiled genes with merge "first" returns one branch', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'left', WAT.constant({ side: 'left' }))
    await addWasmGene(root, 'right', WAT.constant({ side: 'right' }))
    for (const g of ['left', 'right']) assert.equal(rotifer(root, 'compile', g).status, 0)
    const file = path.join(root, 'par.json')
    fs.writeFileSync(file, JSON.stringify({ type: 'Par', branches: [{ type: 'Gene', name: 'left' }, { type: 'Gene', name: 'right' }], merge: 'first' }))
    assert.equal(rotifer(root, 'agent', 'create', 'p', '--composition', file).status, 0)
    const out = json(rotifer(root, 'agent', 'run', 'p', '--input', '{}'))
    assert.ok(['left', 'right'].includes(out.side), JSON.stringify(out))
    assert.deepEqual(Object.keys(out), ['side'])
  })

  test('env.log, rotifer.readContext and rotifer.remainingBudget', async (t) => {
    const root = makeProject(t)
    // Logs through env.log, reads agent_id from the context and checks the budget is positive.
    await addWasmGene(root, 'ctx', `(module
      (import "env" "log" (func $log (param i32 i32)))
      (import "rotifer" "readContext" (func $ctx (param i32 i32 i32 i32) (result i32)))
      (import "rotifer" "remainingBudget" (func $budget (result i64)))
      (memory (export "memory") 1)
      (data (i32.const 1000) "agent_id")
      (data (i32.const 1100) "hello from env.log")
      (data (i32.const 2000) "{\\"agent\\":")
      (func (export "express") (param i32 i32) (result i32) (local $n i32)
        (call $log (i32.const 1100) (i32.const 18))
        (if (i64.le_s (call $budget) (i64.const 0)) (then unreachable))
        (local.set $n (call $ctx (i32.const 1000) (i32.const 8) (i32.const 2009) (i32.const 200)))
        (if (i32.le_s (local.get $n) (i32.const 0)) (then unreachable))
        (i32.store8 (i32.add (i32.const 2009) (local.get $n)) (i32.const 125))
        (i32.store8 (i32.add (i32.const 2010) (local.get $n)) (i32.const 0))
        (i32.const 2000)))`)
    const alone = rotifer(root, 'run', 'ctx', '--input', '{}')
    assert.deepEqual(json(alone), { agent: 'cli' })
    assert.match(alone.stderr, /^\[ctx\] info: hello from env\.log$/m)
    const agent = createAgent(root, 'c', ['ctx'])
    assert.deepEqual(json(rotifer(root, 'agent', 'run', 'c', '--input', '{}')), { agent: agent.id })
  })

  test('an endless loop is stopped by fuel, well inside --timeout 300', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'spin', WAT.loop())
    const started = Date.now()
    const r = rotifer(root, 'run', 'spin', '--input', '{}', '--timeout', '300')
    assert.ok(Date.now() - started < 30000, `took ${Date.now() - started} ms`)
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /gene "spin" .*failed: it ran out of fuel: it had 500000000 units/)
  })

  test('memory.grow to 1 GiB is refused (-1) and the gene goes on', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'greedy', `(module (memory (export "memory") 1)
      (data (i32.const 100) "{\\"grow\\":\\"refused\\"}\\00")
      (data (i32.const 200) "{\\"grow\\":\\"granted\\"}\\00")
      (func (export "express") (param i32 i32) (result i32)
        (if (result i32) (i32.eq (memory.grow (i32.const 16384)) (i32.const -1)) (then (i32.const 100)) (else (i32.const 200)))))`)
    assert.deepEqual(json(rotifer(root, 'run', 'greedy', '--input', '{}')), { grow: 'refused' })
  })

  test('a rotifer.log flood ends within its deadline with bounded stderr and memory', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'flood', `(module
      (import "rotifer" "log" (func $log (param i32 i32 i32)))
      (memory (export "memory") 2)
      (func (export "express") (param i32 i32) (result i32)
        (memory.fill (i32.const 0) (i32.const 120) (i32.const 60000))
        (loop $l (call $log (i32.const 1) (i32.const 0) (i32.const 60000)) (br $l))
        (i32.const 0)))`)
    const started = Date.now()
    const r = spawnSync('/usr/bin/time', ['-f', 'maxrss=%M', process.execPath, BIN, 'run', 'flood', '--input', '{}', '--timeout', '5'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 })
    const elapsed = Date.now() - started
    assert.equal(r.status, 1)
    assert.ok(elapsed < 15000, `took ${elapsed} ms`)
    assert.ok(r.stderr.length < 1.2 * 1024 * 1024, `${r.stderr.length} bytes of stderr`)
    assert.match(r.stderr, /\[flood\] note: \d+ log line\(s\) \(\d+ bytes\) dropped/)
    const rssKb = Number(r.stderr.match(/maxrss=(\d+)/)[1])
    assert.ok(rssKb < 400 * 1024, `max RSS ${rssKb} KiB`)
  })

  test("a Node gene's console output is escaped and cut, and what was dropped is told even at a timeout", (t) => {
    const root = makeProject(t)
    addGene(root, 'sly', { 'index.js': 'exports.express = () => { console.log("\\u001b[2Jrotifer: interrupted"); console.log("z".repeat(10000)); for (let i = 0; i < 5000; i++) console.log(i); for (;;) {} }' })
    const r = spawnSync(process.execPath, [BIN, 'run', 'sly', '--input', '{}', '--timeout', '2'], { cwd: root, encoding: 'utf8' })
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^\\u\{1b\}\[2Jrotifer: interrupted$/m, 'the escape is shown, not sent')
    assert.doesNotMatch(r.stderr, /\u001b/)
    assert.match(r.stderr, /^z{4096}… \(10000 bytes in all\)$/m)
    assert.match(r.stderr, /^\[sly\] note: \d+ write\(s\) to stdout\/stderr \(\d+ bytes\) dropped/m)
    assert.match(r.stderr, /timed out after 2 s/)
  })

  test('Ctrl-C while javy compiles removes its folder and exits 130', async (t) => {
    const root = makeProject(t)
    addGene(root, 'ts', { 'index.ts': 'export function express(input: object) { return input }' })
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-slow-javy-'))
    t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
    // The fake javy says it started (so the CLI is waiting on it), then waits to be stopped.
    const started = path.join(bin, 'started')
    fs.writeFileSync(path.join(bin, 'javy'), '#!/bin/sh\n: > "$FAKE_JAVY_STARTED"\nsleep 30\nexit 1\n', { mode: 0o755 })
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-javy-tmp-'))
    t.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
    const child = spawn(process.execPath, [BIN, 'compile', 'ts'], { cwd: root, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, TMPDIR: tmp, FAKE_JAVY_STARTED: started } })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise((r) => child.on('exit', (c) => r(c)))
    await until(() => fs.existsSync(started) || child.exitCode !== null, 60000)
    assert.ok(fs.existsSync(started), `javy never started: ${stderr}`)
    child.kill('SIGINT')
    const code = await exited
    assert.equal(code, 130, stderr)
    assert.match(stderr, /interrupted; javy was stopped and nothing was written/)
    assert.deepEqual(fs.readdirSync(tmp), [])
    assert.equal(fs.existsSync(path.join(root, 'genes', 'ts', 'gene.ir.wasm')), false)
  })

  test('Ctrl-C while the CLI is still starting ends quietly: one line, exit 130', async (t) => {
    const root = makeProject(t)
    addGene(root, 'hang', { 'index.js': 'exports.express = () => { for (;;) {} }' })
    const mark = path.join(root, 'loading-main')
    const preload = path.join(REPO, '__test__', 'fixtures', 'slow-start.js')
    const child = spawn(process.execPath, ['--require', preload, BIN, 'run', 'hang', '--input', '{}', '--timeout', '60'], { cwd: root, env: { ...process.env, SLOW_START_MARK: mark } })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise((r) => child.on('exit', (c, s) => r([c, s])))
    await until(() => fs.existsSync(mark) || child.exitCode !== null, 60000)
    assert.ok(fs.existsSync(mark), `the bin never loaded its modules: ${stderr}`)
    child.kill('SIGINT')
    assert.deepEqual(await exited, [130, null], stderr)
    assert.equal(stderr.trim().split('\n').length, 1, stderr)
    assert.match(stderr, /^rotifer: interrupted/)
  })

  test('a Node gene flooding console.log is bounded the same way', (t) => {
    const root = makeProject(t)
    addGene(root, 'chatty', { 'index.js': 'exports.express = () => { const line = "y".repeat(60000); for (let i = 0; i < 2000; i++) console.log(line); return { done: true } }' })
    const r = spawnSync(process.execPath, [BIN, 'run', 'chatty', '--input', '{}'], { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 })
    assert.equal(r.status, 0, r.stderr.slice(-500))
    assert.deepEqual(JSON.parse(r.stdout), { done: true })
    assert.ok(r.stderr.length < 1.2 * 1024 * 1024, `${r.stderr.length} bytes of stderr`)
    assert.match(r.stderr, /\[chatty\] note: \d+ write\(s\) to stdout\/stderr \(\d+ bytes\) dropped/)
  })

  test('a WASI command reads its input from stdin', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'wasi', WAT.wasiEcho())
    assert.deepEqual(json(rotifer(root, 'run', 'wasi', '--input', '{"via":"stdin"}')), { via: 'stdin' })
  })

  test('a module the sandbox cannot use fails the run with one line naming the gene and the fault', async (t) => {
    const root = makeProject(t)
    const cases = {
      'not-wasm': [null, /gene "not-wasm" .*gene\.wasm is not a valid WebAssembly module/],
      'no-memory': ['(module (func (export "express") (param i32 i32) (result i32) (i32.const 0)))', /gene "no-memory" .*does not export its memory as "memory"/],
      'no-express': ['(module (memory (export "memory") 1))', /gene "no-express" .*does not export a function "express\(ptr: i32, len: i32\) -> i32"/],
      'no-nul': ['(module (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) (memory.fill (i32.const 0) (i32.const 65) (i32.const 65536)) (i32.const 0)))', /gene "no-nul" .*failed: the output at 0 has no NUL byte before the end of memory/],
      'traps': ['(module (memory (export "memory") 1) (func (export "express") (param i32 i32) (result i32) unreachable))', /gene "traps" .*failed: it trapped: wasm trap: wasm `unreachable` instruction executed/],
    }
    for (const [name, [wat, expected]] of Object.entries(cases)) {
      if (wat) await addWasmGene(root, name, wat)
      else fs.writeFileSync(path.join(addGene(root, name, {}), 'gene.wasm'), 'not wasm at all')
      const r = rotifer(root, 'run', name, '--input', '{}')
      assert.equal(r.status, 1, name)
      assert.equal(r.stdout, '', name)
      assert.match(oneErrorLine(r), expected)
    }
  })

  test('an unknown import is named before the gene runs', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'odd', WAT.unknownImport())
    const r = rotifer(root, 'run', 'odd', '--input', '{}')
    assert.equal(r.status, 1)
    assert.match(oneErrorLine(r), /gene "odd" .*imports "env"\."clock" \(function\), which the sandbox does not provide; a WASM gene may import only the functions rotifer\.readMemory, .*env\.log/)
  })

  test('the compiled module is cached by content (0700 folder, 0600 file) and a bad entry is ignored', async (t) => {
    const root = makeProject(t)
    await addWasmGene(root, 'fixed', WAT.constant({ ok: 1 }))
    assert.deepEqual(json(rotifer(root, 'run', 'fixed', '--input', '{}')), { ok: 1 })
    const cache = path.join(root, '.rotifer', 'cache', 'wasm')
    assert.equal(fs.statSync(cache).mode & 0o777, 0o700)
    const [entry] = fs.readdirSync(cache)
    assert.match(entry, /^[0-9a-f]{64}-[0-9a-f]{16}\.cwasm$/)
    assert.equal(fs.statSync(path.join(cache, entry)).mode & 0o777, 0o600)
    // A damaged entry is not used: the module is compiled again and runs.
    const file = path.join(cache, entry)
    const bytes = fs.readFileSync(file)
    bytes[bytes.length - 1] ^= 0xff
    fs.writeFileSync(file, bytes)
    assert.deepEqual(json(rotifer(root, 'run', 'fixed', '--input', '{}')), { ok: 1 })
    // An entry planted under this module's name (a valid entry of another module, as a copied
    // project could bring) is not used: the output is this gene's.
    const other = makeProject(t)
    await addWasmGene(other, 'fixed', WAT.constant({ planted: true }))
    assert.deepEqual(json(rotifer(other, 'run', 'fixed', '--input', '{}')), { planted: true })
    const [planted] = fs.readdirSync(path.join(other, '.rotifer', 'cache', 'wasm')).filter((f) => f.endsWith('.cwasm'))
    fs.copyFileSync(path.join(other, '.rotifer', 'cache', 'wasm', planted), file)
    assert.deepEqual(json(rotifer(root, 'run', 'fixed', '--input', '{}')), { ok: 1 })
    // A changed module gets an entry of its own.
    await addWasmGene(root, 'fixed', WAT.constant({ ok: 2 }))
    assert.deepEqual(json(rotifer(root, 'run', 'fixed', '--input', '{}')), { ok: 2 })
    assert.equal(fs.readdirSync(cache).filter((f) => f.endsWith('.cwasm')).length, 2)
  })

  // A looping Node gene holds the main thread (the native watchdog ends the process); an awaiting
  // one leaves it free (the CLI's own handler does); a WASM gene is in the sandbox.
  for (const kind of ['wasm', 'node', 'awaiting node']) {
    test(`Ctrl-C stops a running ${kind} gene at once: one line, exit 130, no temporary folder`, async (t) => {
      const root = makeProject(t)
      if (kind === 'wasm') {
        // Logs "looping", then reads a key over and over: each read is a round trip into the
        // store, so its fuel lasts for many seconds, and only the interrupt stops it in time.
        await addWasmGene(root, 'hang', `(module
          (import "rotifer" "readMemory" (func $r (param i32 i32 i32 i32) (result i32)))
          (import "rotifer" "log" (func $log (param i32 i32 i32)))
          (memory (export "memory") 1)
          (data (i32.const 100) "{\\"key\\":\\"k\\"}")
          (data (i32.const 200) "looping")
          (func (export "express") (param i32 i32) (result i32)
            (call $log (i32.const 1) (i32.const 200) (i32.const 7))
            (loop $l (drop (call $r (i32.const 100) (i32.const 11) (i32.const 4096) (i32.const 4096))) (br $l))
            (i32.const 0)))`)
      } else if (kind === 'node') {
        addGene(root, 'hang', { 'index.js': 'exports.express = () => { console.log("[hang] info: looping"); for (;;) {} }' })
      } else {
        addGene(root, 'hang', { 'index.js': 'exports.express = async () => { console.log("[hang] info: looping"); await new Promise(() => {}) }' })
      }
      assert.equal(rotifer(root, 'agent', 'create', 'stuck', '--genes', 'hang', '--memory-quota=10MB').status, 0)
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-sigint-'))
      t.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
      const child = spawn(process.execPath, [BIN, 'agent', 'run', 'stuck', '--input', '{}', '--timeout', '120'], { cwd: root, env: { ...process.env, TMPDIR: tmp } })
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      const exited = new Promise((r) => child.on('exit', (c, s) => r([c, s])))
      // The gene's first line is the sign that it runs.
      await new Promise((resolve, reject) => {
        child.stderr.on('data', () => /\[hang\] info: looping\n/.test(stderr) && resolve())
        exited.then(() => reject(new Error(`exited before the gene ran: ${stderr}`)))
      })
      const sent = Date.now()
      child.kill('SIGINT')
      const [code, signal] = await exited
      assert.equal(signal, null)
      assert.equal(code, 130)
      assert.ok(Date.now() - sent < 3000, `took ${Date.now() - sent} ms`)
      const after = stderr.slice(stderr.indexOf('looping\n') + 'looping\n'.length)
      assert.equal(after.trim().split('\n').length, 1, stderr)
      assert.match(after, /interrupted/)
      assert.deepEqual(fs.readdirSync(tmp), [])
    })
  }
})
