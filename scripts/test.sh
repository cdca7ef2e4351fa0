#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite: the C++ tests (ctest), the C++ tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and the Python tests (pytest).
# Exits non-zero when anything fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

log "C++ tests (ctest)"
ctest --test-dir build --output-on-failure -j "$JOBS"

log "C++ tests under ASan + UBSan"
# The sanitizer build also makes an instrumented _C (in build-asan/pyext, not in the package) for the
# Python fuzz tests below. Configuring an existing build directory again is quick.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNODEWEAVE_SANITIZE=ON \
  -DNODEWEAVE_WITH_CUDA=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DNODEWEAVE_BUILD_PYTHON=ON \
  -DPython3_EXECUTABLE="$PY" -Dpybind11_DIR="$PYBIND_DIR" \
  -DNODEWEAVE_PY_OUTPUT_DIR="$ROOT/build-asan/pyext" > /dev/null
cmake --build build-asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"

log "Python fuzz and bad-input tests against the ASan + UBSan build of _C"
# A copy of the package with the instrumented extension; the sanitizer runtimes are preloaded because
# the Python interpreter itself is not instrumented. Leak checking is off: CPython keeps objects
# alive until exit by design. `python -S` skips site-packages' .pth files: the editable install's
# import hook would otherwise send `import nodeweave` to python/ (and its uninstrumented _C) ahead
# of PYTHONPATH; the venv's packages come in through PYTHONPATH instead.
SITE_PACKAGES="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
rm -rf build-asan/pytree && mkdir -p build-asan/pytree
cp -r python/nodeweave build-asan/pytree/
rm -f build-asan/pytree/nodeweave/_C*.so && cp build-asan/pyext/_C*.so build-asan/pytree/nodeweave/
ASAN_ENV=(LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
          ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
          PYTHONPATH="$ROOT/build-asan/pytree:$SITE_PACKAGES")
# The run must import the instrumented copy, not python/: stop here if it would not.
env "${ASAN_ENV[@]}" "$PY" -S -c \
  'import nodeweave; assert "build-asan" in nodeweave.__file__, nodeweave.__file__'
env "${ASAN_ENV[@]}" "$PY" -S -m pytest -q -p no:cacheprovider \
  test/python/test_graph_fuzz_construct.py test/python/test_graph_io_fuzz.py test/python/test_graph_io.py \
  test/python/test_graph_kernels.py test/python/test_graph_construct.py test/python/test_sampling_fuzz.py \
  test/python/test_kge_fuzz.py

log "Python tests (pytest)"
"$PY" -m pytest -q test/python "$@"
