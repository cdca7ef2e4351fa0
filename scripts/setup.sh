#!/usr/bin/env bash
# Shared setup for demo.sh and test.sh: installs what is missing (Debian packages, the .venv with
# the Python packages), then configures and builds nodeweave into build/. Idempotent: each step
# checks first, so a second run only rebuilds what changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# metis: the gpmetis command the partition tests compare nodeweave's METIS runs with.
# libopenmpi-dev, openmpi-bin: MPI for multi-process training (distributed/), and mpirun for its tests.
APT_PACKAGES=(build-essential cmake ninja-build ccache git python3 python3-venv python3-dev
              libopenblas-openmp-dev libgtest-dev libdlpack-dev libmetis-dev metis
              libopenmpi-dev openmpi-bin)
PIP_PACKAGES=(numpy scipy networkx pytest pybind11 scikit-build-core torch tqdm matplotlib)

log() { printf '\n== %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PY="$ROOT/.venv/bin/python"
if [ ! -x "$PY" ]; then
  log "creating .venv"
  python3 -m venv "$ROOT/.venv"
fi
# Reinstall only when the package list changes (PyTorch's wheel is several GB: install it once).
stamp="$ROOT/.venv/.nodeweave-packages"
want="${PIP_PACKAGES[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing Python packages into .venv: $want"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q "${PIP_PACKAGES[@]}"
  echo "$want" > "$stamp"
fi

JOBS="$(nproc)"
PYBIND_DIR="$("$PY" -c 'import pybind11; print(pybind11.get_cmake_dir())')"
if [ ! -f build/build.ninja ]; then
  log "configuring build/"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython3_EXECUTABLE="$PY" -Dpybind11_DIR="$PYBIND_DIR"
fi
log "building (jobs: $JOBS)"
cmake --build build -j "$JOBS"

# nodeweave itself goes into .venv as an editable install: `import nodeweave` (and, once there are
# any, its console scripts) work in the venv without PYTHONPATH and follow the sources in python/.
# CMake above already wrote the extension into python/nodeweave, so pip builds nothing
# (wheel.cmake=false) and only writes the metadata and the import hook. Redone when pyproject.toml
# changes (entry points) or the checkout moves.
editable_stamp="$ROOT/.venv/.nodeweave-editable"
editable_want="$ROOT $(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
if [ ! -f "$editable_stamp" ] || [ "$(cat "$editable_stamp")" != "$editable_want" ]; then
  log "installing nodeweave into .venv (editable)"
  "$PY" -m pip install -q --no-build-isolation --no-deps -e "$ROOT" -Cwheel.cmake=false \
    -Ceditable.mode=inplace
  echo "$editable_want" > "$editable_stamp"
fi

export NODEWEAVE_ROOT="$ROOT"
if [ -z "${NODEWEAVE_DATA_DIR:-}" ] && [ -d "$ROOT/../shared/data" ]; then
  export NODEWEAVE_DATA_DIR="$(cd "$ROOT/../shared/data" && pwd)"
fi
