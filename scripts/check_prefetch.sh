#!/usr/bin/env bash
# The fold's hash-table lookups prefetch their slots a stack or a batch
# ahead (lib/folded/prefetch.h). GCC 12 compiled those prefetches away (a
# helper whose only effect is __builtin_prefetch counts as pure, and a call
# to it as dead code), and no test or benchmark could tell.
# This checks, on a built fgtool, that the frame-cache, raw-stack-table and record-stream
# prefetches are there, and that no code calls __builtin_prefetch except
# through prefetch_for_read. Usage: scripts/check_prefetch.sh [FGTOOL]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/fgtool}
raw=$(grep -rln "__builtin_prefetch" lib apps | grep -v '^lib/folded/prefetch.h$' || true)
if [ -n "$raw" ]; then
  echo "check_prefetch: __builtin_prefetch outside lib/folded/prefetch.h (use fg::prefetch_for_read): $raw" >&2
  exit 1
fi
if [ "$(uname -m)" != x86_64 ] || ! command -v objdump >/dev/null; then
  echo "check_prefetch: skipped the binary check (not x86-64, or no objdump)"
  exit 0
fi
[ -x "$bin" ] || { echo "check_prefetch: $bin is not built" >&2; exit 1; }
dis=$(objdump -d --no-show-raw-insn -C "$bin")
for fn in 'fg::StackSymboliser::frame_keys(' 'fg::RawStackIndex::commit(' 'fg::FoldedProfile::Impl::intern_all(' \
  'fg::PerfDataReader::Impl::prefetch_ahead('; do
  n=$(awk -v f="<$fn" 'index($0, f) { on = 1; next } on && /^$/ { on = 0 } on' <<<"$dis" | grep -c prefetch || true)
  if [ "$n" -lt 1 ]; then
    echo "check_prefetch: no prefetch instruction in $fn of $bin" >&2
    exit 1
  fi
  echo "check_prefetch: $fn has $n prefetch instruction(s)"
done
