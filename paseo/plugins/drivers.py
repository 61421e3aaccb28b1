"""Named drivers: exactly one implementation chosen by configuration.

Stevedore checks the entry-point name before importing, so drivers that are not chosen are
never imported.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs import DRIVER_GROUPS
from paseo_hookspecs.errors import Unavailable

from paseo.plugins.discovery import EntryPointScan, entry_point_candidates
from paseo.plugins.records import PluginRecord


def driver_names(group: str) -> list[str]:
    """Names of the installed drivers of ``group`` (metadata only)."""
    return [c.name for c in entry_point_candidates(group)]


def driver_records(scan: EntryPointScan | None = None) -> list[PluginRecord]:
    """One record per installed driver, for ``paseo plugins list`` (nothing imported)."""
    scan = scan or EntryPointScan()
    return [
        PluginRecord(
            name=c.name,
            version=c.version,
            distribution=c.distribution,
            builtin=c.builtin,
            source=c.source,
            enabled=True,
            kind=group,
            hooks=[f"driver:{group}"],
        )
        for group in DRIVER_GROUPS
        for c in scan.candidates(group)
    ]


def load_driver(group: str, name: str) -> Any:
    """Import and return the driver class ``name`` of ``group``.

    Raises :class:`Unavailable` naming the installed choices when there is no such driver, or
    with the import error when it cannot be loaded.
    """
    from stevedore import driver
    from stevedore.exception import NoMatches

    failures: list[str] = []

    def on_failure(_manager: Any, entrypoint: Any, exc: BaseException) -> None:
        failures.append(f"{entrypoint.name}: {type(exc).__name__}: {exc}")

    try:
        manager = driver.DriverManager(
            namespace=group,
            name=name,
            invoke_on_load=False,
            on_load_failure_callback=on_failure,
        )
    except NoMatches as exc:
        if failures:
            raise Unavailable(f"{group} driver {failures[0]}") from exc
        choices = ", ".join(driver_names(group)) or "none installed"
        raise Unavailable(f"no {group} driver named {name!r} (installed: {choices})") from exc
    return manager.driver
