'use strict'
// The demo run by `npm run demo` (after the build): a fresh project, an agent of the formatter
// (TypeScript) and the counter (WASM) with a quota, two runs with the indent and the run count
// remembered, the agent's memory listed, and both test suites.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { REPO } = require('./cli-harness')

test('examples/demo.js runs the whole story and exits 0', () => {
  // This is what `npm run demo` runs once the addon is built.
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'))
  assert.match(pkg.scripts.demo, /&& node examples\/demo\.js$/)
  const r = spawnSync(process.execPath, [path.join(REPO, 'examples', 'demo.js')], { cwd: REPO, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
  const out = r.stdout
  assert.match(out, /\$ rotifer agent create demo-agent --genes formatter counter --memory-quota=1MB\n {2}Created agent "demo-agent"/)
  // Run 1 asks for 4; run 2 gives no indent and still gets 4.
  const runs = out.split('$ rotifer agent run demo-agent').slice(1)
  assert.equal(runs.length, 2)
  assert.match(runs[0], /"indent":4\}'\n/)
  assert.doesNotMatch(runs[1].split('\n')[0], /indent/)
  assert.match(runs[1], /\n {4}"indent": 4,\n/)
  // The WASM gene counted both runs in the agent's memory.
  assert.match(runs[0], /\n {4}"runs": 1\n/)
  assert.match(runs[1], /\n {4}"runs": 2\n/)
  assert.match(out, /used indent 4, remembered from the first run, and is run number 2/)
  // At 80 columns (the demo's output is a pipe) the gene names do not fit beside the whole keys.
  assert.match(out, /\$ rotifer agent memory list demo-agent\n {2}Agent "demo-agent" \([0-9a-f-]{36}\)\n {2}2 entries.*\n\n {2}KEY .*\n {2}counter\/runs +PATTERN +15 B +v2:[0-9a-f]{8}… +\d{4}-.*\n {2}formatter\/indent +PREFERENCE +17 B +v2:[0-9a-f]{8}… +\d{4}-/)
  assert.match(out, /\$ rotifer test counter\n.*\n(.*\n)*.*3 passed, 0 failed/)
  // The temporary project is removed at the end.
  const project = /A fresh project at (\S+), with/.exec(out)[1]
  assert.equal(fs.existsSync(project), false)
})
