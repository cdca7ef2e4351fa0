"""nodeweave.data downloads: data directory resolution, mirror hook, sha256 checks, archives, gzip
stand-ins, CRLF sources, download disabled. Every transfer goes to a server on 127.0.0.1 (the
``offline`` fixture refuses anything else)."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from nodeweave.data import (AIFBDataset, ChecksumError, ChecksumUnknownError, CoraGraphDataset, DBLPDataset,
                            DownloadError, NationsDataset, PubmedGraphDataset, TUDataset)
from nodeweave.data.download import RemoteFile, data_dir, download_url, fetch, mirror_url
from nodeweave.data.knowledge_graph import kg_files
from nodeweave.data.tu import tu_files

from test_data_support import copy_files, leftovers, offline, serve, shared  # noqa: F401

MUTAG = [f.path for f in tu_files("MUTAG")]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_data_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("NODEWEAVE_DATA_DIR", str(tmp_path / "env"))
    assert data_dir() == tmp_path / "env"
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"  # raw_dir wins over the environment
    monkeypatch.delenv("NODEWEAVE_DATA_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == tmp_path / "home" / ".nodeweave" / "data"
    with pytest.raises(TypeError, match="raw_dir must be a path"):
        data_dir(3)


def test_mirror_setting(monkeypatch):
    monkeypatch.delenv("NODEWEAVE_DATA_MIRROR", raising=False)
    assert mirror_url() is None
    monkeypatch.setenv("NODEWEAVE_DATA_MIRROR", "http://127.0.0.1:9/x/")
    assert mirror_url() == "http://127.0.0.1:9/x"
    assert mirror_url("https://cache.example/data") == "https://cache.example/data"  # argument wins
    with pytest.raises(ValueError, match="http:// or https://"):
        mirror_url("file:///etc")


def test_full_dataset_through_local_mirror(shared, offline, tmp_path):
    dest = tmp_path / "data"
    with serve(shared) as (base, requests):
        ds = TUDataset("MUTAG", raw_dir=dest, mirror=base, progress=False)
    assert sorted(requests) == sorted("/" + p for p in MUTAG)
    ref = TUDataset("MUTAG", raw_dir=shared, download=False)
    assert len(ds) == len(ref) == 188
    np.testing.assert_array_equal(ds.graph_labels, ref.graph_labels)
    g, g_ref = ds[5][0], ref[5][0]
    np.testing.assert_array_equal(g.ndata["feat"].numpy(), g_ref.ndata["feat"].numpy())
    for rel in MUTAG:
        assert sha(dest / rel) == sha(shared / rel)
    assert leftovers(dest) == [] and offline == []
    ds.verify_files()
    with serve(shared) as (base, requests):  # everything present now: nothing is fetched
        TUDataset("MUTAG", raw_dir=dest, mirror=base)
    assert requests == []


def test_mirror_from_environment_and_pickles(shared, offline, tmp_path, monkeypatch):
    with serve(shared) as (base, requests):
        monkeypatch.setenv("NODEWEAVE_DATA_MIRROR", base + "/")
        g = CoraGraphDataset(raw_dir=tmp_path, progress=False)[0]
    assert len(requests) == 8
    assert (g.num_nodes(), g.num_edges()) == (2708, 10556)


def test_checksum_mismatch_deletes_the_download(shared, offline, tmp_path):
    mirror = tmp_path / "mirror"
    copy_files(shared, mirror, MUTAG)
    bad = mirror / "tu/MUTAG/MUTAG_A.txt"
    bad.write_bytes(bad.read_bytes().replace(b"2, 1", b"2, 3", 1))  # one corrupted line
    dest = tmp_path / "data"
    with serve(mirror) as (base, _):
        with pytest.raises(ChecksumError) as info:
            TUDataset("MUTAG", raw_dir=dest, mirror=base, progress=False)
    msg = str(info.value)
    assert "MUTAG_A.txt" in msg and tu_files("MUTAG")[0].sha256 in msg and sha(bad) in msg
    assert info.value.expected == tu_files("MUTAG")[0].sha256 and info.value.actual == sha(bad)
    assert not (dest / "tu/MUTAG/MUTAG_A.txt").exists()
    assert leftovers(dest) == []


def test_download_disabled_names_file_and_url(tmp_path, offline):
    with pytest.raises(FileNotFoundError) as info:
        TUDataset("NCI1", raw_dir=tmp_path, download=False)
    msg = str(info.value)
    assert str(tmp_path / "tu/NCI1/NCI1_A.txt") in msg
    assert "https://www.chrsmrrs.com/graphkerneldatasets/NCI1.zip" in msg and "download=False" in msg
    assert offline == []


def test_canonical_sources_are_used_without_mirror(tmp_path, offline):
    # The guard refuses the connection, so nothing leaves the machine; the error names the URL tried.
    with pytest.raises(DownloadError, match=r"https://github.com/kimiyoung/planetoid/raw/master/data/ind\.cora\."):
        CoraGraphDataset(raw_dir=tmp_path, progress=False)
    assert offline and offline[0][0] == "github.com"
    assert leftovers(tmp_path) == []


def test_unknown_checksum_is_not_downloaded(tmp_path, offline):
    with pytest.raises(ChecksumUnknownError) as info:
        PubmedGraphDataset(raw_dir=tmp_path)
    msg = str(info.value)
    assert "ind.pubmed.x" in msg and "https://github.com/kimiyoung/planetoid/raw/master/data/ind.pubmed.x" in msg
    assert "verify=False" in msg
    assert offline == []  # refused before any connection


def test_file_without_public_url(tmp_path, offline):
    with pytest.raises(FileNotFoundError, match="no public download URL"):
        DBLPDataset(raw_dir=tmp_path)
    assert offline == []


def test_http_error_names_url(tmp_path, offline):
    empty = tmp_path / "empty"
    empty.mkdir()
    with serve(empty) as (base, _):
        with pytest.raises(DownloadError, match="HTTP 404") as info:
            TUDataset("MUTAG", raw_dir=tmp_path / "data", mirror=base, progress=False)
    assert f"{base}/tu/MUTAG/MUTAG_" in str(info.value)
    assert leftovers(tmp_path / "data") == []


def test_gzip_stand_in_from_mirror(shared, offline, tmp_path):
    mirror = tmp_path / "mirror"
    copy_files(shared, mirror, ["kg/small/nations/valid.txt", "kg/small/nations/test.txt"])
    (mirror / "kg/small/nations/train.txt.gz").write_bytes(
        gzip.compress((shared / "kg/small/nations/train.txt").read_bytes()))
    dest = tmp_path / "data"
    with serve(mirror) as (base, requests):
        ds = NationsDataset(raw_dir=dest, mirror=base, progress=False)
    assert "/kg/small/nations/train.txt" in requests and "/kg/small/nations/train.txt.gz" in requests
    assert (dest / "kg/small/nations/train.txt.gz").is_file() and not (dest / "kg/small/nations/train.txt").exists()
    ref = NationsDataset(raw_dir=shared, download=False)
    np.testing.assert_array_equal(ds.train, ref.train)
    ds.verify_files()  # the .gz stand-in verifies against the plain file's sha256


def test_gzip_stand_in_with_wrong_content(shared, offline, tmp_path):
    mirror = tmp_path / "mirror"
    copy_files(shared, mirror, ["kg/small/nations/valid.txt", "kg/small/nations/test.txt"])
    (mirror / "kg/small/nations/train.txt.gz").write_bytes(gzip.compress(b"a\tb\tc\n"))
    with serve(mirror) as (base, _):
        with pytest.raises(ChecksumError, match="train.txt.gz"):
            NationsDataset(raw_dir=tmp_path / "data", mirror=base, progress=False)


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tgz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archive_members_are_extracted_and_verified(shared, offline, tmp_path):
    # Upstream serves each TU set as a zip: serve one built from the shared files.
    site = tmp_path / "site"
    site.mkdir()
    members = {f"MUTAG/{Path(p).name}": (shared / p).read_bytes() for p in MUTAG}
    members["MUTAG/README.txt"] = b"not needed"
    (site / "MUTAG.zip").write_bytes(_zip(members))
    dest = tmp_path / "data"
    with serve(site) as (base, requests):
        files = [dataclasses.replace(f, url=f"{base}/MUTAG.zip") for f in tu_files("MUTAG")]
        fetch(files, dest, progress=False)
    assert requests == ["/MUTAG.zip"]  # one download for all members
    for rel in MUTAG:
        assert sha(dest / rel) == sha(shared / rel)
    assert not (dest / "tu/MUTAG/README.txt").exists() and leftovers(dest) == []
    assert len(TUDataset("MUTAG", raw_dir=dest, download=False)) == 188


def test_tar_archive_with_other_top_folder(shared, offline, tmp_path):
    # ConvE's tarballs: members are matched by file name whatever folder they sit in.
    site = tmp_path / "site"
    site.mkdir()
    (site / "nations.tar.gz").write_bytes(_tgz({f"./{s}.txt": (shared / f"kg/small/nations/{s}.txt").read_bytes()
                                                for s in ("train", "valid", "test")}))
    dest = tmp_path / "data"
    with serve(site) as (base, _):
        fetch([dataclasses.replace(f, url=f"{base}/nations.tar.gz") for f in kg_files("nations")], dest, progress=False)
    assert NationsDataset(raw_dir=dest, download=False).train.shape == (1592, 3)


def test_corrupt_archive_member(shared, offline, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    members = {f"MUTAG/{Path(p).name}": (shared / p).read_bytes() for p in MUTAG}
    members["MUTAG/MUTAG_graph_labels.txt"] = b"1\n" * 188
    (site / "MUTAG.zip").write_bytes(_zip(members))
    dest = tmp_path / "data"
    with serve(site) as (base, _):
        with pytest.raises(ChecksumError, match=r"MUTAG_graph_labels\.txt inside http://127\.0\.0\.1"):
            fetch([dataclasses.replace(f, url=f"{base}/MUTAG.zip") for f in tu_files("MUTAG")], dest, progress=False)
    assert not (dest / "tu/MUTAG/MUTAG_graph_labels.txt").exists() and leftovers(dest) == []


def test_archive_without_the_member(offline, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "MUTAG.zip").write_bytes(_zip({"other.txt": b"x"}))
    with serve(site) as (base, _):
        with pytest.raises(DownloadError, match="has no member 'MUTAG/MUTAG_A.txt'"):
            fetch([dataclasses.replace(tu_files("MUTAG")[0], url=f"{base}/MUTAG.zip")], tmp_path / "d", progress=False)
    assert leftovers(tmp_path / "d") == []


def test_crlf_source_is_normalized(shared, offline, tmp_path):
    # relational-gcn serves the AIFB split files with CRLF line ends; the recorded sha256 is of LF text.
    site = tmp_path / "site"
    site.mkdir()
    lf = (shared / "rgcn_entities/AIFB/testSet.tsv").read_bytes()
    (site / "testSet.tsv").write_bytes(lf.replace(b"\n", b"\r\n"))
    spec = AIFBDataset.files[2]
    assert spec.newline_lf
    with serve(site) as (base, _):
        out = download_url(f"{base}/testSet.tsv", tmp_path / "d" / "testSet.tsv", spec.sha256, newline_lf=True,
                           progress=False)
    assert out.read_bytes() == lf


def test_remote_file_sources_are_described():
    f = RemoteFile("a/b.txt", None, "https://x.org/b.zip", member="B/b.txt")
    assert f.source() == "B/b.txt inside https://x.org/b.zip"
    assert "no public download URL" in RemoteFile("a", None, None).source()


def test_downloads_work_without_tqdm(shared, offline, tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails: tqdm is optional
    with serve(shared) as (base, _):
        ds = NationsDataset(raw_dir=tmp_path, mirror=base, progress=True)
    assert ds.train.shape == (1592, 3)
