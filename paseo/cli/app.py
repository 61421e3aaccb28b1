"""Argument parsing and dispatch for every command except the static ``--help``/``--version``.

Only the module of the command group being run is imported. Global options (``-o``, ``--json``,
``-q``, ``--no-headers``, ``--home``) are accepted before or after the command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from paseo import __version__
from paseo.cli.catalog import COMMANDS
from paseo.cli.errors import EXIT_BROKEN_PIPE, EXIT_BUDGET, EXIT_USAGE, CliError, silence_stdout

if TYPE_CHECKING:
    import logging
    from importlib.machinery import ModuleSpec
    from types import ModuleType


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # Sub-parsers use SUPPRESS defaults so an option given before the command is not reset by
    # the sub-parser's default.
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    group = parser.add_argument_group("global options")
    group.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "yaml"),
        default=default("table"),
        help="output format",
    )
    group.add_argument(
        "--json",
        dest="output",
        action="store_const",
        const="json",
        default=default("table"),
        help="same as -o json",
    )
    group.add_argument(
        "-q", "--quiet", action="store_true", default=default(False), help="print ids only"
    )
    group.add_argument(
        "--no-headers",
        dest="no_headers",
        action="store_true",
        default=default(False),
        help="omit table headers",
    )
    group.add_argument(
        "--home", default=default(None), help="state root (default: $PASEO_HOME or ~/.paseo)"
    )


def _add_global_options_everywhere(parser: argparse.ArgumentParser) -> None:
    """Global options on a command parser and every sub-command parser below it, so
    ``paseo daemon status -o json`` works as well as ``paseo -o json daemon status``."""
    _add_global_options(parser, suppress=True)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _add_global_options_everywhere(child)


def _global_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    _add_global_options(parser, suppress=False)
    return parser


def _find_command(argv: list[str]) -> str | None:
    """The first token that is not a global option (or its value)."""
    words = _words(argv)
    return words[0] if words else None


def _words(argv: list[str]) -> list[str]:
    """The tokens that are neither global options nor their values, nor other options."""
    _, rest = _global_parser().parse_known_args(argv)
    return [token for token in rest if not token.startswith("-")]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's signature is NoReturn
        self.print_usage(sys.stderr)
        raise CliError(message, exit_code=EXIT_USAGE)


def build_parser(command: str | None, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser with every group listed and only ``command`` configured (with the
    sub-commands plugins add to it when ``argv`` names one the kernel does not know)."""
    parser = _Parser(prog="paseo", description="Paseo supervises AI coding agents.")
    parser.add_argument("-V", "--version", action="version", version=f"paseo {__version__}")
    _add_global_options(parser, suppress=False)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    configured = False
    for name, (summary, module_name) in _listed(command, argv).items():
        sub = subparsers.add_parser(name, help=summary, description=summary)
        if name == command:
            # ``module`` or ``module:function`` (an alias configured by another group's code).
            module_path, _, function = module_name.partition(":")
            module = importlib.import_module(f"paseo.cli.commands.{module_path}")
            getattr(module, function or "configure")(sub)
            if argv:
                _add_plugin_subcommands(sub, name, argv)
            _add_global_options_everywhere(sub)
            configured = True
    if command is not None and not configured:
        group = _plugin_group(command)
        if group is not None:
            sub = subparsers.add_parser(group.name, help=group.help, description=group.help)
            group.configure(sub)
            _add_global_options_everywhere(sub)
    return parser


def _listed(command: str | None, argv: list[str] | None) -> dict[str, tuple[str, str]]:
    """The kernel groups the parser lists: only ``command`` when it is one of them and ``argv``
    asks for no help. Nothing else is shown then (the usage names ``COMMAND``, not each
    group), and each listed group costs argparse a parser of its own, the larger part of a
    one-shot command's start (``paseo ls``). The top-level help (``paseo -h ls``) and an
    unknown command's error (``choose from …``) list them all."""
    if (
        command in COMMANDS
        and argv is not None
        and not any(token in ("-h", "--help") for token in argv)
    ):
        return {command: COMMANDS[command]}
    return COMMANDS


def _plugin_group(command: str) -> Any:
    """A plugin-contributed command group named ``command``, loading plugins to find it."""
    from paseo.cli.context import plugin_manager

    for group in plugin_manager().cli_command_groups():
        if group.name == command and group.parent is None:
            return group
    return None


def _add_plugin_subcommands(parser: argparse.ArgumentParser, command: str, argv: list[str]) -> None:
    """The sub-commands plugins add to the kernel group ``command`` (``CliCommandGroup.parent``,
    ``paseo daemon pair``). Plugins are loaded only when ``argv`` names a sub-command the
    kernel group does not have, or asks for the group's help: ``paseo daemon status`` stays a
    fast path."""
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if action is None:
        return
    words = _words(argv)
    sub = words[1] if len(words) > 1 and words[0] == command else None
    asks_help = sub is None and any(token in ("-h", "--help") for token in argv)
    if not asks_help and (sub is None or sub in action.choices):
        return
    from paseo.cli.context import plugin_manager

    for group in plugin_manager().cli_command_groups():
        if group.parent != command or group.name in action.choices:
            continue
        if sub is not None and group.name != sub:
            continue
        group.configure(action.add_parser(group.name, help=group.help, description=group.help))


def run(argv: list[str]) -> int:
    """Parse ``argv`` and run the selected command; errors become a message and an exit code."""
    # Paseo uses no pydantic plugin; without this pydantic scans every installed distribution's
    # entry points at the first model class (~20-30 ms on the daemon's start-up path).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from paseo_hookspecs.errors import PaseoError

    _route_kernel_logs(argv)
    try:
        command = _find_command(argv)
        parser = build_parser(command, argv)
        args, extras = parser.parse_known_args(argv)
        # argparse cannot match a trailing positional that follows an option placed after an
        # earlier positional (`paseo send ID --no-wait PROMPT`): commands that name such a
        # list positional with set_defaults(trailing=...) get the leftover words appended.
        trailing = getattr(args, "trailing", None)
        if extras and trailing and not any(word.startswith("-") for word in extras):
            setattr(args, trailing, [*(getattr(args, trailing) or []), *extras])
        elif extras:
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
        handler: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
        _handle_ctrl_c()
        if handler is None:
            target = parser
            if command is not None:
                # A group given without a sub-command: show that group's help.
                action = next(
                    a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
                )
                target = action.choices.get(command, parser)
            target.print_help(sys.stderr)
            return EXIT_USAGE
        return int(handler(args) or 0)
    except CliError as error:
        if error.message:
            sys.stderr.write(f"paseo: error: {error.message}\n")
        return error.exit_code
    except PaseoError as error:
        sys.stderr.write(f"paseo: error: {error.message} ({error.code})\n")
        from paseo.cli.hints import program_not_found

        hint = program_not_found(error.message)
        if hint:
            sys.stderr.write(f"paseo: hint: {hint}\n")
        return EXIT_BUDGET if error.code == "budget_exceeded" else 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`paseo ls | head`): nothing more can be said on stdout.
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as error:  # noqa: BLE001 - the last line of defence: no traceback on a terminal
        return _unexpected(error, argv)


def _handle_ctrl_c() -> None:
    """From here on Ctrl-C is a KeyboardInterrupt the command may handle (``paseo run`` says
    its agent goes on); :func:`paseo.cli.entry` ignored it as a traceback-free SIGINT while the
    command was being imported. Only the main thread may set a handler (tests call ``run``
    from others)."""
    import contextlib
    import signal

    # Not threading.main_thread(): threading is not otherwise imported by a one-shot command.
    with contextlib.suppress(ValueError):  # "signal only works in main thread"
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _unexpected(error: Exception, argv: list[str]) -> int:
    """A failure no command anticipated: a one-line message for the user, the traceback in the
    CLI log (``PASEO_DEBUG=1`` prints it instead)."""
    from paseo.rpc.address import AddressError

    if isinstance(error, AddressError):
        sys.stderr.write(
            f"paseo: error: invalid daemon address: {error} "
            "(check --host / PASEO_HOST: host:port, a port, or a unix socket path)\n"
        )
        return EXIT_USAGE
    if os.environ.get("PASEO_DEBUG"):
        raise error
    where = _log_traceback(error, argv)
    detail = f"; the traceback is in {where}" if where else ""
    sys.stderr.write(
        f"paseo: error: unexpected {type(error).__name__}: {error}{detail}\n"
        "(run again with PASEO_DEBUG=1 to print it)\n"
    )
    return 1


CLI_LOG_LIMIT = 1 << 20
"""The CLI log is started afresh past this size."""


def _loggable(argv: list[str]) -> list[str]:
    """``argv`` with the value after a secret-named word (``config set ….apiKey VALUE``,
    ``--password VALUE``) masked: the CLI log is no place for a key."""
    from paseo.config.secrets import REDACTED, is_secret_name

    shown: list[str] = []
    hide_next = False
    for word in argv:
        option, equals, _value = word.partition("=")
        name = option.lstrip("-").rsplit(".", 1)[-1].strip('[]"')
        secret = is_secret_name(name)
        if hide_next:
            shown.append(REDACTED)
        elif equals and word.startswith("-") and secret:
            shown.append(f"{option}={REDACTED}")
        else:
            shown.append(word)
        hide_next = not hide_next and secret and not equals
    return shown


def _log_traceback(error: BaseException, argv: list[str]) -> str | None:
    """Append the traceback to ``$PASEO_HOME/cli.log`` when the home exists (an error never
    creates one); the path written, or ``None``."""
    import traceback

    return _append_cli_log(argv, "".join(traceback.format_exception(error)))


def _append_cli_log(argv: list[str], text: str) -> str | None:
    """Append the command line and ``text`` to ``$PASEO_HOME/cli.log`` when the home exists;
    the path written, or ``None``."""
    import time

    from paseo.client.discovery import home_path
    from paseo.redaction import build_redactor

    options, _rest = _global_parser().parse_known_args(argv)
    home = home_path(getattr(options, "home", None))
    if not home.is_dir():
        return None
    path = home / "cli.log"
    try:
        mode = "w" if path.exists() and path.stat().st_size > CLI_LOG_LIMIT else "a"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        text = f"{stamp} paseo {' '.join(_loggable(argv))}\n{text}"
        # The built-in shapes and this environment's secrets (docs/redaction.md): a prompt or
        # an error message may carry a key, and this file is in the home like the daemon's log.
        redactor = build_redactor(None, os.environ)
        if redactor is not None:
            text = redactor.text(text)
        with open(path, mode, encoding="utf-8") as log:
            log.write(text)
    except OSError:
        return None
    return str(path)


def _terminal_log_handler(argv: list[str]) -> logging.Handler:
    """What the kernel logs while a CLI command runs (a plugin that failed to load, a hook that
    raised): one line on stderr, its traceback in the CLI log (on stderr with ``PASEO_DEBUG=1``).
    Without a handler Python's last-resort one would print the record's traceback there."""
    import logging

    class TerminalLogHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            import traceback

            try:
                message = record.getMessage()
                error = record.exc_info[1] if record.exc_info else None
                trace = "".join(traceback.format_exception(error)) if error is not None else ""
                detail = ""
                if trace and not os.environ.get("PASEO_DEBUG"):
                    where = _append_cli_log(argv, f"{message}\n{trace}")
                    detail = f" (the traceback is in {where})" if where else ""
                    trace = ""
                sys.stderr.write(f"paseo: {record.levelname.lower()}: {message}{detail}\n{trace}")
            except Exception:  # noqa: BLE001 - a message that cannot be shown must not end it
                return

    handler = TerminalLogHandler(logging.WARNING)
    handler.set_name(TERMINAL_HANDLER)
    return handler


TERMINAL_HANDLER = "paseo-cli-terminal"
"""The name of the handler :func:`_route_kernel_logs` attaches (found again by it)."""


def _route_kernel_logs(argv: list[str]) -> None:
    """Send the ``paseo`` logger's warnings through :func:`_terminal_log_handler` for this
    command, unless something (a foreground daemon, a test) has already configured it.

    Nothing can log before ``logging`` is imported, and a one-shot command (``paseo ls``)
    never imports it: its import (with threading, traceback and string) is a tenth of such a
    command's start. So until something imports it, a finder waits for that import and
    routes the logs the moment the module is loaded, before its importer can log."""
    for hook in [f for f in sys.meta_path if isinstance(f, _WhenLoggingLoads)]:
        sys.meta_path.remove(hook)
    if "logging" not in sys.modules:
        sys.meta_path.insert(0, _WhenLoggingLoads(argv))
        return
    import logging

    logger = logging.getLogger("paseo")
    for handler in [h for h in logger.handlers if h.name == TERMINAL_HANDLER]:
        logger.removeHandler(handler)
    if not logger.handlers:
        logger.addHandler(_terminal_log_handler(argv))


class _WhenLoggingLoads:
    """A meta-path finder that finds nothing itself: on the first ``import logging`` it lets
    the other finders find it and has the module's loading end with :func:`_route_kernel_logs`."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def find_spec(
        self, name: str, path: Any = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name != "logging":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        found: ModuleSpec = spec
        loader = found.loader
        exec_module = getattr(loader, "exec_module", None)
        if loader is None or exec_module is None:
            return found
        argv = self.argv

        def exec_then_route(module: ModuleType) -> None:
            exec_module(module)
            # The module is in sys.modules now: _route_kernel_logs's import finds it there.
            _route_kernel_logs(argv)

        loader.exec_module = exec_then_route  # type: ignore[method-assign]
        return found
