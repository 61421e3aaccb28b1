"""``$PASEO_HOME/loops/loops.json``: every loop record, written atomically after each change."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from paseo_hookspecs.atomic import atomic_write_json, read_json, sweep_temp_files

from paseo_loops.records import Loop

log = logging.getLogger("paseo.loops")

FILE = "loops.json"


class LoopStore:
    def __init__(self, home: Path) -> None:
        self.directory = home / "loops"
        self.path = self.directory / FILE

    def load(self) -> list[Loop]:
        """The stored loops; an unreadable file is logged and kept aside (never overwritten
        silently: it is renamed ``loops.json.corrupt``)."""
        sweep_temp_files(self.directory, [FILE])
        if not self.path.exists():
            return []
        try:
            document: Any = read_json(self.path)
        except (OSError, ValueError) as exc:
            log.warning("loops: %s is unreadable (%s); starting with no loops", self.path, exc)
            self.path.replace(self.path.with_name(FILE + ".corrupt"))
            return []
        loops = document.get("loops") if isinstance(document, dict) else document
        if not isinstance(loops, list):
            return []
        return [
            loop for loop in loops if isinstance(loop, dict) and isinstance(loop.get("id"), str)
        ]

    def save(self, loops: list[Loop]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.path, {"loops": loops})
