'use strict'
// An agent skill's `SKILL.md`, as the upstream playground reads it for `rotifer scan --skills`
// and `rotifer wrap --from-skill`: Markdown opening with YAML front matter between `---` lines,
// of which `name` (required) and `description` are used. Only those two plain `key: value`
// lines are read (quotes around the value are dropped); the rest of the file is kept as written.

const path = require('node:path')
const { readTree } = require('../read-tree')

const SKILL_FILE = 'SKILL.md'
const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---/

/** The value of `key: value` in front matter `front`, unquoted and trimmed; '' when absent. */
function field(front, key) {
  const m = new RegExp(`^${key}:[ \\t]*(.*)$`, 'm').exec(front)
  if (!m) return ''
  const value = m[1].trim()
  const quoted = /^(["'])(.*)\1$/.exec(value)
  return (quoted ? quoted[2] : value).trim()
}

/** `{ name, description }` of a SKILL.md's text, or null when it has no front matter with a name. */
function parseSkill(text) {
  const m = FRONT_MATTER.exec(text)
  if (!m) return null
  const name = field(m[1], 'name')
  return name ? { name, description: field(m[1], 'description') } : null
}

/** The SKILL.md a `--from-skill` path names: the file itself, or the one in that folder. */
function skillFileOf(p) {
  return path.basename(p) === SKILL_FILE ? p : path.join(p, SKILL_FILE)
}

/**
 * Every SKILL.md under `dir` with a valid front matter, sorted by path: `[{ name, description,
 * file }]`. Hidden folders, node_modules and symbolic links are not followed; unreadable
 * folders and files are skipped.
 */
function findSkills(dir) {
  const found = []
  for (const { file, text } of readTree(dir, (name) => name === SKILL_FILE)) {
    const skill = parseSkill(text)
    if (skill) found.push({ ...skill, file })
  }
  return found
}

module.exports = { SKILL_FILE, parseSkill, skillFileOf, findSkills }
