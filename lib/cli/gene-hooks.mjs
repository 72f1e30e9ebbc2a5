// Module hooks for genes loaded as ES modules (registered by gene-loader.js with
// `module.register`; Node runs them on a thread of their own).
//
// - `@rotifer/playground/memory` resolves to the package running the gene, so the MemoryError a
//   gene imports is the class `ctx.memory` throws, even where the project does not install it.
// - `.ts` and `.mts` files outside node_modules are transpiled to ES modules (cached).
// - A `.js` file outside node_modules that Node would read as CommonJS but that uses
//   `import`/`export` is read as an ES module: genes need no "type": "module".
// - A relative import from such a file may leave out the extension (`./util`), or name the
//   `.js` of a `.ts` file (`./util.js`), as TypeScript code is written.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import fs from 'node:fs'

const require = createRequire(import.meta.url)
const { transpile, parsesAsCommonJs } = require('./transpile.js')

const MEMORY_REQUEST = '@rotifer/playground/memory'
let memoryUrl = null
let cacheDir = null

export function initialize(data) {
  memoryUrl = data.memoryUrl
  cacheDir = data.cacheDir
}

/** A file of the project (a gene or its own helpers), not a dependency. */
function isOwnFile(url) {
  return typeof url === 'string' && url.startsWith('file:') && !url.includes('/node_modules/')
}

function alternatives(specifier) {
  const out = []
  if (specifier.endsWith('.js')) out.push(specifier.slice(0, -3) + '.ts')
  if (!/\.[cm]?[jt]s$/.test(specifier)) {
    out.push(`${specifier}.ts`, `${specifier}.js`, `${specifier}/index.ts`, `${specifier}/index.js`)
  }
  return out
}

export async function resolve(specifier, context, next) {
  if (specifier === MEMORY_REQUEST) return { url: memoryUrl, format: 'module', shortCircuit: true }
  try {
    return await next(specifier, context)
  } catch (e) {
    const relative = specifier.startsWith('./') || specifier.startsWith('../')
    const missing = e && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'ERR_UNSUPPORTED_DIR_IMPORT')
    if (!missing || !relative || !isOwnFile(context.parentURL)) throw e
    for (const candidate of alternatives(specifier)) {
      try {
        return await next(candidate, context)
      } catch {
        // try the next form
      }
    }
    throw e
  }
}

export async function load(url, context, next) {
  if (!isOwnFile(url)) return next(url, context)
  const file = fileURLToPath(url)
  if (file.endsWith('.ts') || file.endsWith('.mts')) {
    const source = transpile(fs.readFileSync(file, 'utf8'), file, 'esm', cacheDir)
    return { format: 'module', source, shortCircuit: true }
  }
  const loaded = await next(url, context)
  if (loaded.format === 'commonjs' && file.endsWith('.js')) {
    const source = fs.readFileSync(file, 'utf8')
    if (!parsesAsCommonJs(source, file)) return { format: 'module', source, shortCircuit: true }
  }
  return loaded
}
