"""The OpenMP spin default set at ``import nodeweave`` (python/nodeweave/__init__.py): 30000
rounds, or 3000 when the installed torch bundles its own libgomp (two runtimes then share the
cores); a user's GOMP_SPINCOUNT or OMP_WAIT_POLICY is left alone. Each case runs in a child
process, since libgomp reads the variable once, when it loads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_SHOW = "import os, nodeweave; print(os.environ.get('GOMP_SPINCOUNT'))"


def _spin_after_import(**env: str) -> str:
    child = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    child.update(env)
    r = subprocess.run([sys.executable, "-c", _SHOW], env=child, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_default_follows_the_installed_torch():
    import nodeweave

    assert _spin_after_import() == ("3000" if nodeweave._torch_bundles_libgomp() else "30000")


@pytest.mark.parametrize("env, want", [({"GOMP_SPINCOUNT": "123"}, "123"),
                                       ({"OMP_WAIT_POLICY": "PASSIVE"}, "None")])
def test_the_users_setting_wins(env, want):
    assert _spin_after_import(**env) == want
