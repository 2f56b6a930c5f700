#!/usr/bin/env bash
# Builds lrkit against a CUDA LibTorch and checks it on the GPU, in stages that
# each fit one sitting on a short-lived GPU machine; re-running a stage reuses
# the build. Full outputs go to $LOGS (default out/gpu_check), at most 8 files, as
# many as a GPU machine hands back; the end of the output is a short summary.
# A failed stage does not stop the later ones, unless it left no trainer.
# usage: scripts/gpu_check.sh [build] [test] [bench] [profile] [torch]   (no stage: build test)
#   build    configure build/ with -DLRKIT_WITH_CUDA=ON (plus $LRKIT_CMAKE_ARGS; the Python package
#            for the Python with torch, with its pybind11) and build everything
#   test     the gpu-labelled tests (the CUDA twins), the Python package's tests (pytest-xdist), then every other test
#   bench    bench/gpu_vs_pytorch.sh $STEPS $ROUNDS (default 60 3) at the GPT-2-small shape, PROFILE=0
#   profile  the same script's traced steps and their breakdown only (PROFILE=only: no timed rounds again)
#   torch    lrkit.torch on cuda: bench/grad_norm_recorder_overhead.sh, and bench/ddp_overhead.sh's HDET and
#            DispersionHook modes on one GPU (NCCL), each with and without its wait for the device per step
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/find_python.sh
logs=${LOGS:-out/gpu_check}
mkdir -p "$logs"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(build test)
summary=()
note() { summary+=("$*"); echo "== $*"; }

stage_build() {
  local python
  python=$(python_with torch) || { echo "no python3 with torch: cannot find LibTorch" >&2; exit 2; }
  local start=$SECONDS
  # shellcheck disable=SC2086  # LRKIT_CMAKE_ARGS is a list of arguments
  if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLRKIT_WITH_CUDA=ON ${LRKIT_CMAKE_ARGS:-} \
      -DPython3_EXECUTABLE="$(command -v "$python")" > "$logs/configure.txt" 2>&1; then
    tail -40 "$logs/configure.txt"; note "configure FAILED"; return 1
  fi
  grep -E '^-- lrkit|lrkit: CUDA kernels' "$logs/configure.txt" || true
  # -k 0: every target that can build does, so one call shows every compile error (each costs a
  # rebuild on a machine held for minutes), and a broken test file still leaves the trainer to bench.
  if ! cmake --build build -j "$(nproc)" -- -k 0 > "$logs/build.txt" 2>&1; then
    # The failed targets, then each error with its source line (not the compile commands: the
    # device returns only the last 12,000 characters of a call's output).
    grep -E '^FAILED: ' "$logs/build.txt" | head -20
    grep -E -A3 ' error: ' "$logs/build.txt" | head -100
    local trainer=no  # built now, not merely present: an earlier call's binary may be left over
    cmake --build build --target lrkit > /dev/null 2>&1 && trainer=yes  # and lrkit-torch, which it runs for train
    note "build FAILED: $(grep -c '^FAILED: ' "$logs/build.txt") targets, $(grep -c ' error: ' "$logs/build.txt") errors" \
      "(all in $logs/build.txt); the trainer build/bin/lrkit (and lrkit-torch) built: $trainer"
    if grep -q -E '^FAILED: .*add_layer_norm' "$logs/build.txt"; then
      note "lrkit's CUDA kernel failed: LRKIT_CMAKE_ARGS=\"\$LRKIT_CMAKE_ARGS -DLRKIT_CUDA_KERNELS=OFF\" builds without it"
    fi
    return 1
  fi
  note "build: $((SECONDS - start)) s, torch $("$python" -c 'import torch; print(torch.__version__)'), $(cmake --version | head -1)"
}

ctest_counts() {  # ctest output file -> "N passed, N failed, N skipped of N"
  # "99% tests passed, 2 tests failed out of 509"; CMake 4's ctest says "100% tests passed out of 25"
  awk '/tests passed.* out of [0-9]+$/ {total = $NF; failed = 0
                                        if (match($0, /[0-9]+ tests failed/)) failed = substr($0, RSTART, RLENGTH) + 0}
       /\*\*\*Skipped/ {skipped++}
       END {printf "%d passed, %d failed, %d skipped of %d", total - failed - skipped, failed, skipped, total}' "$1"
}

# Where ctest cannot read the discovered tests (a CMake whose generated scripts it refuses), the GoogleTest
# binaries themselves, in parallel: gtest_binaries FILTER OUTPUT -> each binary's counts, crashes named.
gtest_binaries() {
  local test
  for test in build/bin/*_test; do
    (timeout 600 "$test" --gtest_filter="$1" --gtest_brief=1 > "$2.$(basename "$test")" 2>&1
     echo "$(basename "$test"): exit $?, $(grep -h -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$2.$(basename "$test")" | tr '\n' ' ')") &
  done > "$2" 2>&1
  wait
  cat "$2".*_test >> "$2" && rm -f "$2".*_test
  ! grep -q -E 'exit [1-9]' "$2"
}

# ctest runs the Python package's tests (its CUDA twins among them) as one test: pytest's own counts, from ctest's log.
note_python_package() {
  note "python_package's pytest: $(grep -h -E '^[0-9]+ (passed|failed)' build/Testing/Temporary/LastTest.log 2>/dev/null | tail -1)"
}

# The Python package's tests, its CUDA and NCCL twins among them, with pytest-xdist where the Python has it: one
# after another (ctest's python_package) they outlasted a lease's call there. A crashed test is named, and the
# others still run.
python_package() {
  local python parallel=()
  python=$(python_with torch) || { echo "no python3 with torch" > "$logs/pytest.txt"; return 1; }
  "$python" -c "import xdist" 2>/dev/null && parallel=(-n "$(nproc)")
  PYTHONPATH=build/python LRKIT=$PWD/build/bin/lrkit bash tests/python/run_pytest.sh "$python" -rA \
    "${parallel[@]}" > "$logs/pytest.txt" 2>&1
}

stage_test() {
  local start=$SECONDS status=0
  (cd build && ctest -L gpu -j 4 --timeout 600 --output-on-failure) > "$logs/ctest_gpu.txt" 2>&1 || status=1
  if grep -q '^CMake Error' "$logs/ctest_gpu.txt"; then
    note "ctest could not read the tests (CMake Error in $logs/ctest_gpu.txt): the binaries themselves instead"
    # The generated lines CMake refused (not reproduced with CMake 4.0.2, 4.1.1 or 4.3.1 on the CPU machine).
    grep -o -E 'at [^ ]+\.cmake:[0-9]+' "$logs/ctest_gpu.txt" | sort -u | head -3 | while read -r _ place; do
      echo "$place: $(sed -n "${place##*:}p" "${place%:*}" 2>/dev/null | cut -c1-400)"
    done | tee -a "$logs/ctest_gpu.txt"
    status=0
    gtest_binaries 'Cuda/*' "$logs/gtest_gpu.txt" || status=1
    note "gpu twins, binary by binary: $(grep -E '^[a-z_0-9]+_test: ' "$logs/gtest_gpu.txt" | tr '\n' ' ')"
    gtest_binaries '-Cuda/*' "$logs/gtest_rest.txt" || status=1
    note "other tests, binary by binary: $(grep -E '^[a-z_0-9]+_test: ' "$logs/gtest_rest.txt" | tr '\n' ' ')"
    # The tests that are not GoogleTest's (the Python package, install, scripts) through ctest, with the
    # discovered tests' scripts moved away: each binary's include file then registers one test named
    # <binary>_NOT_BUILT instead of its tests, which -E leaves out.
    local aside=build/tests/set_aside_for_ctest
    mkdir -p "$aside" && mv build/tests/*_tests.cmake "$aside"/
    (cd build && ctest -E '_NOT_BUILT$|^cli_fuzz$' -j "$(nproc)" --timeout 600 --output-on-failure) \
      > "$logs/ctest_scripts.txt" 2>&1 || status=1
    mv "$aside"/*_tests.cmake build/tests/ && rmdir "$aside"
    note "tests other than GoogleTest's (no fuzz): $(ctest_counts "$logs/ctest_scripts.txt")"
    note_python_package
    return $status
  fi
  note "gpu-labelled tests: $(ctest_counts "$logs/ctest_gpu.txt") ($((SECONDS - start)) s)"
  start=$SECONDS
  python_package || status=1
  note "the Python package: $(tail -1 "$logs/pytest.txt") ($((SECONDS - start)) s); its CUDA and NCCL twins:" \
    "$(grep -c -E '^PASSED .*(cuda|nccl)' "$logs/pytest.txt") passed," \
    "$(grep -c -E '^(FAILED|ERROR) .*(cuda|nccl)' "$logs/pytest.txt") failed"
  start=$SECONDS
  (cd build && ctest -LE gpu -E '^(cli_fuzz|python_package)$' -j "$(nproc)" --timeout 600 --output-on-failure) \
    > "$logs/ctest_rest.txt" 2>&1 || status=1
  note "other tests (no fuzz; the Python package above): $(ctest_counts "$logs/ctest_rest.txt") ($((SECONDS - start)) s)"
  grep -h -E '\(Failed\)|\(Timeout\)|\(SEGFAULT\)|Not Run' "$logs/ctest_gpu.txt" "$logs/ctest_rest.txt" | head -20 || true
  return $status
}

stage_bench() {
  local start=$SECONDS
  PROFILE=0 bash bench/gpu_vs_pytorch.sh "${STEPS:-60}" "${ROUNDS:-3}" > "$logs/bench.txt" 2>&1 ||
    { tail -30 "$logs/bench.txt"; note "bench FAILED"; return 1; }
  sed -n '/^device: /,$p' "$logs/bench.txt"
  note "bench: $((SECONDS - start)) s (table above; $logs/bench.txt)"
}

# A stage of its own, after the issue's bench and profile: the session's device minutes go to those first.
stage_torch() {
  local start=$SECONDS
  # The Python GradNormRecorder on CUDA: record() queues its norms without waiting for the device.
  echo "== bench/grad_norm_recorder_overhead.sh 3 60 cuda" > "$logs/torch.txt"
  bash bench/grad_norm_recorder_overhead.sh 3 60 cuda >> "$logs/torch.txt" 2>&1 || true
  note "GradNormRecorder on cuda: $(tail -1 "$logs/torch.txt")"
  # One GPU (NCCL): HDET's losses wait on the device until a sync, against a copy to the host every step; the
  # DispersionHook returning its metrics every step, against step(loss, metrics=False).
  local modes="lr_scheduler hdet hdet_every_step hook hook_lazy"
  echo "== DEVICE=cuda WORKERS=1 bench/ddp_overhead.sh 2 200 $modes" >> "$logs/torch.txt"
  # shellcheck disable=SC2086  # the modes are words
  DEVICE=cuda WORKERS=1 bash bench/ddp_overhead.sh 2 200 $modes >> "$logs/torch.txt" 2>&1 || true
  tail -5 "$logs/torch.txt"
  note "lrkit.torch on cuda: $((SECONDS - start)) s (the 5 lines above; $logs/torch.txt)"
}

stage_profile() {
  local start=$SECONDS
  PROFILE=only bash bench/gpu_vs_pytorch.sh > "$logs/profile.txt" 2>&1 ||
    { tail -30 "$logs/profile.txt"; note "profile FAILED"; return 1; }
  sed -n '/^traces: /,$p' "$logs/profile.txt"
  # The traces as one file (a GPU machine hands back few): the PyTorch loops' and lrkit's runs' profile folders.
  (cd out/bench_gpu_vs_pytorch && tar cJf - --ignore-failed-read ./*.trace.json ./*_profiled/profile) \
    > "$logs/traces.tar.xz" 2>/dev/null || true
  note "profile: $((SECONDS - start)) s (traces in $logs/traces.tar.xz)"
}

for stage in "${stages[@]}"; do
  case $stage in build | test | bench | profile | torch) ;; *) echo "unknown stage '$stage' (build, test, bench, profile, torch)" >&2; exit 2 ;; esac
done
status=0
for stage in "${stages[@]}"; do
  if ! "stage_$stage"; then
    status=1
    # Nothing runs without a trainer; a failed test still leaves the bench and the profile worth their minutes.
    if [ "$stage" = build ] && [ ! -x build/bin/lrkit-torch ]; then break; fi
  fi
done
echo
printf '%s\n' "${summary[@]}"
exit $status
