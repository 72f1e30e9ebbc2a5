#!/usr/bin/env bash
# Long fuzzing runs. Usage: scripts/fuzz-long.sh
#   1. the proptest targets (core/tests/fuzz_props.rs), each with PROPTEST_CASES cases
#      (default 1000000), in release mode;
#   2. when cargo-fuzz and a nightly toolchain are installed, each libFuzzer target under
#      fuzz/ for FUZZ_RUNS executions (default 1000000) or FUZZ_SECONDS (default 900) each.
# A failure prints the input (proptest: minimal input and FUZZ_SEED; libFuzzer: fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."
PROPTEST_CASES="${PROPTEST_CASES:-1000000}" cargo test --release -p rotifer-memory-core --test fuzz_props -- --test-threads=2
if command -v cargo-fuzz >/dev/null 2>&1 && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  for target in quota_text time_text json_args wasm_request; do
    cargo +nightly fuzz run "$target" -- -runs="${FUZZ_RUNS:-1000000}" -max_total_time="${FUZZ_SECONDS:-900}" -timeout=10
  done
else
  echo "cargo-fuzz or a nightly toolchain is missing (cargo install cargo-fuzz; rustup toolchain install nightly): ran the proptest targets only"
fi
