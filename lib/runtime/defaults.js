'use strict'
// The runtime's defaults, in a file of their own so that a command's declaration (its help
// text) can name them without loading the runtime.

/** R-RUN-8: the run limit of upstream's sandbox (max_execution_time_ms 60000), in seconds. */
const DEFAULT_TIMEOUT_SECONDS = 60
/** R-RUN-7: the input of `agent run` and `run` without --input, as upstream's. */
const DEFAULT_INPUT = Object.freeze({ name: 'world' })

module.exports = { DEFAULT_TIMEOUT_SECONDS, DEFAULT_INPUT }
