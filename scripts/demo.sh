#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: a GCN trained on Cora (public Planetoid
# split) with the native engine; the last line is the test accuracy. Extra arguments go to
# examples/gcn.py (for example --runs 10 for the mean and spread over ten seeds).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

if [ -z "${NODEWEAVE_DATA_DIR:-}" ]; then
  echo "note: NODEWEAVE_DATA_DIR is not set and ../shared/data does not exist; Cora will be" \
       "downloaded to ~/.nodeweave/data" >&2
fi
log "training a GCN on Cora (examples/gcn.py)"
"$PY" examples/gcn.py --dataset cora "$@"
