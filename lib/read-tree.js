'use strict'
// The readable files of a folder tree, for the commands that search one (`scan`, `scan
// --skills`): in path order; hidden folders, node_modules and symbolic links not followed;
// unreadable folders and files skipped.

const fs = require('node:fs')
const path = require('node:path')

/** `[{ file, text }]` of the files under `dir` whose name `wanted(name)` accepts. */
function readTree(dir, wanted) {
  const out = []
  const walk = (d) => {
    let entries
    try {
      entries = fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = path.join(d, e.name)
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') walk(full)
      else if (e.isFile() && wanted(e.name)) {
        try {
          out.push({ file: full, text: fs.readFileSync(full, 'utf8') })
        } catch {
          // unreadable: skipped
        }
      }
    }
  }
  walk(dir)
  return out
}

module.exports = { readTree }
