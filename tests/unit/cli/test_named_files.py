"""Every file a user names is checked (a regular file, within a size limit) before it is read,
through the real command (issue 27, items 6d and 6e): ``--image /dev/zero`` once never
returned, and a deeply nested ``--output-schema`` ended in "unexpected RecursionError"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import RunPaseo

# No daemon runs: each check comes before the CLI connects, so a refusal is the only answer.
CASES = [
    ("run", "--image", "{file}", "hello"),
    ("run", "--output-schema", "{file}", "hello"),
    ("send", "some-agent", "--prompt-file", "{file}"),
    ("send", "some-agent", "--image", "{file}", "hello"),
    ("speech", "transcribe", "{file}"),
    ("dictate", "{file}"),
    ("project", "icon", "some-project", "{file}"),
]


def _argv(case: tuple[str, ...], file: str) -> list[str]:
    return [word.replace("{file}", file) for word in case]


@pytest.mark.parametrize("case", CASES, ids=lambda case: " ".join(case[:3]))
def test_a_device_is_refused_before_it_is_read(run_paseo: RunPaseo, case: tuple[str, ...]) -> None:
    result = run_paseo(*_argv(case, "/dev/zero"), timeout=30)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "/dev/zero: not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_fifo_nobody_writes_is_refused_not_waited_on(run_paseo: RunPaseo, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_paseo("run", "--image", str(fifo), "hello", timeout=30)
    assert result.returncode == 2
    assert f"{fifo}: not a regular file" in result.stderr
    result = run_paseo("run", "--image", str(tmp_path), "hello", timeout=30)
    assert (result.returncode, f"{tmp_path}: a directory" in result.stderr) == (2, True)


def test_a_file_over_the_limit_is_refused_unread(run_paseo: RunPaseo, tmp_path: Path) -> None:
    big = tmp_path / "prompt.txt"
    with open(big, "wb") as handle:
        handle.truncate(2 * 1024 * 1024)  # sparse: the size is what counts
    result = run_paseo("send", "some-agent", "--prompt-file", str(big), timeout=30)
    assert result.returncode == 2
    expected = "2097152 bytes (2.00 MiB), more than the 1048576 bytes (1.00 MiB) allowed"
    assert expected in result.stderr
    image = tmp_path / "huge.png"
    with open(image, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n")
        handle.truncate(1 << 30)
    result = run_paseo("run", "--image", str(image), "hello", timeout=30)
    assert result.returncode == 2
    assert "more than the" in result.stderr


def test_a_deeply_nested_output_schema_is_refused_like_config(
    run_paseo: RunPaseo, tmp_path: Path
) -> None:
    deep = tmp_path / "schema.json"
    deep.write_text('{"items": ' * 10_000 + "{}" + "}" * 10_000)
    for value in (str(deep), deep.read_text()):
        result = run_paseo("run", "--output-schema", value, "hello", timeout=30)
        assert result.returncode == 2, result.stderr
        assert "nested deeper than 64 levels" in result.stderr
        assert "RecursionError" not in result.stderr
