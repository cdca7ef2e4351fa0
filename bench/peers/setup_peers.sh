#!/usr/bin/env bash
# Creates bench/.venv-peers: a virtual environment of its own (never the project's .venv) holding
# DGL, PyTorch Geometric and the one PyTorch build that DGL's PyPI wheel works with, so that DGL,
# PyG and both nodeweave backends are timed against the same torch.
#
# Idempotent: the package list is written to a stamp file after a successful install; a second run
# with the same list skips pip and only re-checks the imports (a few seconds).
#
# Writes bench/peers/versions.json (installed versions, which peers import) and says plainly on
# stdout when a peer cannot be installed or imported; the benchmark then runs without it.
#
# Usage: bash bench/peers/setup_peers.sh [--force]
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$ROOT/bench/.venv-peers"
PY="$VENV/bin/python"

# DGL: PyPI's newest dgl is 2.2.1, but for Linux x86_64 / CPython 3.11 the newest wheel there is 2.1.0
# (a CPU build). Its graphbolt and dgl_sparse C++ libraries are compiled per torch version
# (libgraphbolt_pytorch_<ver>.so) and 2.1.0 ships them for torch 2.0.0 ... 2.2.1, so torch is pinned
# to 2.2.1, the newest one DGL can load. torch 2.2 was compiled against NumPy 1.x, hence numpy<2.
# dgl.graphbolt imports torchdata.datapipes (removed in torchdata 0.9); 0.7.1 is the release of the
# torch 2.1/2.2 era.
# These pins go to every pip call as constraints, so that no later install swaps torch or NumPy.
PINS=(torch==2.2.1 "numpy<2")
BASE_PACKAGES=(torch numpy scipy matplotlib networkx)
DGL_PACKAGES=(dgl==2.1.0 torchdata==0.7.1 pydantic pyyaml packaging psutil requests tqdm pandas)
PYG_PACKAGES=(torch_geometric)

log() { printf '\n== %s\n' "$*"; }

if [ "${1:-}" = "--force" ]; then rm -f "$VENV/.peers-packages"; fi

if [ ! -x "$PY" ]; then
  log "creating $VENV"
  if ! python3 -m venv "$VENV"; then
    echo "ERROR: python3 -m venv failed (apt-get install python3-venv?)"; exit 1
  fi
fi

stamp="$VENV/.peers-packages"
want="${PINS[*]} ${BASE_PACKAGES[*]} ${DGL_PACKAGES[*]} ${PYG_PACKAGES[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing into bench/.venv-peers: $want  (torch's wheel is several GB: the first run takes a while)"
  "$PY" -m pip install -q --upgrade pip
  constraints="$VENV/peers-constraints.txt"
  printf '%s\n' "${PINS[@]}" > "$constraints"
  pip_install() { "$PY" -m pip install -q -c "$constraints" "$@"; }
  ok=1
  if ! pip_install "${BASE_PACKAGES[@]}"; then
    echo "ERROR: could not install torch / numpy / scipy / matplotlib: no peer can run"; exit 1
  fi
  # Each peer is installed on its own so that one that fails does not take the other down.
  if ! pip_install "${DGL_PACKAGES[@]}"; then
    echo "PEER NOT INSTALLED: DGL (pip install ${DGL_PACKAGES[*]} failed); the benchmark runs without it"
    ok=0
  fi
  if ! pip_install "${PYG_PACKAGES[@]}"; then
    echo "PEER NOT INSTALLED: PyG (pip install ${PYG_PACKAGES[*]} failed); the benchmark runs without it"
    ok=0
  fi
  # Only a complete install is stamped: a partial one is retried next time.
  if [ "$ok" = 1 ]; then echo "$want" > "$stamp"; fi
fi

log "checking the peers (a tiny DGL copy_u_sum and a PyG GCNConv forward)"
"$PY" "$HERE/check_peers.py" --root "$ROOT" --out "$HERE/versions.json"
