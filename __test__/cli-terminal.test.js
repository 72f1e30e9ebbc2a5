'use strict'
// The CLI at a terminal and piped: lines that fit the terminal's width, usage bars, progress
// lines on stderr, questions before destructive commands, and the exit codes and words of
// command-line mistakes. TTY behaviour runs the real bin on a pseudo-terminal (cli-tty.js).

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { rotifer, rotiferWithEnv, json, makeProject, addGene, PROBE, steps, createAgent, oneErrorLine } = require('./cli-harness')
const { rotiferTty, plain } = require('./cli-tty')
const { tree } = require('../lib/cli/main')
const { displayWidth } = require('../lib/cli/format')

/** Every command's words: `['agent', 'memory', 'list']`, … (groups too). */
function commandWords(node = tree, words = []) {
  const out = [words]
  for (const [name, child] of Object.entries(node.commands || {})) out.push(...commandWords(child, [...words, name]))
  return out
}

/** The leaf commands with their `usage` forms, one line each. */
function usages(node = tree) {
  const out = []
  for (const child of Object.values(node.commands || {})) {
    if (child.commands) out.push(...usages(child))
    else out.push(...child.usage.split('\n').map((l) => l.trim()))
  }
  return out
}

const widest = (text) => Math.max(...plain(text).split('\n').map((l) => displayWidth(l)))

/** A project with agent "keeper": 6 CACHE and 2 CONTEXT entries of 40 KB, a 1 MB quota. */
function seeded(t) {
  const root = makeProject(t)
  addGene(root, 'probe', { 'index.js': PROBE })
  const agent = createAgent(root, 'keeper', ['probe'], '--memory-quota=1MB', '--max-retention-days=1')
  const writes = []
  for (let i = 0; i < 8; i++) writes.push({ write: `session/${i}`, size: 40000, category: i < 6 ? 'CACHE' : 'CONTEXT' })
  writes.push({ write: 'pref/indent', value: '4', category: 'PREFERENCE' })
  json(rotifer(root, 'agent', 'run', 'keeper', '--input', steps(writes)))
  return { root, agent }
}

describe('help fits the width', () => {
  test('every --help fits 80 columns piped, and the terminal at 80 and 100 columns', (t) => {
    const root = makeProject(t)
    for (const words of commandWords()) {
      const piped = rotifer(root, ...words, '--help')
      assert.equal(piped.status, 0, words.join(' '))
      assert.ok(widest(piped.stdout) <= 80, `${words.join(' ')} --help piped is ${widest(piped.stdout)} columns:\n${piped.stdout}`)
      // Lines break between words: no line ends inside a word that the next line goes on with.
      assert.doesNotMatch(piped.stdout, /[a-z]-\n\s*[a-z]/, words.join(' '))
    }
    for (const columns of [80, 100]) {
      for (const words of [['agent', 'create'], ['agent', 'memory', 'log'], ['agent', 'update'], ['test'], []]) {
        const r = rotiferTty(root, [...words, '--help'], { columns })
        assert.equal(r.status, 0)
        assert.ok(widest(r.tty) <= columns, `${words.join(' ')} --help at ${columns}: ${widest(r.tty)} columns`)
      }
    }
    // A wider terminal gets wider help (up to 100 columns), a narrower one narrower.
    assert.ok(widest(rotiferTty(root, ['agent', 'create', '--help'], { columns: 120 }).tty) > 80)
    assert.ok(widest(rotiferTty(root, ['agent', 'create', '--help'], { columns: 120 }).tty) <= 100)
    assert.ok(widest(rotiferWithEnv(root, { COLUMNS: '72' }, 'agent', 'create', '--help').stdout) <= 72)
  })

  test('option descriptions wrap under themselves; long examples break with a backslash', (t) => {
    const root = makeProject(t)
    const help = rotifer(root, 'agent', 'create', '--help').stdout
    // The description column starts where the longest option ends, on every continuation line.
    const column = /\n {2}--composition <kind\|file\.json> {2}/.exec(help)[0].length - 1
    assert.match(help, new RegExp(`\\n {2}-g, --genes <gene…> +genes of the genes folder, in this order\\n {${column}}\\S`))
    const run = rotiferWithEnv(root, { COLUMNS: '60' }, 'agent', 'run', '--help').stdout
    const example = run.slice(run.indexOf('Examples:'))
    assert.match(example, / \\\n {6}\S/, 'a continued example line')
    // Pasted back together it is the example as written.
    assert.ok(example.replace(/ \\\n {6}/g, ' ').includes(`rotifer agent run my-agent --input '{"code":"a {\\n  b\\n}","indent":4}'`))
  })
})

describe('the CLI reference matches --help', () => {
  const block = (file, start) => {
    const text = fs.readFileSync(path.join(__dirname, '..', file), 'utf8')
    const at = text.indexOf(start)
    assert.ok(at >= 0, `${file} has the heading ${start}`)
    const open = text.indexOf('```sh\n', at) + '```sh\n'.length
    return text.slice(open, text.indexOf('```', open)).split('\n').filter((l) => l.trim() !== '')
  }

  test('docs/cli.md: one line per usage form of --help, and nothing else', () => {
    const file = 'docs/cli.md'
    const lines = block(file, '# The `rotifer` CLI')
    // A line is a usage form, then optionally spaces and a `#` comment.
    const forms = lines.map((l) => l.replace(/\s+#.*$/, ''))
    const expected = usages()
    for (const u of expected) assert.ok(forms.includes(u), `${file} lacks the usage\n  ${u}`)
    for (const f of forms) assert.ok(expected.includes(f), `${file} has a usage --help does not show:\n  ${f}`)
  })

  test("the README's command table names only commands --help has, and every group's leaves it names", () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8')
    const start = readme.indexOf('\n## Commands\n')
    assert.ok(start >= 0, 'the README has a "Commands" section')
    const rows = readme.slice(start, readme.indexOf('\n## ', start + 1)).split('\n').filter((l) => /^\| `rotifer /.test(l))
    assert.ok(rows.length >= 10, rows.join('\n'))
    const known = commandWords().filter((w) => w.length > 0).map((w) => w.join(' '))
    const named = []
    for (const row of rows) {
      // "`rotifer agent list`, `show`, `update`": the first names the group, the others are its siblings.
      const cells = [...row.split('|')[1].matchAll(/`([^`]+)`/g)].map((m) => m[1])
      const first = cells[0].replace(/^rotifer /, '').split(' ').filter((w) => /^[a-z]+$/.test(w))
      named.push(first.join(' '))
      for (const sibling of cells.slice(1)) named.push([...first.slice(0, -1), sibling].join(' '))
    }
    for (const words of named) assert.ok(known.includes(words), `the README names "rotifer ${words}", which --help does not have`)
  })
})

describe('agent list and agent show', () => {
  test('piped: human sizes, the share of the quota as a percentage, full ids, no bars or escapes', (t) => {
    const { root, agent } = seeded(t)
    const usage = json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory
    const list = rotifer(root, 'agent', 'list')
    assert.equal(list.status, 0, list.stderr)
    assert.doesNotMatch(list.stdout, /\x1b|█|░/)
    const pct = `${((usage.used / (1024 * 1024)) * 100).toFixed(1)}%`
    assert.match(list.stdout, new RegExp(`\\nkeeper +${agent.id} +probe +Single\\(probe\\) +9 +3\\d\\d KB / 1 MB +${pct.replace('.', '\\.')}\\n`))
    const show = rotifer(root, 'agent', 'show', 'keeper').stdout
    assert.doesNotMatch(show, /\x1b|█|░/)
    assert.match(show, /\n {2}data policy {3}anonymization not supported, entries kept at most 1 day\n/)
    assert.match(show, new RegExp(`\\n {2}memory {8}3\\d\\d KB used \\(${pct.replace('.', '\\.')}\\), 9 entries, 3\\d\\d KB evictable\\n`))
    assert.match(show, /\nCATEGORY +ENTRIES +SIZE +EVICTABLE +NEXT EXPIRY \(UTC\) +OF QUOTA\n/)
    assert.match(show, /\nCACHE +6 +23\d KB +23\d KB +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +22\.\d%\n/)
    assert.match(show, /\nPATTERN +0 +0 B +0 B +- +0%\n/)
  })

  test('at an 80-column terminal: every line fits, with a bar per agent and per category', (t) => {
    const { root, agent } = seeded(t)
    createAgent(root, 'second-agent', ['probe'])
    const list = rotiferTty(root, ['agent', 'list'], { columns: 80 })
    assert.equal(list.status, 0, list.tty)
    assert.ok(widest(list.tty) <= 80, list.tty)
    const row = list.tty.split('\n').find((l) => l.startsWith('keeper '))
    // The id keeps enough to tell it from the other's, cut with "…".
    assert.match(row, new RegExp(`^keeper +${agent.id.slice(0, 8)}[0-9a-f-]*… `))
    // 31 % of the quota: a bar of 8 cells, 2 and a half of them filled, then the figure.
    assert.match(row, / 3\d\d KB \/ 1 MB +██▌░░░░░ 3\d\.\d%$/)
    const show = rotiferTty(root, ['agent', 'show', 'keeper'], { columns: 80 })
    assert.ok(widest(show.tty) <= 80, show.tty)
    assert.match(show.tty, /\n {16}█{12}[▏▎▍▌▋▊▉]?░+\n/, 'the overall bar under the memory line')
    assert.match(show.tty, /\nCACHE +6 +23\d KB +23\d KB +\S+ \S+ +█[▏▎▍▌▋▊▉]?░+ 22\.\d%\n/)
    assert.match(show.tty, /\nPATTERN +0 +0 B +0 B +- +░{8} 0%\n/)
    // --wide keeps the ids whole however wide the lines get.
    assert.match(rotiferTty(root, ['agent', 'list', '--wide'], { columns: 80 }).tty, new RegExp(`\\nkeeper +${agent.id} `))
  })

  test('colour only at a terminal and without NO_COLOR; the bars stay without colour', (t) => {
    const { root } = seeded(t)
    const coloured = rotiferTty(root, ['agent', 'list'], { env: { NO_COLOR: '' } }).tty
    assert.match(coloured, /\x1b\[32m██▌\x1b\[39m/)
    const plainTty = rotiferTty(root, ['agent', 'list'], { env: { NO_COLOR: '1' } }).tty
    assert.doesNotMatch(plainTty, /\x1b\[3\dm/)
    assert.match(plainTty, /██▌░░░░░/)
  })

  test('a narrow terminal gets percentages instead of bars rather than lines that wrap', (t) => {
    const { root } = seeded(t)
    const r = rotiferTty(root, ['agent', 'show', 'keeper'], { columns: 72 })
    assert.ok(widest(r.tty.slice(r.tty.indexOf('CATEGORY'))) <= 72, r.tty)
    assert.match(r.tty, /\nCACHE +6 .* 22\.\d%\n/)
    assert.doesNotMatch(r.tty.slice(r.tty.indexOf('CATEGORY')), /░/)
  })
})

describe('other output at an 80-column terminal', () => {
  test('agent create, agent update, wrap, list and memory get fit; piped they keep full ids', (t) => {
    const { root } = seeded(t)
    const outputs = [
      ['agent', 'create', 'third', '-g', 'probe'],
      ['agent', 'update', 'third', '--memory-quota', '2MB', '--max-retention-days', '1'],
      ['wrap', 'probe'],
      ['list'],
      ['agent', 'memory', 'get', 'keeper', 'pref/indent'],
    ]
    for (const args of outputs) {
      const r = rotiferTty(root, args, { columns: 80 })
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.tty}`)
      assert.ok(widest(r.tty) <= 80, `${args.join(' ')}:\n${r.tty}`)
    }
    assert.match(rotiferTty(root, ['wrap', 'probe'], { columns: 80 }).tty, /\n {2}Gene ID \(v2\)\n {4}v2:[0-9a-f]{64}\n/)
    assert.match(rotifer(root, 'wrap', 'probe').stdout, /\n {2}Gene ID \(v2\) {2}v2:[0-9a-f]{64}\n/)
    assert.match(rotifer(root, 'agent', 'memory', 'get', 'keeper', 'pref/indent').stdout, /\ncreatedBy {7}v2:[0-9a-f]{64} \(probe\)\n/)
  })
})

describe('progress lines', () => {
  test('at a terminal, export, import, backup, restore and a large delete show a line on stderr that goes away', (t) => {
    const { root } = seeded(t)
    createAgent(root, 'copy', ['probe'], '--memory-quota=1MB')
    const bundle = path.join(root, 'keeper.jsonl')
    const backup = path.join(root, 'keeper.db')
    const cases = [
      [['agent', 'memory', 'export', 'keeper', '--output', bundle], /Exporting 3 entries \(\d+(\.\d)? KB\) of agent "keeper" to .*…/, /^Exported 3 entries/],
      [['agent', 'memory', 'import', 'copy', bundle], /Checking and importing 3 entries \(\d+(\.\d)? KB\) into agent "copy"…/, /^Imported 3 entries into agent "copy": 3 created, 0 updated\n$/],
      [['agent', 'memory', 'backup', 'keeper', backup], /Backing up agent "keeper" \(9 entries, 3\d\d KB\) to .*…/, /^Backed up 9 entries/],
      [['agent', 'memory', 'restore', 'keeper', backup, '--yes'], /Restoring agent "keeper" from .* \(\d+(\.\d)? KB\)…/, null],
      [['agent', 'memory', 'delete', 'keeper', '--category', 'CACHE', '--yes'], /Deleting 6 entries \(23\d KB\) from agent "keeper"…/, /^Deleted 6 entries \(category CACHE\) from agent "keeper"\n$/],
    ]
    for (const [args, line, result] of cases) {
      const r = rotiferTty(root, args, { stdoutTty: false })
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.tty}`)
      // The line is written, then erased: nothing of it stays on the screen.
      assert.match(r.tty, line, args.join(' '))
      assert.match(r.tty, /…\r\x1b\[2K$/, `${args.join(' ')}: the line is erased at the end`)
      assert.doesNotMatch(r.stdout, line, 'never on stdout')
      if (result) assert.match(r.stdout, result)
    }
  })

  test('none with --json, and none when stderr is not a terminal', (t) => {
    const { root } = seeded(t)
    createAgent(root, 'copy', ['probe'], '--memory-quota=1MB')
    const bundle = path.join(root, 'keeper.jsonl')
    assert.equal(rotifer(root, 'agent', 'memory', 'export', 'keeper', '--output', bundle).stderr, '')
    const imported = rotiferTty(root, ['agent', 'memory', 'import', 'copy', bundle, '--json'], { stdoutTty: false })
    assert.equal(imported.status, 0, imported.tty)
    assert.equal(imported.tty, '')
    assert.deepEqual(JSON.parse(imported.stdout), { created: 3, updated: 0, skipped: 0, expired: 0 })
    const backup = rotiferTty(root, ['agent', 'memory', 'backup', 'keeper', path.join(root, 'k.db'), '--json'], { stdoutTty: false })
    assert.equal(backup.tty, '')
    const piped = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--category', 'CACHE', '--yes')
    assert.equal(piped.status, 0)
    assert.equal(piped.stderr, '')
  })
})

describe('questions at a terminal', () => {
  test('restore asks first; no or an empty answer leaves the agent as it was', (t) => {
    const { root } = seeded(t)
    const backup = path.join(root, 'keeper.db')
    json(rotifer(root, 'agent', 'memory', 'backup', 'keeper', backup, '--json'))
    assert.equal(rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--category', 'CACHE', '--yes').status, 0)
    const count = () => json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory.entries
    assert.equal(count(), 3)
    for (const answer of ['n', '']) {
      const r = rotiferTty(root, ['agent', 'memory', 'restore', 'keeper', backup], { answer })
      assert.equal(r.status, 1, r.tty)
      assert.match(r.tty, /Replace every entry of agent "keeper" with the backup .*keeper\.db \(\d+(\.\d)? KB\)\? \[y\/N\] /)
      assert.match(r.tty, /error: not confirmed: agent "keeper" was left as it was/)
      assert.equal(count(), 3)
    }
    const yes = rotiferTty(root, ['agent', 'memory', 'restore', 'keeper', backup], { answer: 'y' })
    assert.equal(yes.status, 0, yes.tty)
    assert.match(yes.tty, /Restored 9 entries/)
    assert.equal(count(), 9)
  })
})

describe('questions when stderr is not a terminal', () => {
  test('stdin a terminal, stderr redirected: nothing is done unasked; --yes still works', (t) => {
    const { root } = seeded(t)
    const r = rotiferTty(root, ['agent', 'memory', 'delete', 'keeper', '--category', 'CACHE'], { stderrTty: false })
    assert.equal(r.status, 2, r.stderr)
    assert.match(r.stderr, /^error: rotifer agent memory delete: Delete 6 entries \(category CACHE, 23\d KB\) from agent "keeper": stderr is not a terminal to ask on; add --yes to confirm\n$/)
    assert.equal(json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory.entries, 9)
    const yes = rotiferTty(root, ['agent', 'memory', 'delete', 'keeper', '--category', 'CACHE', '--yes'], { stderrTty: false })
    assert.equal(yes.status, 0, yes.stderr)
    assert.equal(yes.stderr, '', 'no progress line in a file')
    assert.equal(json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory.entries, 3)
  })

  test('Ctrl-C at the question is a no', (t) => {
    const { root } = seeded(t)
    const r = rotiferTty(root, ['agent', 'delete', 'keeper'], { answer: '\u0003' })
    assert.equal(r.status, 1, r.tty)
    assert.match(r.tty, /error: not confirmed: agent "keeper" was not deleted/)
    assert.equal(json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory.entries, 9)
  })
})

describe('command-line mistakes: exit 2 with what to write', () => {
  test('bad values name the accepted ones', (t) => {
    const { root } = seeded(t)
    const before = json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory
    const cases = [
      [['agent', 'memory', 'delete', 'keeper', '--category', 'cache'], /^error: rotifer agent memory delete: invalid --category "cache"; did you mean "CACHE"\?: use PREFERENCE, PATTERN, CONTEXT or CACHE$/],
      [['agent', 'memory', 'import', 'keeper', 'x.jsonl', '--on-conflict', 'merge'], /invalid --on-conflict "merge": use fail, skip or replace$/],
      [['agent', 'create', 'my agent', '-g', 'probe'], /^error: rotifer agent create: agent name "my agent" is not valid: use 1 to 128 letters/],
      [['agent', 'create', 'x', '-g', 'Bad Gene'], /^error: rotifer agent create: invalid --genes: "Bad Gene" is not a gene name/],
      [['agent', 'create', 'x', '-g', 'probe', '--memory-quota=0'], /invalid --memory-quota: memory quota "0" must be more than 0; write a number and a unit/],
      [['agent', 'create', 'x', '-g', 'probe', '--memory-quota=0MB'], /memory quota "0MB" must be more than 0;/],
      [['agent', 'create', 'x', '-g', 'probe', '--memory-quota=1e3MB'], /memory quota "1e3MB" is not a plain decimal number \(no exponent\); write/],
      [['agent', 'update', 'keeper', '--memory-quota', '50', 'MB'], /^error: rotifer agent update: unexpected argument "MB": to give --memory-quota "50 MB", write --memory-quota=50MB or quote it: --memory-quota "50 MB"$/],
      [['agent', 'memory', 'delete', 'keeper', '--yes', 'please'], /unexpected argument "please": --yes takes no value/],
    ]
    for (const [args, message] of cases) {
      const r = rotifer(root, ...args)
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(oneErrorLine(r), message)
    }
    assert.deepEqual(json(rotifer(root, 'agent', 'show', 'keeper', '--json')).memory, before, 'nothing changed')
    // A quoted quota with a space is a quota.
    assert.equal(rotifer(root, 'agent', 'update', 'keeper', '--memory-quota', '50 MB').status, 0)
  })

  test('failures name the agent and the file in words', (t) => {
    const { root, agent } = seeded(t)
    const missingKey = rotifer(root, 'agent', 'memory', 'delete', 'keeper', '--key', 'nope')
    assert.equal(missingKey.status, 1)
    assert.match(oneErrorLine(missingKey), new RegExp(`^error: MEMORY_NOT_FOUND: .*agent "keeper" \\(${agent.id}\\)`))
    const missingBundle = rotifer(root, 'agent', 'memory', 'import', 'keeper', 'absent.jsonl')
    assert.equal(missingBundle.status, 1)
    assert.equal(oneErrorLine(missingBundle), 'error: cannot read the bundle absent.jsonl: no such file (ENOENT)')
    const missingBackup = rotifer(root, 'agent', 'memory', 'restore', 'keeper', path.join(root, 'absent.db'), '--yes')
    assert.equal(missingBackup.status, 1)
    assert.match(oneErrorLine(missingBackup), /the backup .*absent\.db cannot be read: no such file \(ENOENT\); nothing was restored$/)
    // The import's option is named as the command line spells it.
    const bundle = path.join(root, 'keeper.jsonl')
    assert.equal(rotifer(root, 'agent', 'memory', 'export', 'keeper', '--output', bundle).status, 0)
    const conflict = rotifer(root, 'agent', 'memory', 'import', 'keeper', bundle)
    assert.equal(conflict.status, 1)
    assert.match(oneErrorLine(conflict), /import with --on-conflict skip \(keep the target's\) or --on-conflict replace \(take the bundle's\)/)
    assert.doesNotMatch(conflict.stderr, /onConflict/)
    // Text and --json use one word for an entry the bundle replaced.
    const replaced = rotifer(root, 'agent', 'memory', 'import', 'keeper', bundle, '--on-conflict', 'replace', '--yes')
    assert.match(replaced.stdout, /^Imported 3 entries into agent "keeper": 0 created, 3 updated\n$/)
    assert.deepEqual(json(rotifer(root, 'agent', 'memory', 'import', 'keeper', bundle, '--on-conflict', 'replace', '--yes', '--json')), { created: 0, updated: 3, skipped: 0, expired: 0 })
  })
})
