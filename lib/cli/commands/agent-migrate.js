'use strict'
// `rotifer agent migrate`: an agent's memory moved to another binding (R-MIG-4). The move, its
// order and its crash safety are the memory API's (migrateAgentMemory); this command asks,
// shows progress and reports.

const memory = require('../../../index.js')
const { findAgent, bindingOf } = require('../agents')
const { plural } = require('../format')
const { confirm, progress } = require('../interactive')

const ON_CONFLICT = ['fail', 'skip', 'replace']

const STEPS = {
  held: 'Writers of the source wait; importing into the target…',
  imported: 'Reading the target back and comparing…',
  verified: 'Writing the new agent record…',
  intent: 'Marking the source as moved…',
  fenced: 'Naming the target in the agent record…',
  named: 'Finishing…',
}

const migrate = {
  name: 'agent migrate',
  needsProject: true,
  summary: "move an agent's memory to another binding (SQLite file or PostgreSQL)",
  usage: 'rotifer agent migrate <agent> --to <postgres-url|sqlite> [--include-cache] [--on-conflict fail|skip|replace] [--yes] [--json]',
  description: [
    "Moves the agent's PREFERENCE, PATTERN and CONTEXT entries (and CACHE with --include-cache)",
    'from where its memory is now to --to: a postgres:// URL (a database set up with rotifer',
    'binding setup) or sqlite (its file .rotifer/memory/<id>.db). The source\'s writers wait while',
    'its entries are taken and imported into the target in one transaction; the target is read',
    "back and compared (entriesSha256); then the agent record names the target, in one step. The",
    'source is kept, marked as moved: a process still using it gets MEMORY_STORAGE_ERROR naming',
    'the new binding. Both sides get a memory.migrate audit line (actor "deployer"). A crash or',
    'Ctrl-C at any step leaves exactly one binding in use, with every acknowledged write: run the',
    'command again to move what did not. Creators, policies and times are kept; lastAccessedBy',
    'becomes the creator. A copy an earlier move left on the target is replaced; a target that',
    'holds the agent in use follows --on-conflict. At a terminal it asks first (--yes does not',
    'ask); without one it needs --yes (exit 2 without it).',
  ],
  positionals: ['agent'],
  options: {
    to: { type: 'string', value: '<url|sqlite>', required: true, help: 'where the memory goes: a postgres:// or postgresql:// URL, or sqlite for the file' },
    'include-cache': { type: 'boolean', help: 'move CACHE entries too (by default they stay behind and are recomputed)' },
    'on-conflict': { type: 'string', value: '<mode>', choices: ON_CONFLICT, help: 'a key the target holds already: fail (default), skip (keep the target\'s) or replace (take the source\'s)' },
    yes: { type: 'boolean', help: 'move without asking (at a terminal it asks first; without one, --yes is required)' },
    json: { type: 'boolean', help: 'print what was moved as JSON' },
  },
  examples: [
    'rotifer agent migrate my-agent --to "postgresql://rotifer_app@db.internal/rotifer" --yes',
    'rotifer agent migrate my-agent --to sqlite --yes',
  ],

  async run({ positionals, options, root, io }) {
    const agent = findAgent(root, positionals.agent)
    const from = bindingOf(root, agent)
    const to = memory.agentMemoryBinding({ agentId: agent.id, root, url: options.to })
    await confirm({
      command: 'agent migrate',
      yes: options.yes,
      question: `Move the memory of agent "${agent.name}" from ${from} to ${to}?`,
      nothing: `the memory of agent "${agent.name}" stays on ${from} (--yes moves without asking)`,
    })
    const bar = progress({ json: options.json })
    bar.step(`Moving the memory of agent "${agent.name}" to ${to}: waiting for its writers…`)
    let r
    try {
      r = memory.migrateAgentMemory({
        agentId: agent.id,
        root,
        to: options.to,
        includeCache: options['include-cache'] === true,
        onConflict: options['on-conflict'] === undefined ? 'fail' : options['on-conflict'],
        onStep: (step) => { if (STEPS[step]) bar.step(STEPS[step]) },
      })
    } finally {
      bar.done()
    }
    if (options.json) {
      io.out(JSON.stringify(r, null, 2))
      return 0
    }
    const n = Object.values(r.counts).reduce((a, b) => a + b, 0)
    const counts = Object.entries(r.counts).map(([c, k]) => `${c} ${k}`).join(', ')
    io.out(`Moved the memory of agent "${agent.name}" from ${r.from} to ${r.to}`)
    io.out(`  entries        ${plural(n, 'entry', 'entries')} (${counts})`)
    io.out(`  entriesSha256  ${r.entriesSha256}`)
    if (r.skipped) io.out(`  skipped        ${plural(r.skipped, 'key')} the target had already (kept)`)
    if (r.replaced) io.out(`  replaced       ${plural(r.replaced, 'entry', 'entries')} an earlier move had left on the target`)
    if (r.cacheLeft) io.out(`  left behind    ${plural(r.cacheLeft, 'CACHE entry', 'CACHE entries')} (recomputed by genes; --include-cache moves them)`)
    io.out(`  source         kept, marked as moved${r.from === 'sqlite' ? ` (.rotifer/memory/${agent.id}.db)` : ''}`)
    return 0
  },
}

module.exports = { migrate }
