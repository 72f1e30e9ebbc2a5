'use strict'
// One build for the addon and the Rust tests: `npm run test:rust` (scripts/test-rust.js) compiles
// against the dependencies `npm run build` compiled, which holds only while both resolve every
// crate of the addon with the same features; and the addon ships without its symbol tables.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const ADDON = path.join(ROOT, 'rotifer-memory.linux-x64-gnu.node')

/** Every `crate version|features` line of the dependency graph cargo tree gives for `selection`. */
function resolved(selection, edges) {
  const host = /^host: (\S+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
  const out = execFileSync('cargo', ['tree', ...selection, '-e', edges, '--target', host, '--prefix', 'none', '-f', '{p}|{f}'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  return new Set(out.split('\n').filter(Boolean).map((l) => l.replace(/ \(\*\)$/, '')))
}

test("the Rust tests resolve each of the addon's crates with the addon's features, so they reuse its build", () => {
  const addon = resolved(['-p', 'rotifer-memory'], 'normal,build')
  const tests = resolved(['--workspace'], 'normal,build,dev')
  assert.ok(addon.size > 50, `the addon's graph: ${addon.size} crates`)
  const missing = [...addon].filter((line) => !tests.has(line))
  assert.deepEqual(missing, [], 'crates the tests would build a second time, with other features')
})

test('npm run test:rust runs the tests in the release profile, for the target napi build uses, on the whole workspace', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  assert.equal(pkg.scripts['test:rust'], 'node scripts/test-rust.js')
  assert.match(pkg.scripts.build, /^napi build --platform --release /)
  const script = fs.readFileSync(path.join(ROOT, 'scripts', 'test-rust.js'), 'utf8')
  assert.match(script, /\['test', '--release', '--target', host, '--workspace'/)
})

/** The names of the sections of the ELF file `file`. */
function sections(file) {
  const b = fs.readFileSync(file)
  assert.equal(b.toString('latin1', 1, 4), 'ELF')
  const shoff = Number(b.readBigUInt64LE(0x28))
  const shentsize = b.readUInt16LE(0x3a)
  const shnum = b.readUInt16LE(0x3c)
  const names = shoff + b.readUInt16LE(0x3e) * shentsize
  const strtab = Number(b.readBigUInt64LE(names + 0x18))
  const out = []
  for (let i = 0; i < shnum; i++) {
    const at = strtab + b.readUInt32LE(shoff + i * shentsize)
    out.push(b.toString('latin1', at, b.indexOf(0, at)))
  }
  return out
}

test('the addon ships without symbol tables, and keeps the unwind tables panics-as-errors need (R-ERR-3)', { skip: !fs.existsSync(ADDON) && 'no addon built' }, () => {
  const names = sections(ADDON)
  assert.ok(names.includes('.text') && names.includes('.dynsym'), names.join(' '))
  assert.ok(!names.includes('.symtab') && !names.includes('.strtab'), `symbol tables: ${names.join(' ')}`)
  assert.ok(names.some((n) => n.startsWith('.debug')) === false, 'no debug info')
  assert.ok(names.includes('.eh_frame') && names.includes('.gcc_except_table'), 'unwind tables')
})
