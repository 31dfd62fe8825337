#!/usr/bin/env bash
# The README's main command: sets up everything (apt-get, as root), builds
# fgtool and the libtorch demo trainers, then profiles real MLP and VAE
# training runs end to end (record, fold, categorise, render, diff) into out/,
# with out/index.html (scripts/demo_index.py) showing each graph with its
# headline numbers and how to read it.
#
#   bash scripts/demo.sh [--skip-setup] [--reuse] [--out DIR]
#     --skip-setup  no apt-get and no build (use build/ as it is)
#     --reuse       keep recordings already in DIR (re-fold and re-render only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$root/out
skip_setup=0
reuse=0
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-setup) skip_setup=1 ;;
    --reuse) reuse=1 ;;
    --out) out=$2; shift ;;
    *) echo "demo.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
t0=$(date +%s)
step() { printf '[%4ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }

if [ $skip_setup = 0 ]; then
  step "setting up dependencies (apt-get: build tools, elfutils, perf, libtorch, OpenBLAS)"
  bash scripts/setup.sh --demo
  step "building fgtool and the demo trainers (first build: a few minutes)"
  bash scripts/build.sh
fi
bin=$root/build/bin
fg=$bin/fgtool
for b in fgtool mlp_train vae_train mnist_synth; do
  [ -x "$bin/$b" ] || { echo "demo.sh: $bin/$b was not built (is libtorch-dev installed? run without --skip-setup)" >&2; exit 1; }
done
export DEBUGINFOD_URLS= FGTOOL_NO_PROGRESS=1
mkdir -p "$out"
[ $reuse = 1 ] || rm -f "$out"/*.data "$out"/*.data.old
threads=$(nproc)

step "generating synthetic MNIST-shaped data (learnable digit shapes) in $out/data"
"$bin/mnist_synth" --out "$out/data" --train 12000 --test 2000 >/dev/null

run_mlp="$bin/mlp_train --data $out/data --epochs 1 --max-batches 80 --threads $threads"
run_vae="$bin/vae_train --data $out/data --epochs 1 --max-batches 40"

record() {  # record NAME "fgtool record options" COMMAND...
  local name=$1 opts=$2; shift 2
  if [ $reuse = 1 ] && [ -s "$out/$name.data" ]; then step "reusing $out/$name.data"; return; fi
  step "recording $name: fgtool record $opts -- ${*#$bin/}"
  # shellcheck disable=SC2086
  "$fg" record $opts -o "$out/$name.data" -- "$@" >"$out/$name.log" 2>&1 ||
    { echo "demo.sh: recording $name failed; see $out/$name.log" >&2; tail -5 "$out/$name.log" >&2; exit 1; }
}
# shellcheck disable=SC2086
record mlp-dwarf "--dwarf -F 199" $run_mlp
# shellcheck disable=SC2086
record mlp-fp "-F 499" $run_mlp
# shellcheck disable=SC2086
record mlp-wall "--wall --dwarf -F 199" $run_mlp
# shellcheck disable=SC2086
record vae-1thread "--dwarf -F 199" $run_vae --threads 1
# shellcheck disable=SC2086
record vae-${threads}threads "--dwarf -F 199" $run_vae --threads "$threads"

fold() {  # fold NAME.data -> NAME.folded (+ extra fold options)
  local name=$1 suffix=$2; shift 2
  "$fg" fold "$@" "$out/$name.data" -o "$out/$name$suffix.folded" 2>"$out/$name$suffix.fold.log" ||
    { echo "demo.sh: fgtool fold $* $name.data failed:" >&2; cat "$out/$name$suffix.fold.log" >&2; exit 1; }
}
step "folding (native perf.data reading, DWARF unwinding, elfutils symbols)"
for n in mlp-dwarf mlp-fp vae-1thread "vae-${threads}threads"; do fold "$n" ""; done
fold mlp-wall "" --wall
fold mlp-wall "-offcpu" --off-cpu

step "category reports and flamegraphs"
for n in mlp-dwarf mlp-fp vae-1thread "vae-${threads}threads" mlp-wall; do
  "$fg" report "$out/$n.folded" >"$out/$n.report.txt"
  "$fg" report --format json "$out/$n.folded" >"$out/$n.report.json"
done
"$fg" svg --colors category --title "MLP training, on-CPU (DWARF stacks), coloured by category" "$out/mlp-dwarf.folded" -o "$out/mlp-dwarf.svg"
# No graph of the frame-pointer recording: through Debian's libtorch/OpenBLAS/libgomp
# (no frame pointers) its stacks are chains of garbage addresses. index.html
# explains that from the fold instead (scripts/demo_index.py).
rm -f "$out/mlp-fp.svg" "$out/diff-mlp-fp-vs-dwarf.svg"
"$fg" svg --countname us --title "MLP training, wall clock: on-CPU (warm) and off-CPU (blue)" "$out/mlp-wall.folded" -o "$out/mlp-wall.svg"
"$fg" svg --colors io --countname us --title "MLP training, off-CPU: where threads block" "$out/mlp-wall-offcpu.folded" -o "$out/mlp-offcpu.svg"
"$fg" svg --colors category --title "VAE training, 1 thread" "$out/vae-1thread.folded" -o "$out/vae-1thread.svg"
"$fg" svg --colors category --title "VAE training, $threads threads" "$out/vae-${threads}threads.folded" -o "$out/vae-${threads}threads.svg"

step "differential flamegraphs"
"$fg" diff --by category --title "VAE: 1 thread (A) vs $threads threads (B)" "$out/vae-1thread.folded" "$out/vae-${threads}threads.folded" -o "$out/diff-vae-threads.svg"
"$fg" diff --by category --format json "$out/vae-1thread.folded" "$out/vae-${threads}threads.folded" -o "$out/diff-vae-threads.categories.json"
"$fg" diff --by category "$out/vae-1thread.folded" "$out/vae-${threads}threads.folded" >"$out/diff-vae-threads.categories.txt"
"$fg" diff --top 15 "$out/vae-1thread.folded" "$out/vae-${threads}threads.folded" >"$out/diff-vae-threads.top.txt"
"$fg" diff --by category "$out/mlp-fp.folded" "$out/mlp-dwarf.folded" >"$out/diff-mlp-fp-vs-dwarf.categories.txt"

# Op by op (docs/traces.md): the framework-op view of each recording, so that
# runs line up by op name: 1 vs N CPU threads here, and with a CUDA libtorch
# and a GPU the same model on the GPU (its profiler trace, kernels under ops).
step "op-level view: VAE 1 thread vs $threads threads, op by op"
fold vae-1thread "-ops" --ops
fold "vae-${threads}threads" "-ops" --ops
"$fg" diff --title "VAE op by op: 1 thread (A) vs $threads threads (B)" "$out/vae-1thread-ops.folded" "$out/vae-${threads}threads-ops.folded" -o "$out/diff-vae-ops.svg"
"$fg" diff --top 15 "$out/vae-1thread-ops.folded" "$out/vae-${threads}threads-ops.folded" >"$out/diff-vae-ops.top.txt"
if "$bin/vae_train" --data "$out/data" --epochs 1 --max-batches 1 --device cuda >/dev/null 2>&1; then
  step "VAE on the GPU: profiler trace, GPU kernels under the ops that launched them"
  "$bin/vae_train" --data "$out/data" --epochs 1 --max-batches 40 --device cuda --trace "$out/vae-gpu.trace.json" \
    --trace-steps 5 >"$out/vae-gpu.log" 2>&1
  "$fg" fold --gpu --ops "$out/vae-gpu.trace.json" -o "$out/vae-gpu-ops.folded"
  "$fg" diff --title "VAE op by op: CPU, 1 thread (A) vs GPU (B)" "$out/vae-1thread-ops.folded" "$out/vae-gpu-ops.folded" -o "$out/diff-vae-cpu-gpu.svg"
  "$fg" diff --top 15 "$out/vae-1thread-ops.folded" "$out/vae-gpu-ops.folded" >"$out/diff-vae-cpu-gpu.top.txt"
  "$fg" diff --by category "$out/vae-1thread-ops.folded" "$out/vae-gpu-ops.folded" >"$out/diff-vae-cpu-gpu.categories.txt"
else
  echo "  (no CUDA libtorch or no GPU here, so no CPU-vs-GPU diff: Debian's libtorch is CPU-only)"
fi

step "writing $out/index.html"
python3 scripts/demo_index.py "$out" "$threads"

step "done in $(( $(date +%s) - t0 ))s. Open $out/index.html. Files:"
for f in index.html mlp-dwarf.svg mlp-wall.svg mlp-offcpu.svg vae-1thread.svg "vae-${threads}threads.svg" \
         diff-vae-threads.svg mlp-dwarf.report.txt diff-vae-threads.categories.txt; do
  echo "  $out/$f"
done
echo
echo "Where the MLP's on-CPU time goes (out/mlp-dwarf.report.txt, excerpt):"
head -n 25 "$out/mlp-dwarf.report.txt"
