"""Helpers for the test_data_* files: the shared data directory, a local HTTP server, and a guard that
keeps tests from reaching any address but 127.0.0.1. (No tests here.)"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import socket
import threading
from pathlib import Path
from typing import Iterator

import pytest


def shared_data_dir() -> Path:
    """The shared read-only data copy named by NODEWEAVE_DATA_DIR (skip when it is not set)."""
    d = os.environ.get("NODEWEAVE_DATA_DIR")
    if not d or not (Path(d) / "SHA256SUMS").is_file():
        pytest.skip("NODEWEAVE_DATA_DIR does not point at the shared data copy")
    return Path(d)


@pytest.fixture
def shared() -> Path:
    return shared_data_dir()


@pytest.fixture
def offline(monkeypatch) -> list:
    """Refuses connections to anything but the loopback address; returns the refused (host, port)s."""
    refused: list = []
    real = socket.create_connection

    def guarded(address, *args, **kwargs):
        host = address[0]
        if host not in ("127.0.0.1", "localhost", "::1"):
            refused.append(address)
            raise OSError(f"test guard: no connection to {host} (tests stay offline)")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", guarded)
    monkeypatch.delenv("NODEWEAVE_DATA_MIRROR", raising=False)
    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)  # urllib would send even 127.0.0.1 requests to a proxy
    return refused


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        super().do_GET()


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[tuple[str, list]]:
    """Serves ``directory`` over HTTP on 127.0.0.1; yields (base URL, list of requested paths)."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(directory)))
    srv.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", srv.requests  # type: ignore[attr-defined]
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()


def copy_files(src_root: Path, dst_root: Path, rel_paths) -> None:
    """Copies ``rel_paths`` from ``src_root`` to ``dst_root`` (writable copies)."""
    for rel in rel_paths:
        dst = dst_root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src_root / rel, dst)


def leftovers(root: Path) -> list[str]:
    """Temporary download files left under ``root``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.part"))
