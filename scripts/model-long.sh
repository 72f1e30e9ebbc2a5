#!/usr/bin/env bash
# The long form of the model-based test: many random call sequences against the reference
# model. Usage: scripts/model-long.sh [sequences=2000] [operations=300] [seed=random]
# A failure prints the seed that reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f rotifer-memory.linux-x64-gnu.node ] || npm run build
exec node __test__/model/runner.js "${1:-2000}" "${2:-300}" "${3:-$(( $(date +%s) % 1000000000 ))}"
