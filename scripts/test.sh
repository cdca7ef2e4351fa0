#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite: the C++ tests (ctest), the C++ tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and the Python tests (pytest).
# Exits non-zero when anything fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

log "C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j "$JOBS"

log "C++ tests under ASan + UBSan"
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNODEWEAVE_SANITIZE=ON \
    -DNODEWEAVE_WITH_CUDA=OFF -DNODEWEAVE_BUILD_PYTHON=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g"
fi
cmake --build build-asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"

log "Python tests (pytest)"
"$PY" -m pytest -q test/python "$@"
