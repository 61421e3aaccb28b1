"""Archive entries that would escape their directory are refused before extraction."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_plugin_sources._safety import check_tarball, check_wheel, unsafe_member_reason


@pytest.mark.parametrize(
    "name", ["../evil", "package/../../evil", "/etc/passwd", "C:/x", "a\\..\\..\\b", ""]
)
def test_escaping_names(name: str) -> None:
    assert unsafe_member_reason(name) is not None


@pytest.mark.parametrize("name", ["package/package.json", "package/a..b", "package/.hidden"])
def test_safe_names(name: str) -> None:
    assert unsafe_member_reason(name) is None


def _tarball(path: Path, *members: tarfile.TarInfo) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    return path


def _file(name: str) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.size = 1
    return member


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.linkname = target
    return member


def test_tarballs(tmp_path: Path) -> None:
    check_tarball(
        _tarball(tmp_path / "ok.tgz", _file("package/a"), _link("package/l", "a", tarfile.SYMTYPE))
    )
    bad = [
        _file("../evil"),
        _link("package/l", "../../etc/passwd", tarfile.SYMTYPE),
        _link("package/l", "/etc/passwd", tarfile.SYMTYPE),
        _link("package/h", "../outside", tarfile.LNKTYPE),
        _link("package/dev", "", tarfile.CHRTYPE),
    ]
    for index, member in enumerate(bad):
        with pytest.raises(InvalidParams, match="refusing"):
            check_tarball(_tarball(tmp_path / f"bad{index}.tgz", _file("package/a"), member))
    (tmp_path / "garbage.tgz").write_bytes(b"not a tarball")
    with pytest.raises(InvalidParams, match="cannot read"):
        check_tarball(tmp_path / "garbage.tgz")


def test_wheels(tmp_path: Path) -> None:
    good = tmp_path / "good.whl"
    with zipfile.ZipFile(good, "w") as archive:
        archive.writestr("pkg/__init__.py", "")
    check_wheel(good)
    bad = tmp_path / "bad.whl"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../../evil.py", "")
    with pytest.raises(InvalidParams, match="evil"):
        check_wheel(bad)
