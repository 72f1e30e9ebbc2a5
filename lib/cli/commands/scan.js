'use strict'
// `rotifer scan [path] [--skills [--skills-path <dir>]] [--json]`: upstream's scan. Lists the
// candidate genes of a folder of code (exported functions: `export [async] function name` in
// .ts/.js, `pub [async] fn name` in .rs), or with --skills the agent skills (SKILL.md files with
// a name in their front matter) that `rotifer wrap --from-skill` turns into genes. Paths are
// relative to the project root, as upstream's are. Reads only.

const fs = require('node:fs')
const path = require('node:path')
const { CliError } = require('../errors')
const { findSkills, SKILL_FILE } = require('../../formats/skill')
const { readTree } = require('../../read-tree')

const EXTENSIONS = { '.ts': 'TS', '.js': 'JS', '.rs': 'RS' }
const TS_FUNCTION = /^export\s+(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/
const RS_FUNCTION = /^pub\s+(?:async\s+)?fn\s+([A-Za-z_]\w*)/

/**
 * `{ found: [{ name, file, line, language }], files }` under `dir`, sorted by file then line;
 * `files` counts the source files read.
 */
function findCandidates(dir) {
  const out = []
  const sources = readTree(dir, (name) => EXTENSIONS[path.extname(name)] && !name.endsWith('.d.ts'))
  for (const { file, text } of sources) {
    const language = EXTENSIONS[path.extname(file)]
    text.split('\n').forEach((raw, i) => {
      const m = (language === 'RS' ? RS_FUNCTION : TS_FUNCTION).exec(raw.trim())
      if (m) out.push({ name: m[1], file, line: i + 1, language })
    })
  }
  return { found: out, files: sources.length }
}

function folder(root, given) {
  const dir = path.resolve(root, given)
  let ok = false
  try {
    ok = fs.statSync(dir).isDirectory()
  } catch {
    // not there
  }
  if (!ok) throw new CliError(`cannot scan ${given}: there is no folder ${dir} (paths are relative to the project root, ${root})`)
  return dir
}

const scan = {
  name: 'scan',
  needsProject: true,
  summary: 'list candidate genes in code (exported functions), or agent skills with --skills',
  usage: 'rotifer scan [path] [--skills] [--skills-path <dir>] [--json]',
  description: [
    'Lists the exported functions of the .ts, .js and .rs files under <path> (default the project',
    'root; hidden folders and node_modules are skipped): candidates for a gene, to put in a gene',
    'folder and wrap with rotifer wrap <gene> --domain <domain>. With --skills it lists the SKILL.md',
    'files with a name in their front matter instead (under --skills-path, else <path>), which',
    'rotifer wrap <gene> --from-skill <path> turns into genes. Paths are relative to the project',
    'root. --json prints the list as JSON.',
  ],
  positionals: ['path'],
  optionalPositionals: ['path'],
  options: {
    skills: { type: 'boolean', help: `list ${SKILL_FILE} files instead of source functions` },
    'skills-path': { type: 'string', value: '<dir>', help: `with --skills, the folder to look in (default [path])` },
    json: { type: 'boolean', help: 'print the list as JSON' },
  },
  examples: ['rotifer scan src', 'rotifer scan --skills --skills-path .cursor/skills'],

  async run({ positionals, options, root, io }) {
    const given = options.skills && options['skills-path'] !== undefined ? options['skills-path'] : positionals.path === undefined ? '.' : positionals.path
    const dir = folder(root, given)
    const rel = (f) => path.relative(root, f) || '.'
    if (options.skills) {
      const skills = findSkills(dir)
      if (options.json) {
        io.out(JSON.stringify(skills.map((s) => ({ ...s, file: rel(s.file) })), null, 2))
        return 0
      }
      if (skills.length === 0) {
        io.out(`No ${SKILL_FILE} files found in ${rel(dir)} (a ${SKILL_FILE} opens with --- front matter holding a name:)`)
        return 0
      }
      io.out(`Found ${skills.length} skill${skills.length === 1 ? '' : 's'} in ${rel(dir)}:`)
      const width = Math.max(...skills.map((s) => s.name.length))
      for (const s of skills) io.out(`  ${s.name.padEnd(width)}  ${rel(s.file)}${s.description ? `\n  ${' '.repeat(width)}  ${s.description}` : ''}`)
      io.out(`Wrap one: rotifer wrap <gene> --from-skill <path> --domain <domain>, then rotifer compile <gene>`)
      return 0
    }
    const { found, files } = findCandidates(dir)
    if (options.json) {
      io.out(JSON.stringify(found.map((c) => ({ ...c, file: rel(c.file) })), null, 2))
      return 0
    }
    if (found.length === 0) {
      io.out(`No candidate functions found in ${rel(dir)}: ${files} .ts, .js or .rs file${files === 1 ? '' : 's'} read (candidates are exported functions: export function in .ts/.js, pub fn in .rs)`)
      return 0
    }
    io.out(`Found ${found.length} candidate function${found.length === 1 ? '' : 's'} in ${rel(dir)}:`)
    const width = Math.max(...found.map((c) => c.name.length))
    for (const c of found) io.out(`  ${c.language}  ${c.name.padEnd(width)}  ${rel(c.file)}:${c.line}`)
    io.out("Make one a gene: put it in <genes_dir>/<gene>/index.ts as express(input), then rotifer wrap <gene> --domain <domain>")
    return 0
  },
}

module.exports = { scan }
