'use strict'
// `rotifer wrap <gene> [-d|--domain <d>] [--fidelity <f>] [--from-skill <path>]`: writes the
// phenotype of a source gene, as upstream's wrap does (R-RUN-10): a new one (fidelity Wrapped
// unless told) when the gene folder has none, else the existing one with the domain (and
// fidelity) given. A new phenotype's inputSchema and outputSchema come from the TypeScript types
// of the gene's `express` when it has them; `--from-skill` makes a gene of an agent skill's
// SKILL.md. Prints the Gene ID (v2). Everything is checked before anything is written.

const fs = require('node:fs')
const path = require('node:path')
const { CliError, UsageError } = require('../errors')
const { checkGeneName, genesDirOf, geneFolders, geneFiles, geneV2Id, SOURCE_FILES } = require('../project')
const { readProjectConfig } = require('../../formats/project-config')
const { DOMAIN, FIDELITIES, newPhenotype, checkPhenotype, writeJsonAtomically } = require('../../formats/phenotype')
const { SKILL_FILE, parseSkill, skillFileOf } = require('../../formats/skill')
const { expressSchemas } = require('../express-schema')
const { didYouMean } = require('../suggest')
const { field, terminalWidth } = require('../format')

const SCHEMA_EXAMPLE = '"inputSchema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}'

/** `text` broken between words to fit a terminal on stderr (continuation lines indented); piped, one line. */
function forStderr(text) {
  const width = process.stderr.isTTY ? terminalWidth(process.stderr, 80) : Infinity
  const lines = ['']
  for (const word of text.split(' ')) {
    const last = lines[lines.length - 1]
    if (last === '' || last === '  ' || last.length + 1 + word.length <= width) lines[lines.length - 1] = last === '' || last === '  ' ? last + word : `${last} ${word}`
    else lines.push(`  ${word}`)
  }
  return lines.join('\n')
}

/** True for the open input schema wrap writes when it knows nothing: no properties listed. */
function isOpenSchema(schema) {
  return schema !== null && typeof schema === 'object' && !Array.isArray(schema) && schema.type === 'object' &&
    (schema.properties === undefined || (typeof schema.properties === 'object' && schema.properties !== null && Object.keys(schema.properties).length === 0))
}

/**
 * Fills `phenotype`'s open schemas from the types of the gene's express, in place. Returns a
 * line for stdout when it did, else a note for stderr saying what the author should write.
 */
function deriveSchemas(phenotype, source, rel) {
  const shown = path.join(rel, path.basename(source))
  let derived
  try {
    derived = expressSchemas(source)
  } catch (e) {
    derived = { input: null, output: null, reason: `its types could not be read (${e.message})` }
  }
  const changed = []
  if (derived.input && isOpenSchema(phenotype.inputSchema)) {
    phenotype.inputSchema = derived.input
    changed.push('inputSchema')
  }
  if (derived.output && isOpenSchema(phenotype.outputSchema)) {
    phenotype.outputSchema = derived.output
    changed.push('outputSchema')
  }
  if (!derived.input && isOpenSchema(phenotype.inputSchema)) {
    return {
      note: `note: the inputSchema lists no properties, since none could be derived from ${shown} (${derived.reason}): write the fields express reads into ${path.join(rel, 'phenotype.json')}, like ${SCHEMA_EXAMPLE}, or give express's input a TypeScript type and run rotifer wrap again; rotifer test makes its sample input from them`,
      derived: changed,
    }
  }
  return { note: null, derived: changed, from: shown }
}

/** `--from-skill`: the skill's SKILL.md read and checked; `{ file, skill }`. */
function readSkill(given, root) {
  const file = skillFileOf(path.resolve(root, given))
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') throw new CliError(`${SKILL_FILE} not found: ${file} (E0002); give the path of a ${SKILL_FILE}, or of the folder holding one (relative to the project root)`)
    throw new CliError(`cannot read ${file} (${e.code || e.message})`)
  }
  const skill = parseSkill(text)
  if (!skill) throw new CliError(`Invalid ${SKILL_FILE}: ${file} has no YAML front matter with a name (E0003); start the file with a line ---, then name: <id> (and description: <text>), then ---`)
  return { file, skill }
}

/** The phenotype upstream's wrap writes for a skill (a prompt in, a result out). */
function skillPhenotype(skill, { domain, fidelity, author }) {
  const p = newPhenotype({ domain, fidelity, author })
  return {
    domain: p.domain,
    description: skill.description || `${skill.name} skill wrapped as gene`,
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: [] },
    outputSchema: { type: 'object', properties: { result: { type: 'string' } } },
    dependencies: [],
    version: p.version,
    ...(author === undefined ? {} : { author }),
    createdAt: p.createdAt,
    fidelity: p.fidelity,
    transparency: 'Open',
    source: 'skill',
    ...(p.network ? { network: p.network } : {}),
  }
}

function printWrapped(io, id, phenotype, fidelity) {
  const width = terminalWidth(process.stdout, Infinity)
  io.out(field('Gene ID (v2)', id, width))
  io.out(field('Domain', phenotype.domain, width))
  io.out(field('Fidelity', fidelity, width))
}

function wrapSkill({ name, options, root, config, io }) {
  const dir = path.join(genesDirOf(root), name)
  const rel = path.relative(root, dir)
  const { file, skill } = readSkill(options['from-skill'], root)
  const where = path.join(rel, 'phenotype.json')
  if (fs.existsSync(path.join(dir, 'phenotype.json'))) {
    throw new CliError(`${where} exists already; rotifer wrap --from-skill makes a new gene and never writes over one: choose another gene name, or run rotifer wrap ${name} to update it`)
  }
  const fidelity = options.fidelity || 'Wrapped'
  const phenotype = skillPhenotype(skill, { domain: options.domain || config.default_domain || 'general', fidelity, author: config.author })
  checkPhenotype(phenotype, where)
  const id = geneV2Id(phenotype)
  const made = !fs.existsSync(dir)
  try {
    fs.mkdirSync(dir, { recursive: true })
    fs.copyFileSync(file, path.join(dir, SKILL_FILE), fs.constants.COPYFILE_EXCL)
    writeJsonAtomically(path.join(dir, 'phenotype.json'), phenotype)
    writeJsonAtomically(path.join(dir, '.gene-manifest.json'), { geneId: id.slice(3), name, domain: phenotype.domain, fidelity, wrappedAt: new Date().toISOString(), fromSkill: path.relative(root, file) })
  } catch (e) {
    if (made) fs.rmSync(dir, { recursive: true, force: true })
    if (e instanceof CliError) throw e
    throw new CliError(`cannot write the gene ${rel} (${e.code || e.message})${e.code === 'EEXIST' ? `: ${path.join(rel, SKILL_FILE)} exists already` : ''}`)
  }
  io.out(`Skill "${skill.name}" wrapped as gene "${name}": ${where}`)
  printWrapped(io, id, phenotype, fidelity)
  io.err(`note: next, rotifer compile ${name} validates it (a skill has no express to run: it compiles to a Wrapped result)`)
  return 0
}

const wrap = {
  name: 'wrap',
  needsProject: true,
  summary: "write a gene's phenotype.json (fidelity Wrapped) and print its Gene ID (v2)",
  usage: 'rotifer wrap <gene> [-d|--domain <domain>] [--fidelity Wrapped|Hybrid|Native] [--from-skill <path>]',
  description: [
    "Writes <genes_dir>/<gene>/phenotype.json for the gene's folder, as the upstream playground's",
    'wrap does: when there is none, a new phenotype (domain, the input and output schemas, version',
    "0.1.0, the project's author, fidelity Wrapped unless --fidelity says otherwise, transparency",
    "Open); the schemas are derived from the TypeScript types of the gene's express (or JSDoc",
    'types), else the input schema is left open and a note says what to write. When there is a',
    'phenotype, the same with the domain (and fidelity) given (an open schema is filled in from',
    'the types). The domain is --domain, else the phenotype\'s own, else rotifer.json\'s',
    'default_domain, else general. --from-skill <path> makes a new gene of a SKILL.md (the file,',
    'or a folder holding one; relative to the project root): its phenotype (source "skill") and',
    'a copy of the SKILL.md. Also writes .gene-manifest.json. Prints the Gene ID (v2). Nothing is',
    'written when anything is invalid.',
  ],
  positionals: ['gene'],
  options: {
    domain: { type: 'string', short: 'd', value: '<domain>', help: 'the gene\'s domain: lower-case words joined by dots, like "code.format"' },
    fidelity: { type: 'string', value: '<Wrapped|Hybrid|Native>', help: 'the fidelity of a new phenotype (default Wrapped), or the new fidelity of an existing one' },
    'from-skill': { type: 'string', value: '<path>', help: 'make the gene from a SKILL.md (the file or its folder)' },
  },
  examples: ['rotifer wrap hello-world --domain general', 'rotifer wrap fetcher -d web.fetch --fidelity Hybrid', 'rotifer wrap reviewer --from-skill .cursor/skills/reviewer --domain code.review'],

  async run({ positionals, options, root, io }) {
    const name = positionals.gene
    if (options.domain !== undefined && !DOMAIN.test(options.domain)) {
      throw new UsageError(`invalid --domain ${JSON.stringify(options.domain)}: use lower-case letters, digits and dots, like "nlp" or "code.analysis"`, 'wrap', { seeHelp: false })
    }
    if (options.fidelity !== undefined && !FIDELITIES.includes(options.fidelity)) {
      throw new UsageError(`invalid --fidelity ${JSON.stringify(options.fidelity)}: give ${FIDELITIES.join(', ')}`, 'wrap', { seeHelp: false })
    }
    checkGeneName(name)
    const { config } = readProjectConfig(root)
    if (options['from-skill'] !== undefined) return wrapSkill({ name, options, root, config, io })
    const dir = path.join(genesDirOf(root), name)
    const rel = path.relative(root, dir)
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
      throw new CliError(`gene folder ${rel} not found (E0001)${didYouMean(name, geneFolders(root))}; create it with the gene's code first: mkdir -p ${rel}`)
    }
    const file = path.join(dir, 'phenotype.json')
    const where = path.join(rel, 'phenotype.json')
    let phenotype
    if (fs.existsSync(file)) {
      try {
        phenotype = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch (e) {
        throw new CliError(`${where} is not valid JSON: ${e.message}; fix it, or delete it to have rotifer wrap write a new one`)
      }
      if (phenotype === null || typeof phenotype !== 'object' || Array.isArray(phenotype)) throw new CliError(`${where} must hold a JSON object; fix it, or delete it to have rotifer wrap write a new one`)
      if (options.domain !== undefined || !('domain' in phenotype)) phenotype.domain = options.domain || config.default_domain || 'general'
      if (options.fidelity !== undefined) phenotype.fidelity = options.fidelity
    } else {
      phenotype = newPhenotype({ domain: options.domain || config.default_domain || 'general', fidelity: options.fidelity, author: config.author })
    }
    const { source } = geneFiles(dir)
    const schemas = source ? deriveSchemas(phenotype, source, rel) : null
    checkPhenotype(phenotype, where)
    const id = geneV2Id(phenotype)
    writeJsonAtomically(file, phenotype)
    const fidelity = phenotype.fidelity || options.fidelity || 'Wrapped'
    writeJsonAtomically(path.join(dir, '.gene-manifest.json'), { geneId: id.slice(3), name, domain: phenotype.domain, fidelity, wrappedAt: new Date().toISOString() })

    if (!source) io.err(`note: ${rel} has no ${SOURCE_FILES.join(', ')} yet: write the gene's express(input) there before running it`)
    if (schemas && schemas.note) io.err(forStderr(schemas.note))
    io.out(`Gene "${name}" wrapped: ${where}`)
    printWrapped(io, id, phenotype, fidelity)
    if (schemas && schemas.derived.length > 0) io.out(field('Schemas', `${schemas.derived.join(' and ')} from the types of ${schemas.from}`, terminalWidth(process.stdout, Infinity)))
    return 0
  },
}

module.exports = { wrap }
