# Shared by the bench scripts (sourced): `measure LABEL CMD...` runs CMD once
# under /usr/bin/time -v, stdout to /dev/null, and prints wall time, CPU time
# (user+sys, children included) and peak RSS. On a shared or loaded machine
# compare CPU times: wall time includes waiting for the cores.
measure() {
  local label=$1; shift
  local log; log=$(mktemp)
  if [ -x /usr/bin/time ]; then
    if ! /usr/bin/time -v "$@" 2>"$log" >/dev/null; then
      echo "$label: failed:" >&2; tail -5 "$log" >&2; rm -f "$log"; return 1
    fi
    local wall user sys rss cpu
    wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
    user=$(grep 'User time' "$log" | awk '{print $NF}')
    sys=$(grep 'System time' "$log" | awk '{print $NF}')
    rss=$(grep 'Maximum resident' "$log" | awk '{print $NF}')
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u+s}')
    printf '%-44s wall %8s  cpu %6.2f s  peak RSS %6d MB\n' "$label" "$wall" "$cpu" $((rss / 1024))
    MEASURED_CPU=$cpu
    # Wall seconds: "m:ss.ss" or "h:mm:ss".
    MEASURED_WALL=$(awk -v w="$wall" 'BEGIN{n=split(w,p,":"); s=0; for(i=1;i<=n;i++) s=s*60+p[i]; printf "%.2f", s}')
    MEASURED_RSS_MB=$((rss / 1024))
  else
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    printf '%-44s wall %6.2f s (install GNU time for CPU and RSS)\n' "$label" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
    MEASURED_CPU=0
    MEASURED_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
    MEASURED_RSS_MB=0
  fi
  rm -f "$log"
}

# Where the peer tools are (bench/README.md says how to build them); empty if absent.
find_inferno() {
  local d
  for d in "${INFERNO_BIN:-}" /tmp/anchors/inferno-0.11.15/target/release; do
    if [ -n "$d" ] && [ -x "$d/inferno-flamegraph" ]; then echo "$d"; return; fi
  done
  if command -v inferno-flamegraph >/dev/null; then dirname "$(command -v inferno-flamegraph)"; fi
}
