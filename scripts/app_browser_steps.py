"""The steps of ``app-browser-check.py``: each drives the app as a person would (the app's own
test ids and labels, as its Playwright suite uses them) and checks the outcome where it lands —
in the page, and for a commit, a branch switch, a worktree or a script in the repository on
disk. A step returns what it saw; it raises when the app did not get there."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

WAIT_MS = 30_000
MODEL_LABEL = "Haiku 5.5"
"""The model the worktree step picks: one of the check's Claude Code provider's."""


def until(what: str, probe: Any, timeout: float = 30.0, every: float = 0.5) -> Any:
    """``probe()``'s first truthy answer within ``timeout`` seconds, else an error naming
    ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


class Steps:
    def __init__(self, check: Any, page: Any) -> None:
        self.check = check
        self.page = page
        self.base = f"http://127.0.0.1:{check.app_port}"

    # --- helpers ----------------------------------------------------------------------

    # Visible elements only: the app keeps other workspaces' screens mounted, hidden, in a deck,
    # so the first element with a test id may be one the user cannot see.
    def tid(self, test_id: str) -> Any:
        return self.page.locator(f'[data-testid="{test_id}"] >> visible=true')

    def tid_prefix(self, prefix: str) -> Any:
        return self.page.locator(f'[data-testid^="{prefix}"] >> visible=true')

    def git(self, *argv: str, cwd: Path | None = None) -> str:
        return self.check.git(*argv, cwd=cwd).strip()

    def open_main_workspace(self) -> None:
        row = self.tid_prefix(f"sidebar-workspace-row-{self.check.server_id}:").first
        row.wait_for(state="visible", timeout=WAIT_MS)
        rows = self.tid_prefix(f"sidebar-workspace-row-{self.check.server_id}:")
        for i in range(rows.count()):
            if "demo" in (rows.nth(i).inner_text() or "") or rows.count() == 1:
                rows.nth(i).click()
                break
        else:
            row.click()
        self.tid("workspace-header-title").first.wait_for(state="visible", timeout=WAIT_MS)

    def open_explorer(self, tab: str) -> None:
        tab_button = self.tid(f"explorer-tab-{tab}").first
        if not tab_button.is_visible():
            self.tid("workspace-explorer-toggle").first.click()
        tab_button.wait_for(state="visible", timeout=WAIT_MS)
        tab_button.click()

    # --- the steps --------------------------------------------------------------------

    def online(self) -> str:
        self.page.goto(self.base + "/", wait_until="domcontentloaded")
        self.tid_prefix("sidebar-project-row-").first.wait_for(state="visible", timeout=90_000)
        return "the sidebar lists the project"

    def header(self) -> str:
        self.open_main_workspace()
        switcher = self.tid("workspace-header-branch-switcher").first
        switcher.wait_for(state="visible", timeout=WAIT_MS)
        label = switcher.get_attribute("aria-label") or switcher.inner_text()
        assert "main" in label, f"the branch switcher says {label!r}"
        toggle = self.tid("workspace-explorer-toggle").first
        text = until(
            "the header's diff stat",
            lambda: (t := toggle.inner_text()) and "+" in t and t,
            timeout=30,
        )
        return f"branch main; changes {' '.join(text.split())!r}"

    def diff(self) -> str:
        self.open_explorer("changes")
        first = self.tid("diff-file-0").first
        first.wait_for(state="visible", timeout=WAIT_MS)
        text = first.inner_text()
        assert "app.py" in text, f"the first diff file reads {text[:80]!r}"
        return "src/app.py in the diff view"

    def commit(self) -> str:
        before = self.git("rev-list", "--count", "HEAD")
        cta = self.tid("changes-primary-cta").first
        cta.wait_for(state="visible", timeout=WAIT_MS)
        label = " ".join(cta.inner_text().split())
        assert "commit" in label.lower(), f"the primary action is {label!r}"
        cta.click()
        until(
            "the commit in git log",
            lambda: self.git("rev-list", "--count", "HEAD") != before,
            timeout=60,
        )
        subject = self.git("log", "-1", "--format=%s")
        assert not self.git("status", "--porcelain"), "the tree is not clean after the commit"
        return f"git log: {subject!r}"

    def branch(self) -> str:
        switcher = self.tid("workspace-header-branch-switcher").first
        switcher.click()
        option = self.page.get_by_text("feature/other", exact=True).first
        option.wait_for(state="visible", timeout=WAIT_MS)
        option.click()
        until(
            "HEAD on feature/other",
            lambda: self.git("rev-parse", "--abbrev-ref", "HEAD") == "feature/other",
            timeout=60,
        )
        until(
            "the header naming feature/other",
            lambda: "feature/other" in (switcher.get_attribute("aria-label") or ""),
            timeout=30,
        )
        return "checked out feature/other; the header follows"

    def files(self) -> str:
        self.open_explorer("files")
        entry = self.page.get_by_text("README.md", exact=True).first
        entry.wait_for(state="visible", timeout=WAIT_MS)
        entry.click()
        # The markdown view sets the apostrophe typographically.
        self.page.get_by_text("browser check").first.wait_for(state="visible", timeout=WAIT_MS)
        return "README.md opened with its text"

    def add_project(self) -> str:
        self.tid("sidebar-add-project").first.click()
        box = self.page.get_by_placeholder("Type a directory path...").first
        box.wait_for(state="visible", timeout=WAIT_MS)
        box.fill("alpha")
        row = self.page.get_by_text("alpha-service").first
        row.wait_for(state="visible", timeout=WAIT_MS)
        found = " ".join(row.inner_text().split())
        self.page.keyboard.press("Escape")
        return f"suggested {found!r}"

    def choose_model(self, label: str) -> None:
        """Pick ``label`` in the composer's model selector, as a user does: the selector lists
        each provider with its model count, a provider opens its models."""
        self.tid("combined-model-selector").first.wait_for(state="visible", timeout=WAIT_MS)
        self.tid("combined-model-selector").first.click()
        model = self.page.get_by_text(label, exact=True).filter(visible=True)
        provider = self.page.get_by_text(re.compile(r"^\d+ models?$")).filter(visible=True)
        until(
            "the model selector's providers",
            lambda: model.count() > 0 or provider.count() > 0,
            timeout=30,
        )
        if model.count() == 0:
            provider.first.click()
        model.first.wait_for(state="visible", timeout=WAIT_MS)
        model.first.click()
        until(
            f"the selector naming {label}",
            lambda: label in (self.tid("combined-model-selector").first.get_attribute(
                "aria-label") or ""),
            timeout=30,
        )

    def worktree_paths(self) -> list[Path]:
        return [
            Path(line.split(" ", 1)[1])
            for line in self.git("worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")
        ]

    def worktree(self) -> str:
        rows = self.tid_prefix(f"sidebar-workspace-row-{self.check.server_id}:")
        before_rows = rows.count()
        before = set(self.worktree_paths())
        project = self.tid_prefix("sidebar-project-row-").first
        project.hover()
        self.tid_prefix("sidebar-project-new-worktree-").first.click()
        self.page.wait_for_url("**/new**", timeout=WAIT_MS)
        # The composer creates nothing without a provider and a model ("Select a model").
        self.choose_model(MODEL_LABEL)
        create = self.tid("message-input-root").get_by_role("button", name="Create").first
        create.wait_for(state="visible", timeout=WAIT_MS)
        create.click()
        made = until(
            "a new worktree in git worktree list",
            lambda: set(self.worktree_paths()) - before,
            timeout=60,
        )
        (path,) = made
        root = self.check.paseo_home / "worktrees"
        assert path.is_dir(), f"{path} is not on disk"
        assert root in path.parents, f"{path} is not under the daemon's worktree root {root}"
        until("the worktree's row in the sidebar", lambda: rows.count() > before_rows, 60)
        names = [rows.nth(i).inner_text() for i in range(rows.count())]
        assert any(path.name in " ".join(n.split()) for n in names), (
            f"no sidebar row names {path.name}: {names}"
        )
        return f"{path.name} on disk under {root.name}/ and in the sidebar ({len(names)} rows)"

    def script(self) -> str:
        self.open_main_workspace()
        button = self.tid("workspace-scripts-button").first
        button.wait_for(state="visible", timeout=WAIT_MS)
        button.click()
        self.tid("workspace-scripts-start-stamp").first.click()
        places = [Path(line.split()[0]) for line in self.git("worktree", "list").splitlines()]
        ran = until(
            "script-ran.txt from the stamp script",
            lambda: next((p for p in places if (p / "script-ran.txt").exists()), None),
            timeout=60,
        )
        self.page.keyboard.press("Escape")  # close the scripts menu
        return f"paseo.json's stamp ran in {ran.name}"

    def settings(self) -> str:
        self.tid("sidebar-settings").first.click()
        self.tid("settings-sidebar").first.wait_for(state="visible", timeout=WAIT_MS)
        host = self.tid(f"settings-host-entry-{self.check.server_id}").first
        host.wait_for(state="visible", timeout=WAIT_MS)
        host.click()
        self.tid(f"settings-host-page-{self.check.server_id}").first.wait_for(
            state="visible", timeout=WAIT_MS
        )
        self.tid("host-page-providers-card").first.wait_for(state="visible", timeout=WAIT_MS)
        return "the host page with its providers"

    def voice(self) -> str:
        # Back to the workspace in the app (no reload: the recording stays one connection),
        # on its New Agent tab: a composer.
        back = self.tid("settings-back-to-workspace").first
        if back.is_visible():
            back.click()
        self.open_main_workspace()
        self.page.locator('text="New Agent" >> visible=true').first.click()
        # The composer's microphone ("Start dictation"; the dictation bar's own is "Start voice
        # dictation").
        dictation = self.page.locator(
            '[aria-label="Start dictation"], [aria-label="Start voice dictation"]'
        ).filter(visible=True).first
        dictation.wait_for(state="visible", timeout=WAIT_MS)
        voice_mode = self.page.locator('[aria-label="Enable Voice mode"] >> visible=true')
        shown = voice_mode.count() > 0 and voice_mode.first.is_visible()
        return "dictation button in the composer" + (
            ", voice mode button too" if shown else " (voice mode shows with an agent)"
        )

    def restart(self) -> str:
        pid_file = self.check.paseo_home / "paseo.pid"
        before = pid_file.read_text(encoding="utf-8")
        subprocess.run(
            [str(self.check.paseo_bin()), "daemon", "restart"], env=self.check.env,
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        assert pid_file.read_text(encoding="utf-8") != before, "the daemon did not restart"
        started = time.monotonic()

        def connected() -> bool:
            # The new daemon counts the app's connection (the page never reloads).
            status = self.check.paseo("daemon", "status", check=False, timeout=30)
            rows = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            return rows.get("connections", "0").strip() not in ("", "0")

        until("the app's new connection", connected, timeout=240, every=2)
        took = time.monotonic() - started
        self.tid_prefix("sidebar-project-row-").first.wait_for(state="visible", timeout=WAIT_MS)
        time.sleep(3)
        offline = self.page.get_by_text("Offline", exact=True)
        assert offline.count() == 0 or not offline.first.is_visible(), "the app says Offline"
        return f"reconnected by itself {took:.0f} s after the restart returned, no reload"

    def count_opens(self) -> int:
        path = self.check.out / "frames.jsonl"
        return path.read_text(encoding="utf-8").count('"dir": "open"')

    def run_all(self) -> None:
        for name in (
            "online", "header", "diff", "commit", "branch", "files", "add_project", "worktree",
            "script", "settings", "voice", "restart",
        ):  # fmt: skip
            self.check.step(name, self.page, getattr(self, name))
