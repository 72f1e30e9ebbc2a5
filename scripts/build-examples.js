'use strict'
// `npm run build:examples`: compiles every examples/**/gene.wat to the gene.wasm beside it, so
// the example WASM genes run (`npm run demo` does this first, and `npm pack`, so that the
// tarball's examples run). The .wasm files are not committed (.gitignore). Each is written
// under a temporary name and renamed, so a pack running at the same time never reads half a file.

const fs = require('node:fs')
const path = require('node:path')
const { compileWat } = require('./wat')

const EXAMPLES = path.join(__dirname, '..', 'examples')

function watFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : watFiles(p)
    return e.name === 'gene.wat' ? [p] : []
  })
}

async function main() {
  for (const wat of watFiles(EXAMPLES)) {
    const wasm = path.join(path.dirname(wat), 'gene.wasm')
    const temporary = `${wasm}.${process.pid}.tmp`
    fs.writeFileSync(temporary, await compileWat(fs.readFileSync(wat, 'utf8'), path.relative(process.cwd(), wat)))
    fs.renameSync(temporary, wasm)
    process.stdout.write(`compiled ${path.relative(process.cwd(), wat)} -> ${path.relative(process.cwd(), wasm)}\n`)
  }
}

main().catch((e) => {
  process.stderr.write(`build:examples failed: ${e.message}\n`)
  process.exit(1)
})
