'use strict'
// `npm run test:rust`: the Rust tests of the store and the sandbox in the release profile, for
// the host's target, which is exactly how `npm run build` (napi build --platform --release)
// compiles the addon: the tests reuse the dependencies (wasmtime, cranelift, SQLite) that build
// compiled instead of compiling them a second time in the test profile. The whole workspace is
// selected (the addon's crate has no Rust tests) so that cargo resolves the addon's features too
// (__test__/build.test.js checks they agree). Arguments after `--` go to cargo test
// (`npm run test:rust -- --test calls`).

const { execFileSync, spawnSync } = require('node:child_process')

const host = /^host: (\S+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
const args = ['test', '--release', '--target', host, '--workspace', ...process.argv.slice(2)]
const r = spawnSync('cargo', args, { stdio: 'inherit' })
if (r.error) {
  console.error(`error: cannot run cargo (${r.error.code || r.error.message}); install Rust from https://rustup.rs`)
  process.exit(1)
}
process.exit(r.status === null ? 1 : r.status)
