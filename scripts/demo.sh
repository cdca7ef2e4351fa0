#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job. Until the GCN example lands this is a
# 2-layer MLP trained with the native engine on a synthetic classification task.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

log "training a 2-layer MLP with the native engine"
"$PY" examples/mlp_synthetic.py "$@"
