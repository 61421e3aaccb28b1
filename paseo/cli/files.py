"""Reading a file the user named on the command line, safely.

``--image /dev/zero`` once never returned: a device, a FIFO or a file the size of the disk is
read to the end before anything looks at it. Every file a command reads whole (``--image``,
``--prompt-file``, ``--output-schema``, a project icon, audio to transcribe) goes through
:func:`read_named_file`: it must be a regular file no larger than the command's limit, and
the read is bounded by that limit too (a file that grows while it is read is refused, not
followed). A file that is not there or cannot be opened exits 1, as before; naming something
that is not a regular file, or too large, is a usage error (exit 2). Files that are streamed
(``dictate``, ``voice``) are checked with :func:`open_named_file` (regular file only; they are
read in bounded chunks).
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from paseo.cli.errors import EXIT_FAILURE, EXIT_USAGE, CliError

MIB = 1024 * 1024


def _size_text(size: int) -> str:
    return f"{size} bytes" if size < MIB else f"{size} bytes ({size / MIB:.2f} MiB)"


def open_named_file(path: str, *, what: str) -> BinaryIO:
    """``path`` opened for reading in binary, refused unless it is a regular file.

    Opened non-blocking, so a FIFO nobody writes to cannot hang the open itself."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise CliError(
            f"{what} {path}: cannot read: {exc.strerror or exc}", exit_code=EXIT_FAILURE
        ) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise CliError(f"{what} {path}: {kind}", exit_code=EXIT_USAGE)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_named_file(path: str, *, what: str, limit: int, advice: str = "") -> bytes:
    """The bytes of ``path``: a regular file of at most ``limit`` bytes (``what`` names it in
    messages, e.g. ``--image``; ``advice`` is added to the too-large one)."""
    with open_named_file(path, what=what) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise CliError(
                f"{what} {path}: {_size_text(size)}, more than the {_size_text(limit)} "
                f"allowed{advice}",
                exit_code=EXIT_USAGE,
            )
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise CliError(
                f"{what} {path}: cannot read: {exc.strerror or exc}", exit_code=EXIT_FAILURE
            ) from None
    if len(data) > limit:
        raise CliError(
            f"{what} {path}: grew past the {_size_text(limit)} allowed while being read",
            exit_code=EXIT_USAGE,
        )
    return data


def read_named_text(path: str, *, what: str, limit: int) -> str:
    """:func:`read_named_file` decoded as UTF-8."""
    data = read_named_file(path, what=what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{what} {path}: not UTF-8 text", exit_code=EXIT_USAGE) from None
