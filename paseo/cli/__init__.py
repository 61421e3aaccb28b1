"""The ``paseo`` command.

Start-up cost matters here: ``paseo --help`` and ``paseo --version`` are answered from static
text without importing argparse, a plugin or any third-party library. Every other command
imports only the module of the command group it names (see :mod:`paseo.cli.app`).
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # typeshed has no stub for it
import os
import sys

from paseo import __version__
from paseo.cli.catalog import COMMANDS, render_help

# Not typing.TYPE_CHECKING: importing typing is a third of `paseo --version`'s own cost.
# mypy treats any constant of this name as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = sys.argv[1:] if argv is None else argv
    if not args or (args[0] in ("-h", "--help", "help") and len(args) == 1):
        sys.stdout.write(render_help())
        return 0
    if args[0] in ("-V", "--version") and len(args) == 1:
        sys.stdout.write(f"paseo {__version__}\n")
        return 0
    from paseo.cli.app import run

    return run(args)


_skip_teardown = False


def exit_without_teardown() -> None:
    """Have :func:`entry` end the process as soon as the command returns, skipping the
    interpreter's teardown (for ``daemon start``, whose work continues in the forked daemon)."""
    global _skip_teardown
    _skip_teardown = True


def entry() -> NoReturn:
    """The ``paseo`` program: run :func:`main` on ``sys.argv`` and exit with its code."""
    # Until a command is ready to handle Ctrl-C (paseo.cli.app restores Python's handler just
    # before running it), Ctrl-C ends the process as SIGINT does any program: no
    # KeyboardInterrupt traceback from the middle of an import.
    # _signal: the module signal wraps (signal's own import builds its enums, a cost here).
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    try:
        code = main()
        sys.stdout.flush()
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        # The reader went away (`paseo ls | head`): end quietly, as other Unix tools do.
        from paseo.cli.errors import EXIT_BROKEN_PIPE, silence_stdout

        silence_stdout()
        code = EXIT_BROKEN_PIPE
    if _skip_teardown:
        import contextlib

        for stream in (sys.stdout, sys.stderr):
            # A closed or broken stream: nothing more can be said on it.
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    sys.exit(code)


__all__ = ["COMMANDS", "entry", "exit_without_teardown", "main"]
