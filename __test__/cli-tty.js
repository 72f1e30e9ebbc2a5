'use strict'
// Runs the real `rotifer` bin on a pseudo-terminal (python3's pty module), as a person at a
// terminal runs it: stdin and stderr are the terminal, stdout too unless `stdoutTty: false`
// (then it is a file, as in `rotifer … > out`), and stderr unless `stderrTty: false`. The terminal has `columns` columns; `answer`
// is typed (with Enter) when a question ending in `prompt` (default "[y/N] ") appears.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { BIN } = require('./cli-harness')

const DRIVER = String.raw`
import fcntl, json, os, pty, select, struct, subprocess, sys, termios, time
cfg = json.loads(sys.argv[1])
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', cfg['rows'], cfg['columns'], 0, 0))
out = open(cfg['stdoutFile'], 'wb') if cfg['stdoutFile'] else slave
err = open(cfg['stderrFile'], 'wb') if cfg['stderrFile'] else slave
env = dict(os.environ, **cfg['env'])
p = subprocess.Popen(cfg['argv'], cwd=cfg['cwd'], stdin=slave, stdout=out, stderr=err, env=env)
os.close(slave)
seen = b''
answered = cfg['answer'] is None
deadline = time.time() + 60
while True:
    if time.time() > deadline:
        p.kill()
        break
    r, _, _ = select.select([master], [], [], 0.05)
    if r:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b''
        if not data:
            break
        seen += data
        if not answered and cfg['prompt'].encode() in seen:
            os.write(master, cfg['answer'].encode() + b'\r')
            answered = True
    elif p.poll() is not None:
        break
status = p.wait()
sys.stdout.write(json.dumps({'status': status, 'tty': seen.decode('utf-8', 'replace')}))
`

/** Runs `rotifer ...args` on a terminal; returns { status, tty, stdout, stderr }. */
function rotiferTty(cwd, args, { columns = 80, rows = 24, stdoutTty = true, stderrTty = true, answer = null, prompt = '[y/N] ', env: extra = {} } = {}) {
  // No colour unless a test asks for it (NO_COLOR: '').
  const env = { NO_COLOR: '1', ...extra }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotifer-tty-'))
  const stdoutFile = stdoutTty ? null : path.join(dir, 'stdout')
  const stderrFile = stderrTty ? null : path.join(dir, 'stderr')
  const cfg = { argv: [process.execPath, BIN, ...args], cwd, columns, rows, answer, prompt, env, stdoutFile, stderrFile }
  const r = spawnSync('python3', ['-c', DRIVER, JSON.stringify(cfg)], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '' } })
  if (r.status !== 0) throw new Error(`the pty driver failed: ${r.stderr}`)
  const { status, tty } = JSON.parse(r.stdout)
  const stdout = stdoutFile ? fs.readFileSync(stdoutFile, 'utf8') : null
  const stderr = stderrFile ? fs.readFileSync(stderrFile, 'utf8') : null
  fs.rmSync(dir, { recursive: true, force: true })
  // The terminal turns "\n" into "\r\n".
  return { status, tty: tty.replace(/\r\n/g, '\n'), stdout, stderr }
}

/** `text` without colour escapes. */
function plain(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '')
}

module.exports = { rotiferTty, plain }
