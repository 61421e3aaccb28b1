"""Named drivers: exactly one implementation chosen by configuration.

Stevedore checks the entry-point name before importing, so drivers that are not chosen are
never imported.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs import DRIVER_GROUPS
from paseo_hookspecs.errors import Unavailable

from paseo.plugins.discovery import Candidate, EntryPointScan, entry_point_candidates
from paseo.plugins.extras import missing_extra
from paseo.plugins.records import PluginRecord


def driver_names(group: str) -> list[str]:
    """Names of the installed drivers of ``group`` (metadata only)."""
    return [c.name for c in entry_point_candidates(group)]


def driver_records(scan: EntryPointScan | None = None) -> list[PluginRecord]:
    """One record per installed driver, for ``paseo plugins list`` (nothing imported); a
    driver whose extra is not installed is marked unavailable with the command that installs
    it."""
    scan = scan or EntryPointScan()
    return [_record(group, c) for group in DRIVER_GROUPS for c in scan.candidates(group)]


def _record(group: str, candidate: Candidate) -> PluginRecord:
    unavailable = missing_extra(candidate.distribution, candidate.extras)
    return PluginRecord(
        name=candidate.name,
        version=candidate.version,
        distribution=candidate.distribution,
        builtin=candidate.builtin,
        source=candidate.source,
        enabled=True,
        kind=group,
        hooks=[f"driver:{group}"],
        error=unavailable.message if unavailable is not None else None,
        unavailable=unavailable,
    )


def load_driver(group: str, name: str) -> Any:
    """Import and return the driver class ``name`` of ``group``.

    Raises :class:`Unavailable` naming the installed choices when there is no such driver,
    with the install command when the extra it needs is not installed (it is not imported), or
    with the import error when it cannot be loaded.
    """
    for candidate in entry_point_candidates(group):
        unavailable = candidate.name == name and missing_extra(
            candidate.distribution, candidate.extras
        )
        if unavailable:
            raise Unavailable(f"the {name!r} {group} driver is {unavailable.message}")
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
