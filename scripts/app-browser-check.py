#!/usr/bin/env python3
"""The manual browser check of the real Paseo web app against this daemon (docs/ts-clients.md,
"Browser check"): it starts a daemon in a temporary home, serves a web export of the app
(``--app-dist``: a directory holding the app's ``index.html``, made outside this repository) on
127.0.0.1, opens it in Debian's headless Chromium through Playwright for Python and walks the
points of the app's checklist, printing ``PASS``/``FAIL`` per step and a screenshot per step
under ``--out``. Every WebSocket frame the app sends and receives is written to
``--out/frames.jsonl`` (``{"dir": "sent"|"received", "t", "frame"}``); the suite replays the
app's requests from such a recording (``tests/e2e/tswire/test_app_script.py``).

Loopback only; the daemon, the file server and the browser are stopped before it exits.

    .venv/bin/python scripts/app-browser-check.py --app-dist DIR [--out /tmp/appbrowser] \
        [--chromium /usr/bin/chromium] [--only STEP,...]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "e2e" / "tswire"))
sys.path.insert(0, str(REPO / "tests"))
app_script: Any = importlib.import_module("app_script")
"""The project layout and the recording's normal form, shared with the suite's replay."""
agents_env: Any = importlib.import_module("helpers.agents_env")
"""The suite's hermetic environment for the pinned Claude Code (the check's agent provider)."""

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SpaHandler(SimpleHTTPRequestHandler):
    """The export's files; any other path is ``index.html`` (the app routes on the client)."""

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if not path.exists() or (path.is_dir() and not (path / "index.html").exists()):
            html = path.with_suffix(".html")
            self.path = "/" + html.name if html.exists() and html.parent.exists() else "/"
        return super().send_head()

    def log_message(self, format: str, *args: Any) -> None:
        return None


class Check:
    """One run: the home, the project, the daemon, the app server and the results."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix="appbrowser-"))
        # As tests/e2e/daemon/harness.py lays a home out, so a replay's paths match.
        self.home = self.root / "daemon-home"  # the daemon user's HOME: projects live below it
        self.paseo_home = self.root / "paseo-home"
        self.repo = self.home / "projects" / "demo"
        self.ws_port = free_port()
        self.app_port = free_port()
        self.results: list[tuple[str, bool, str]] = []
        self.frames = (self.out / "frames.jsonl").open("w", encoding="utf-8")
        self.frames_lock = threading.Lock()
        self.httpd: ThreadingHTTPServer | None = None
        self.fake: Any = None  # the suite's fake model server (started in run)
        self.proxy: Any = None  # refuses and records whatever tries to leave 127.0.0.1
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PASEO_")},
            "HOME": str(self.home),
            "PASEO_HOME": str(self.paseo_home),
            "PASEO_LISTEN": "127.0.0.1:0",  # never the shared machine's default port
            **app_script.GIT_ENV,
        }

    # --- set-up -------------------------------------------------------------------------

    def git(self, *argv: str, cwd: Path | None = None) -> str:
        done = subprocess.run(
            ["git", *argv], cwd=cwd or self.repo, env=self.env, check=True, text=True,
            capture_output=True, timeout=60,
        )  # fmt: skip
        return done.stdout

    def make_project(self) -> None:
        self.repo = app_script.make_project(self.root, self.home)

    def paseo_bin(self) -> Path:
        return REPO / ".venv" / "bin" / "paseo"

    def paseo(self, *argv: str, check: bool = True, timeout: float = 90) -> str:
        done = subprocess.run(
            [str(self.paseo_bin()), *argv], env=self.env, text=True,
            capture_output=True, timeout=timeout, check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise RuntimeError(f"paseo {' '.join(argv)}: {done.stderr.strip()}")
        return done.stdout

    def claude_provider(self) -> dict[str, Any]:
        """``agents.providers.claude``: the pinned Claude Code against the fake model server,
        with a private home, as the suite's daemon tests configure it
        (``tests/e2e/daemon/harness.py``). The app's new-workspace composer creates nothing
        without a provider and a model."""
        return {
            "command": [str(agents_env.BIN_DIR / "claude")],
            "env": {
                **agents_env.claude_code_env(self.fake.url, self.root / "claude"),
                **self.proxy.proxy_env(),
            },
        }

    def start_daemon(self) -> None:
        self.paseo_home.mkdir(parents=True)
        config = {
            "daemon": {
                "cors": {"allowedOrigins": [f"http://127.0.0.1:{self.app_port}"]},
            },
            "agents": {"providers": {"claude": self.claude_provider()}},
            "plugins": {"tswire": {"settings": {"listen": f"127.0.0.1:{self.ws_port}"}}},
        }
        (self.paseo_home / "config.json").write_text(json.dumps(config, indent=2))
        self.paseo("daemon", "start", timeout=120)
        self.token = self.paseo("daemon", "token", "create", "--name", "browser").strip()
        self.server_id = (self.paseo_home / "server-id").read_text().strip()
        self.paseo("workspace", "open", str(self.repo))

    def serve_app(self) -> None:
        handler = partial(SpaHandler, directory=str(self.args.app_dist))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.app_port), handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.paseo("daemon", "stop", check=False, timeout=60)
        if self.httpd is not None:
            self.httpd.shutdown()
        self.frames.close()
        if not self.args.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    # --- the browser ----------------------------------------------------------------------

    def record(self, direction: str, payload: Any) -> None:
        if isinstance(payload, bytes):
            entry = {"dir": direction, "t": time.time(), "binary": payload.hex()}
        else:
            entry = {"dir": direction, "t": time.time(), "frame": payload}
        with self.frames_lock:
            self.frames.write(json.dumps(entry) + "\n")
            self.frames.flush()

    def on_websocket(self, ws: Any) -> None:
        if f":{self.ws_port}" not in ws.url:
            return
        self.record("open", ws.url)
        ws.on("framesent", lambda payload: self.record("sent", payload))
        ws.on("framereceived", lambda payload: self.record("received", payload))
        ws.on("close", lambda _ws: self.record("close", ws.url))

    def seeded_host(self) -> dict[str, Any]:
        endpoint = f"127.0.0.1:{self.ws_port}"
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        connection = {
            "id": f"direct:{endpoint}",
            "type": "directTcp",
            "endpoint": endpoint,
            "useTls": False,
            "password": self.token,
        }
        return {
            "serverId": self.server_id,
            "label": "python-daemon",
            "connections": [connection],
            "preferredConnectionId": connection["id"],
            "createdAt": now,
            "updatedAt": now,
        }

    def step(self, name: str, page: Any, body: Callable[[], str]) -> None:
        if self.args.only and name not in self.args.only:
            return
        started = time.monotonic()
        try:
            detail = body() or ""
            ok = True
        except Exception as exc:  # noqa: BLE001 - a failed step is reported, the next one runs
            detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ok = False
        shot = self.out / f"{len(self.results) + 1:02d}-{name}.png"
        with contextlib.suppress(Exception):
            page.screenshot(path=str(shot))
        took = time.monotonic() - started
        self.results.append((name, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'} {name} ({took:.1f} s) {detail} [{shot.name}]")
        sys.stdout.flush()

    def run(self) -> int:
        from paseo.testing.fake_model import FakeModelServer, RefusingProxy

        with FakeModelServer() as fake, RefusingProxy() as proxy:
            self.fake, self.proxy = fake, proxy
            status = self.walk()
            if proxy.attempts:
                print(f"something tried to leave 127.0.0.1 (refused): {proxy.attempts}")
                status = 1
        return status

    def walk(self) -> int:
        from playwright.sync_api import sync_playwright

        self.make_project()
        self.env.update(self.proxy.proxy_env())  # the daemon's own traffic, too
        try:
            self.start_daemon()
            self.serve_app()
        except Exception:
            self.stop()
            raise
        from app_browser_steps import Steps

        try:
            with sync_playwright() as pw:
                context = pw.chromium.launch_persistent_context(
                    str(self.root / "chromium"),  # a fresh profile each run
                    executable_path=self.args.chromium,
                    args=CHROMIUM_ARGS,
                    headless=True,
                    viewport={"width": 1440, "height": 900},
                )
                context.add_init_script(
                    "(host => {"
                    " if (!localStorage.getItem('@paseo:appbrowser-seeded')) {"
                    "  localStorage.setItem('@paseo:daemon-registry', JSON.stringify([host]));"
                    "  localStorage.setItem('@paseo:appbrowser-seeded', '1');"
                    " }"
                    "})(" + json.dumps(self.seeded_host()) + ")"
                )
                # As the app's own e2e suite does: never reach a daemon on the default port
                # (another user's, on a shared machine); the app probes it at start.
                context.route_web_socket(re.compile(r":6767\b"), lambda ws: ws.close())
                context.route(re.compile(r":6767\b"), lambda route: route.abort())
                page = context.new_page()
                page.on("websocket", self.on_websocket)
                console = (self.out / "console.log").open("w", encoding="utf-8")
                page.on("console", lambda m: console.write(f"[{m.type}] {m.text}\n"))
                page.on("pageerror", lambda e: console.write(f"[pageerror] {e}\n"))
                Steps(self, page).run_all()
                console.close()
                context.close()
        finally:
            self.stop()
        script = app_script.normalize(app_script.load(self.out / "frames.jsonl"), str(self.root))
        with (self.out / "app-script.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(item, sort_keys=True) + "\n" for item in script)
        write_zod_input(self.out / "frames.jsonl", self.out / "zod-frames.jsonl")
        failed = [name for name, ok, _ in self.results if not ok]
        print(f"{len(self.results) - len(failed)} passed, {len(failed)} failed")
        return 1 if failed else 0


def write_zod_input(frames: Path, out: Path) -> None:
    """What the app received, in the form ``tests/e2e/tswire/zod-check.ts`` reads: each JSON
    frame, each terminal Snapshot's state and each FileBegin's metadata."""
    with out.open("w", encoding="utf-8") as sink:
        for entry in app_script.load(frames):
            if entry["dir"] != "received":
                continue
            if "frame" in entry:
                record = {"kind": "frame", "frame": json.loads(entry["frame"])}
            else:
                data = bytes.fromhex(entry["binary"])
                if data[:1] == b"\x04":
                    record = {"kind": "snapshot", "frame": json.loads(data[2:])}
                elif data[:1] == b"\x10" and len(data) > 4:
                    start = 2 + data[1]
                    record = {"kind": "file_begin", "frame": json.loads(data[start + 2 :])}
                else:
                    continue
            sink.write(json.dumps(record) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dist", required=True, type=Path, help="the app's web export")
    parser.add_argument(
        "--out",
        default=str(Path(tempfile.gettempdir()) / "appbrowser"),
        help="screenshots and frames",
    )
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--only", type=lambda s: set(s.split(",")), default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    args = parser.parse_args()
    if not (args.app_dist / "index.html").is_file():
        print(f"app-browser-check: {args.app_dist} holds no index.html", file=sys.stderr)
        return 2
    if not Path(args.chromium).exists():
        print(f"app-browser-check: no browser at {args.chromium}", file=sys.stderr)
        return 2
    if not (agents_env.BIN_DIR / "claude").exists():
        print(
            f"app-browser-check: no Claude Code at {agents_env.BIN_DIR}: run `npm ci` in "
            f"{agents_env.AGENTS_DIR}",
            file=sys.stderr,
        )
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    return Check(args).run()


if __name__ == "__main__":
    sys.exit(main())
