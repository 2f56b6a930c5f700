#!/usr/bin/env bash
# Side by side, in one run: `lrkit train` on the quickstart model (train.threads=0: its threads are its share)
# with its threads sized for the CPUs it may use, as it sizes them, against sized for the whole machine
# (LRKIT_CORES=$(nproc --all), what it did before it read the limits), under two limits of one CPU:
#   taskset   the affinity mask (a container's --cpuset-cpus and a batch system's binding work the same way);
#   quota     a control group with a CPU quota of one CPU (docker --cpus=1, a Kubernetes limit); only as
#             root where a cgroup cpu controller can be written, else reported as skipped.
# Each side's rate is its median 10-step window (bench/lrkit_windows.sh), alternated ROUNDS times; the ratio
# of medians. Usage: bench/cpu_limits.sh [ROUNDS] [STEPS]   (needs a build and data/kjv.txt; 2+ CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lrkit_binary.sh
source bench/lrkit_windows.sh
source bench/medians.sh
rounds=${1:-3}
steps=${2:-200}
machine=$(nproc --all)
((machine >= 2)) || { echo "cpu_limits.sh: one CPU: no limit to tell from the machine" >&2; exit 1; }
out=out/bench_cpu_limits
mkdir -p "$out"

group=""
cleanup() { [ -z "$group" ] || rmdir "$group" 2>/dev/null || true; }
trap cleanup EXIT
make_group() {  # a one-CPU quota group under cgroup v1's cpu hierarchy or v2's root
  local name=lrkit_bench_$$ v1
  for v1 in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
    if [ -f "$v1/cpu.cfs_quota_us" ] && mkdir "$v1/$name" 2>/dev/null; then
      group=$v1/$name
      { echo 100000 > "$group/cpu.cfs_period_us" && echo 100000 > "$group/cpu.cfs_quota_us"; } 2>/dev/null && return 0
      cleanup; group=""
    fi
  done
  if [ -f /sys/fs/cgroup/cgroup.subtree_control ] && mkdir "/sys/fs/cgroup/$name" 2>/dev/null; then
    group=/sys/fs/cgroup/$name
    echo "100000 100000" > "$group/cpu.max" 2>/dev/null && return 0
    cleanup; group=""
  fi
  return 1
}

# rate LIMIT CORES: one run under LIMIT (taskset | quota) with LRKIT_CORES=CORES (empty: lrkit's own sizing)
rate() {
  local limit=$1 cores=$2 progress=$out/progress.txt
  local run=("$LRKIT" train --config configs/quickstart.cfg $(lrkit_window_args "$steps") --train.threads=0
             --eval.every=0 --overwrite --out "$out/run")
  local env=(env -u LRKIT_CORES)
  [ -z "$cores" ] || env=(env "LRKIT_CORES=$cores")
  if [ "$limit" = taskset ]; then
    "${env[@]}" taskset -c "$(taskset -cp $$ | sed -E 's/.*: ([0-9]+).*/\1/')" "${run[@]}" > "$progress" 2>&1
  else
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$group" "${env[@]}" "${run[@]}" > "$progress" 2>&1
  fi || { cat "$progress" >&2; exit 1; }
  grep -m1 '^threads per worker' "$progress" >&2
  lrkit_window_rate "$progress"
}

limits=(taskset)
if make_group; then limits+=(quota); else echo "quota: skipped (needs root and a writable cgroup cpu controller)"; fi
for limit in "${limits[@]}"; do
  sized=() whole=()
  for ((i = 0; i < rounds; i++)); do
    sized+=("$(rate "$limit" "")")
    whole+=("$(rate "$limit" "$machine")")
    echo "$limit round $((i + 1)): sized for the limit ${sized[-1]} tok/s, for the machine ($machine cores) ${whole[-1]} tok/s"
  done
  s=$(median "${sized[@]}") w=$(median "${whole[@]}")
  echo "$limit, one CPU, median: sized for the limit $s tok/s, for the machine $w tok/s, ratio $(ratio "$s" "$w")"
done
