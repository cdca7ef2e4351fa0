"""Getting a dataset's raw files into the data directory: where they live, where they come from,
how they are fetched and checked.

**Data directory.** ``raw_dir=`` given to a dataset, else the environment variable
``NODEWEAVE_DATA_DIR``, else ``~/.nodeweave/data``. Inside, every file sits at a fixed relative path
(:attr:`RemoteFile.path`, e.g. ``planetoid/raw/ind.cora.x`` or ``tu/MUTAG/MUTAG_A.txt``); a directory
holding that layout (a shared read-only copy, say) can be used as is and nothing is written to it.

**Sources.** Each file records its canonical public URL and the sha256 of its content. A file that
upstream ships only inside an archive (the TU zips, the ConvE tarballs) names the archive URL and the
member; archives change (their timestamps, their compression) while the members do not, so the
archive itself is not checked, each extracted member is.

**Mirror.** ``mirror=`` given to a dataset, else ``NODEWEAVE_DATA_MIRROR``: a base URL serving the
data-directory layout (``{mirror}/tu/MUTAG/MUTAG_A.txt``). When set, it replaces the canonical
sources entirely (no fallback to the internet): use it for an institute cache or an air-gapped copy,
and in tests for a server on 127.0.0.1. A mirror may serve a text file gzip-compressed under
``path + ".gz"`` where :attr:`RemoteFile.gzip_ok` says so; its checksum is that of the decompressed
content, so either form verifies against the same sha256.

**Fetching.** ``urllib`` into a temporary file beside the target, progress shown with tqdm, sha256
verified, then an atomic rename: an interrupted or corrupt download never leaves a file under the
final name. A checksum mismatch deletes the temporary file and raises :class:`ChecksumError` naming
the file, the expected and the actual hash.

>>> import os, tempfile
>>> from nodeweave.data.download import RemoteFile, data_dir, missing_files
>>> root = data_dir(tempfile.mkdtemp())
>>> f = RemoteFile("toy/edges.txt", sha256=None, url="https://example.org/edges.txt")
>>> [m.path for m in missing_files([f], root)]
['toy/edges.txt']
>>> _ = (root / "toy").mkdir(); _ = (root / "toy" / "edges.txt").write_text("0 1\\n")
>>> missing_files([f], root)
[]
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import urllib.parse
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from nodeweave.data.errors import ChecksumError, ChecksumUnknownError, DataFormatError, DownloadError
from nodeweave import errors as nwerr

__all__ = ["RemoteFile", "data_dir", "mirror_url", "locate", "missing_files", "ensure_files", "fetch",
           "download_url", "file_sha256", "DEFAULT_DATA_DIR"]

DEFAULT_DATA_DIR = "~/.nodeweave/data"
_CHUNK = 1 << 20
_TIMEOUT_S = 60


@dataclass(frozen=True)
class RemoteFile:
    """One raw file of a dataset.

    Attributes
    ----------
    path : str
        Relative path inside the data directory, ``/``-separated; also the path under a mirror.
    sha256 : str or None
        Hex sha256 of the file's content (decompressed for a ``.gz`` stand-in, LF line ends when
        ``newline_lf``). None when no checksum is recorded: such a file is only downloaded with
        ``verify=False``.
    url : str or None
        Canonical public source; None when no public source is known (mirror or local copy only).
    member : str or None
        When ``url`` is an archive (zip or tar): the member holding this file. A member whose name
        ends with ``/`` + the file name is accepted too (archives differ in their top folder).
    gzip_ok : bool
        A gzip-compressed copy at ``path + '.gz'`` may stand in for the file.
    newline_lf : bool
        Upstream serves the file with CRLF line ends; they are converted to LF on download (the
        checksum is of the LF text).
    """

    path: str
    sha256: str | None
    url: str | None
    member: str | None = None
    gzip_ok: bool = False
    newline_lf: bool = False

    def source(self) -> str:
        """The canonical source in words: the URL, or ``member of URL``."""
        if self.url is None:
            return "no public download URL is recorded (use a mirror or a local copy)"
        return f"{self.member} inside {self.url}" if self.member else self.url


def data_dir(raw_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``raw_dir``, else ``$NODEWEAVE_DATA_DIR``, else ``~/.nodeweave/data``.

    >>> import os
    >>> from nodeweave.data.download import data_dir
    >>> str(data_dir("/tmp/nwdata"))
    '/tmp/nwdata'
    """
    if raw_dir is None:
        raw_dir = os.environ.get("NODEWEAVE_DATA_DIR") or DEFAULT_DATA_DIR
    if not isinstance(raw_dir, (str, os.PathLike)):
        raise nwerr.TypeError(f"raw_dir must be a path, got {type(raw_dir).__name__}")
    return Path(os.path.expanduser(os.fspath(raw_dir)))


def mirror_url(mirror: str | None = None) -> str | None:
    """The mirror base URL: ``mirror``, else ``$NODEWEAVE_DATA_MIRROR``, else None (canonical sources).

    >>> from nodeweave.data.download import mirror_url
    >>> mirror_url("http://127.0.0.1:8000/data/")
    'http://127.0.0.1:8000/data'
    >>> mirror_url("ftp://host/")
    Traceback (most recent call last):
    ...
    nodeweave.errors.ValueError: mirror must be an http:// or https:// URL, got 'ftp://host/'
    """
    if mirror is None:
        mirror = os.environ.get("NODEWEAVE_DATA_MIRROR") or None
    if mirror is None:
        return None
    if not isinstance(mirror, str) or urllib.parse.urlsplit(mirror).scheme not in ("http", "https"):
        raise nwerr.ValueError(f"mirror must be an http:// or https:// URL, got {mirror!r}")
    return mirror.rstrip("/")


def locate(root: Path, f: RemoteFile) -> Path | None:
    """Where ``f`` is under ``root``: its path, or its ``.gz`` stand-in, or None when absent."""
    p = root / f.path
    if p.is_file():
        return p
    if f.gzip_ok:
        gz = p.with_name(p.name + ".gz")
        if gz.is_file():
            return gz
    return None


def missing_files(files: Iterable[RemoteFile], root: Path) -> list[RemoteFile]:
    """The files of ``files`` not present under ``root``."""
    return [f for f in files if locate(root, f) is None]


def file_sha256(path: str | os.PathLike, gunzip: bool = False) -> str:
    """Hex sha256 of a file's bytes, or of its decompressed content with ``gunzip=True``.

    A truncated or corrupt gzip stream raises :class:`DataFormatError` naming the file.
    """
    h = hashlib.sha256()
    try:
        with (gzip.open(path, "rb") if gunzip else open(path, "rb")) as fh:
            while True:
                block = fh.read(_CHUNK)
                if not block:
                    break
                h.update(block)
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise DataFormatError(path, f"truncated or corrupt gzip data ({e})") from None
    return h.hexdigest()


def ensure_files(files: Sequence[RemoteFile], root: Path, *, download: bool = True, mirror: str | None = None,
                 verify: bool = True, progress: bool | None = None, owner: str = "dataset") -> None:
    """Makes sure every file of ``files`` is under ``root``, downloading the missing ones.

    Raises
    ------
    FileNotFoundError
        With ``download=False``, naming every missing file and its source.
    ChecksumUnknownError
        A missing file has no recorded sha256 and ``verify`` is true.
    ChecksumError
        From :func:`fetch`.
    DownloadError
        From :func:`fetch`, its message extended with every missing file (where it belongs and
        where it comes from), so that the files can be put there by hand.
    """
    missing = missing_files(files, root)
    if not missing:
        return
    if not download:
        lines = [f"  {root / f.path}  <-  {f.source()}" for f in missing]
        raise nwerr.FileNotFoundError(f"{owner}: {len(missing)} raw file(s) missing and download=False:\n"
                                      + "\n".join(lines)
                                      + "\nPut them there, set NODEWEAVE_DATA_DIR to a directory holding them, "
                                  "or pass download=True.")
    base = mirror_url(mirror)
    unknown = [f for f in missing if f.sha256 is None]
    if unknown and verify:
        lines = [f"  {root / f.path}  <-  {f.source()}" for f in unknown]
        raise ChecksumUnknownError(
            f"{owner}: no sha256 is recorded for these missing files, so a download could not be verified:\n"
            + "\n".join(lines) + "\nDownload them yourself into the data directory, or pass verify=False "
            "to download them unverified.")
    unreachable = [f for f in missing if base is None and f.url is None]
    if unreachable:
        lines = [f"  {root / f.path}" for f in unreachable]
        raise nwerr.FileNotFoundError(f"{owner}: these raw files are missing and have no public download URL:\n"
                                      + "\n".join(lines) + "\nPut them there or set NODEWEAVE_DATA_MIRROR to a "
                                      "mirror of the data-directory layout.")
    try:
        fetch(missing, root, mirror=base, progress=progress)
    except DownloadError as e:
        # The failing URL alone does not tell a user offline what to fetch by hand, nor where to put it.
        lines = [f"  {root / f.path}  <-  {f.source()}" for f in missing_files(files, root)]
        raise DownloadError(f"{owner}: {e}\nThe raw files still missing under {root}:\n" + "\n".join(lines)
                            + "\nPut them there, or set NODEWEAVE_DATA_DIR to a directory holding them.",
                            status=e.status) from None


def fetch(files: Sequence[RemoteFile], root: Path, *, mirror: str | None = None,
          progress: bool | None = None) -> None:
    """Downloads ``files`` into ``root`` from ``mirror`` (a base URL) or from their canonical sources,
    checking each sha256 that is recorded."""
    if mirror is not None:
        for f in files:
            _fetch_from_mirror(f, root, mirror, progress)
        return
    by_archive: dict[str, list[RemoteFile]] = {}
    for f in files:
        if f.member:
            by_archive.setdefault(f.url, []).append(f)
        else:
            download_url(f.url, root / f.path, f.sha256, newline_lf=f.newline_lf, progress=progress)
    for url, members in by_archive.items():
        _fetch_from_archive(url, members, root, progress)


def _fetch_from_mirror(f: RemoteFile, root: Path, base: str, progress: bool | None) -> None:
    dest = root / f.path
    url = f"{base}/{urllib.parse.quote(f.path)}"
    try:
        download_url(url, dest, f.sha256, newline_lf=f.newline_lf, progress=progress)
    except DownloadError as e:
        if not (f.gzip_ok and e.status == 404):
            raise
        download_url(url + ".gz", dest.with_name(dest.name + ".gz"), f.sha256, gunzip_check=True,
                     progress=progress)


def _open_url(url: str):
    # urllib.request, zipfile and tarfile are imported where used: `import nodeweave` stays light
    import urllib.error
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise DownloadError(f"refusing to download {url!r}: only http:// and https:// URLs are fetched")
    req = urllib.request.Request(url, headers={"User-Agent": "nodeweave-data"})
    # a proxy cannot reach this machine's loopback mirror: talk to it directly
    opener = (urllib.request.build_opener(urllib.request.ProxyHandler({}))
              if parts.hostname in ("127.0.0.1", "localhost", "::1") else urllib.request.build_opener())
    try:
        return opener.open(req, timeout=_TIMEOUT_S)
    except urllib.error.HTTPError as e:
        raise DownloadError(f"downloading {url} failed: HTTP {e.code} {e.reason}", status=e.code) from None
    except (urllib.error.URLError, OSError) as e:
        raise DownloadError(f"downloading {url} failed: {getattr(e, 'reason', e)}") from None


class _NoBar:
    """Stands in for a tqdm bar when tqdm is not installed (it is optional)."""

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def update(self, n: int) -> None:
        pass


def _progress_bar(total: int | None, desc: str, progress: bool | None):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    # disable=None: show the bar on a terminal only, keep logs and CI output clean
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False,
                disable=None if progress is None else not progress)


def _stream_to(resp, fh, desc: str, progress: bool | None, url: str) -> None:
    length = resp.headers.get("Content-Length")
    total = int(length) if length and length.isdigit() else None
    got = 0
    with _progress_bar(total, desc, progress) as bar:
        while True:
            try:
                block = resp.read(_CHUNK)
            except OSError as e:
                raise DownloadError(f"downloading {url} failed after {got} bytes: {e}") from None
            if not block:
                break
            fh.write(block)
            got += len(block)
            bar.update(len(block))
    if total is not None and got != total:
        raise DownloadError(f"downloading {url} failed: got {got} of {total} bytes (connection cut?)")


def _temp_beside(dest: Path):
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    return os.fdopen(fd, "wb"), Path(tmp)


def _finish(tmp: Path, dest: Path, sha256: str | None, source: str, *, newline_lf: bool = False,
            gunzip_check: bool = False) -> None:
    """Normalizes, verifies and renames a complete temporary file into place (deleting it on failure)."""
    try:
        if newline_lf:
            data = tmp.read_bytes().replace(b"\r\n", b"\n")
            tmp.write_bytes(data)
        if sha256 is not None:
            actual = file_sha256(tmp, gunzip=gunzip_check)
            if actual != sha256.lower():
                raise ChecksumError(dest, source, sha256.lower(), actual)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()


def download_url(url: str, dest: str | os.PathLike, sha256: str | None, *, newline_lf: bool = False,
                 gunzip_check: bool = False, progress: bool | None = None) -> Path:
    """Downloads ``url`` to ``dest`` through a temporary file, verifying ``sha256`` (when not None)
    before the atomic rename. ``gunzip_check``: the checksum is of the decompressed content.

    Raises
    ------
    ChecksumError
        The content's sha256 differs (the temporary file is deleted, ``dest`` is untouched).
    DownloadError
        The URL could not be fetched or the transfer was cut short.
    """
    dest = Path(dest)
    fh, tmp = _temp_beside(dest)
    try:
        with fh, _open_url(url) as resp:
            _stream_to(resp, fh, dest.name, progress, url)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _finish(tmp, dest, sha256, url, newline_lf=newline_lf, gunzip_check=gunzip_check)
    return dest


def _open_archive(archive: Path, url: str):
    """The opened zip or tar archive and ``{member name: info}`` for its regular files."""
    import tarfile
    import zipfile

    if zipfile.is_zipfile(archive):
        zf = zipfile.ZipFile(archive)
        return zf, {i.filename: i for i in zf.infolist() if not i.is_dir()}
    try:
        tf = tarfile.open(archive, "r:*")
    except tarfile.TarError as e:
        raise DownloadError(f"{url} is neither a zip nor a tar archive ({e})") from None
    return tf, {m.name[2:] if m.name.startswith("./") else m.name: m
                for m in tf.getmembers() if m.isfile()}


def _read_member(arc, info, url: str, name: str):
    import tarfile
    import zipfile

    try:
        if isinstance(arc, zipfile.ZipFile):
            return arc.open(info)
        fh = arc.extractfile(info)
        if fh is None:
            raise DownloadError(f"{url}: member {name} is not a regular file")
        return fh
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as e:
        raise DownloadError(f"{url}: cannot read member {name}: {e}") from None


def _pick_member(members: dict, wanted: str, url: str) -> str:
    if wanted in members:
        return wanted
    base = wanted.rsplit("/", 1)[-1]
    hits = [m for m in members if m == base or m.endswith("/" + base)]
    if len(hits) == 1:
        return hits[0]
    what = "no member" if not hits else f"several members ({', '.join(sorted(hits))}) for"
    raise DownloadError(f"{url} has {what} {wanted!r}")


def _fetch_from_archive(url: str, files: list[RemoteFile], root: Path, progress: bool | None) -> None:
    # The archive's own checksum is not known (upstream rebuilds archives); every member we keep is
    # verified against its recorded sha256 below.
    fh, tmp_archive = _temp_beside(root / files[0].path)
    try:
        with fh, _open_url(url) as resp:
            _stream_to(resp, fh, url.rsplit("/", 1)[-1], progress, url)
        arc, members = _open_archive(tmp_archive, url)
        with arc:
            for f in files:
                name = _pick_member(members, f.member, url)
                dest = root / f.path
                out, tmp = _temp_beside(dest)
                try:
                    with out, _read_member(arc, members[name], url, name) as src:
                        while True:
                            block = src.read(_CHUNK)
                            if not block:
                                break
                            out.write(block)
                except BaseException:
                    tmp.unlink(missing_ok=True)
                    raise
                _finish(tmp, dest, f.sha256, f"{name} inside {url}", newline_lf=f.newline_lf)
    finally:
        tmp_archive.unlink(missing_ok=True)
