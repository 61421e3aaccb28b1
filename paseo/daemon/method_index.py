"""The kernel's method groups loaded on first call: each method's name and access, by the
source that builds it (:mod:`paseo.daemon.wiring`), so a start registers them without importing
their models and handlers.

Generated from the groups themselves; do not edit. Rewrite it with
``python -m paseo.daemon.schema --method-index paseo/daemon/method_index.py`` (a test fails when
it is stale, and a loaded method whose access differs is refused).
"""

from __future__ import annotations

LOCAL = frozenset({"local"})
OWNER = frozenset({"local", "remote"})
ALL = frozenset({"hub", "local", "remote"})

INDEX: dict[str, dict[str, tuple[tuple[str, frozenset[str]], ...]]] = {
    "workspaces": {
        "project": (
            ("project.add", OWNER),
            ("project.list", OWNER),
            ("project.get", OWNER),
            ("project.rename", OWNER),
            ("project.archive", OWNER),
            ("project.setIcon", OWNER),
            ("project.clearIcon", OWNER),
            ("project.icon", OWNER),
            ("project.config.read", OWNER),
            ("project.config.write", OWNER),
        ),
        "workspace": (
            ("workspace.gitRuntime", OWNER),
            ("workspace.list", OWNER),
            ("workspace.get", OWNER),
            ("workspace.open", OWNER),
            ("workspace.archive", OWNER),
            ("workspace.restore", OWNER),
            ("workspace.pin", OWNER),
            ("workspace.rename", OWNER),
            ("workspace.reconcile", OWNER),
        ),
        "worktree": (
            ("worktree.create", OWNER),
            ("worktree.list", OWNER),
            ("worktree.archive", OWNER),
            ("worktree.restore", OWNER),
            ("worktree.trust", OWNER),
            ("worktree.setupStatus", OWNER),
        ),
        "label": (
            ("label.list", OWNER),
            ("label.create", OWNER),
            ("label.edit", OWNER),
            ("label.delete", OWNER),
            ("label.assign", OWNER),
            ("label.unassign", OWNER),
        ),
    },
    "git": {
        "git": (
            ("git.status", OWNER),
            ("git.diff", OWNER),
            ("git.commit", OWNER),
            ("git.merge", OWNER),
            ("git.mergeFromBase", OWNER),
            ("git.pull", OWNER),
            ("git.push", OWNER),
            ("git.switch", OWNER),
            ("git.stash.save", OWNER),
            ("git.stash.pop", OWNER),
            ("git.stash.list", OWNER),
            ("git.branch.check", OWNER),
            ("git.branch.suggest", OWNER),
            ("git.pr.create", OWNER),
            ("git.pr.status", OWNER),
            ("git.pr.timeline", OWNER),
            ("git.github.search", OWNER),
        ),
    },
    "agents": {
        "agent": (
            ("agent.create", OWNER),
            ("agent.import", OWNER),
            ("agent.list", OWNER),
            ("agent.get", OWNER),
            ("agent.send", OWNER),
            ("agent.interrupt", OWNER),
            ("agent.wait", OWNER),
            ("agent.stop", OWNER),
            ("agent.archive", OWNER),
            ("agent.restore", OWNER),
            ("agent.delete", OWNER),
            ("agent.update", OWNER),
            ("agent.mode.set", OWNER),
            ("agent.modes", OWNER),
            ("agent.model.set", OWNER),
            ("agent.thinking.set", OWNER),
            ("agent.feature.set", OWNER),
            ("agent.commands", OWNER),
            ("agent.reload", OWNER),
            ("agent.attention.clear", OWNER),
            ("agent.timeline", OWNER),
            ("agent.permissions.list", OWNER),
            ("agent.permissions.respond", OWNER),
        ),
        "provider": (
            ("provider.list", OWNER),
            ("provider.models", OWNER),
            ("provider.features", OWNER),
            ("provider.diagnostic", OWNER),
        ),
    },
    "metadata": {
        "metadata": (
            ("metadata.commit-message", OWNER),
            ("metadata.change-request", OWNER),
        ),
    },
    "schedules": {
        "schedule": (
            ("schedule.create", OWNER),
            ("schedule.list", OWNER),
            ("schedule.inspect", OWNER),
            ("schedule.logs", OWNER),
            ("schedule.pause", OWNER),
            ("schedule.resume", OWNER),
            ("schedule.delete", OWNER),
            ("schedule.run-now", OWNER),
        ),
    },
    "checkpoints": {
        "checkpoint": (
            ("checkpoint.list", OWNER),
            ("checkpoint.diff", OWNER),
            ("checkpoint.undo", OWNER),
            ("checkpoint.redo", OWNER),
        ),
    },
    "trash": {
        "trash": (
            ("trash.list", OWNER),
            ("trash.restore", OWNER),
            ("trash.empty", OWNER),
        ),
    },
    "usage": {
        "usage": (
            ("usage.query", OWNER),
            ("usage.agent", OWNER),
            ("usage.budget", OWNER),
        ),
    },
    "skills": {
        "skills": (
            ("skills.list", OWNER),
            ("skills.sync", OWNER),
        ),
    },
    "terminals": {
        "terminal": (
            ("terminal.list", OWNER),
            ("terminal.create", OWNER),
            ("terminal.kill", OWNER),
            ("terminal.capture", OWNER),
            ("terminal.input", OWNER),
            ("terminal.resize", OWNER),
            ("terminal.subscribe", OWNER),
            ("terminal.unsubscribe", OWNER),
        ),
    },
    "scripts": {
        "script": (
            ("script.list", OWNER),
            ("script.resolve", OWNER),
            ("script.start", OWNER),
            ("script.stop", OWNER),
            ("script.restart", OWNER),
            ("script.logs", OWNER),
        ),
    },
    "speech": {
        "speech": (
            ("speech.engines", OWNER),
            ("speech.transcribe", OWNER),
            ("speech.synthesize", OWNER),
        ),
        "dictation": (
            ("dictation.start", OWNER),
            ("dictation.chunk", OWNER),
            ("dictation.finish", OWNER),
            ("dictation.cancel", OWNER),
        ),
        "voice": (
            ("voice.start", OWNER),
            ("voice.audio", OWNER),
            ("voice.stop", OWNER),
            ("voice.abort", OWNER),
            ("voice.speak", OWNER),
        ),
    },
    "files": {
        "fs": (
            ("fs.list", OWNER),
            ("fs.read", OWNER),
            ("fs.downloadToken", OWNER),
            ("fs.suggest", OWNER),
        ),
        "editor": (
            ("editor.list", OWNER),
            ("editor.open", OWNER),
        ),
    },
}
