'use strict'
// `rotifer binding setup`: a PostgreSQL database made ready for agents' memory (R-BIND-4), and a
// deployment's login role. The work is the memory API's (`setupMemoryBinding`); this file reads
// the password from stdin and prints what the deployment needs, never a password.

const fs = require('node:fs')
const memory = require('../../../index.js')
const { UsageError } = require('../errors')

/** The password on stdin: all of it but one final line break; empty is refused. */
function readPassword(command) {
  let text
  try {
    text = fs.readFileSync(0, 'utf8')
  } catch (e) {
    throw new UsageError(`--password-stdin: cannot read stdin (${e.code || e.message})`, command, { seeHelp: false })
  }
  const password = text.replace(/\r?\n$/, '')
  if (password === '') throw new UsageError('--password-stdin: stdin held no password', command, { seeHelp: false })
  if (/[\r\n]/.test(password)) throw new UsageError('--password-stdin: give the password on one line', command, { seeHelp: false })
  return password
}

const setup = {
  name: 'binding setup',
  summary: "prepare a PostgreSQL database for agents' memory, and a deployment's role",
  usage: 'rotifer binding setup <admin-url> [--role <name>] [--password-stdin] [--json]',
  description: [
    'Creates the memory schema in the database the administrator\'s URL names, or moves it',
    'forward to this release\'s version, in one transaction; running it again changes nothing.',
    'With --role, creates or updates that deployment\'s login role: it may read its own agents\'',
    'rows and change them only through the schema\'s functions, with statement, lock and',
    'idle-in-transaction timeouts, and owns the agents created through it. Prints the URL the',
    "deployment's hosts use (ROTIFER_MEMORY_URL, or agent create --memory-url) without any",
    'password: add the role\'s own.',
  ],
  positionals: ['admin-url'],
  options: {
    role: { type: 'string', value: '<name>', help: "the deployment's login role to create or update: 1 to 63 letters, digits, _, . or -" },
    'password-stdin': { type: 'boolean', help: "set the role's password to the line read from stdin (sent as a SCRAM verifier)" },
    json: { type: 'boolean', help: 'print { schema: { from, to }, role, url, passwordSet } as JSON' },
  },
  examples: [
    'rotifer binding setup postgresql://postgres@db.example/memory --role fleet',
    "printf '%s' \"$FLEET_PASSWORD\" | rotifer binding setup postgresql://postgres@db.example/memory --role fleet --password-stdin",
  ],
  needsProject: false,

  async run({ positionals, options, io }) {
    const role = options.role
    if (options['password-stdin'] && role === undefined) {
      throw new UsageError('--password-stdin sets the password of a role: give --role too', setup.name)
    }
    const password = options['password-stdin'] ? readPassword(setup.name) : undefined
    const done = memory.setupMemoryBinding({ adminUrl: positionals['admin-url'], role, password })
    if (options.json) {
      io.out(JSON.stringify({ schema: { from: done.fromVersion, to: done.toVersion }, role: role ?? null, url: done.roleUrl, passwordSet: done.passwordSet }, null, 2))
      return 0
    }
    io.out(done.fromVersion === 0
      ? `memory schema: created (version ${done.toVersion})`
      : done.fromVersion === done.toVersion
        ? `memory schema: version ${done.toVersion}, up to date (functions and grants renewed)`
        : `memory schema: moved from version ${done.fromVersion} to ${done.toVersion}`)
    if (role !== undefined) {
      io.out(`role ${role}: ready${done.passwordSet ? ', password set' : ' (no password set here: give one with --password-stdin, or set it with ALTER ROLE)'}`)
      io.out(`url: ${done.roleUrl}`)
      const withPassword = done.roleUrl.replace(`://${role}@`, `://${role}:<password>@`)
      io.out(`Next: on each host, ROTIFER_MEMORY_URL=${withPassword} (or rotifer agent create <name> … --memory-url <that url>)`)
    }
    return 0
  },
}

module.exports = { setup }
