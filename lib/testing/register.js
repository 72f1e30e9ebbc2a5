'use strict'
// @rotifer/playground/register — `node --import @rotifer/playground/register --test …` (or
// `--require`): the module hooks `rotifer` loads genes with, in this process, so that a test
// imports a gene as the CLI runs it: `.ts` files transpiled (Node 20 cannot strip types),
// `import`/`export` in a gene's `.js` without "type": "module", extensionless relative imports,
// and `@rotifer/playground/memory` resolving to this package. The TypeScript cache is that of
// the project of the working directory (`.rotifer/cache/ts/`).

const { install } = require('../cli/gene-loader')
const { findProjectRoot } = require('../formats/project-config')

install(findProjectRoot())
