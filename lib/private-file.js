'use strict'
// A file written so that it appears whole or not at all: under a temporary name in its folder
// (created 0600, never through a symlink, never over an existing file), then renamed over it.

const fs = require('node:fs')
const path = require('node:path')

/** Writes `text` to `file` that way; throws the file system's error, leaving no temporary file. */
function writePrivateFile(file, text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  let fd
  try {
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600)
    fs.writeFileSync(fd, text)
    fs.closeSync(fd)
    fd = undefined
    fs.renameSync(tmp, file)
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd)
    fs.rmSync(tmp, { force: true })
    throw e
  }
}

module.exports = { writePrivateFile }
