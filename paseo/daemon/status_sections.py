"""The plugins' sections of ``server.status``: each report bounded, none able to fail the rest.

A section's ``report`` runs plugin code on the status path, which ``paseo daemon status``,
``GET /api/status`` and the doctor all take: one that hangs or raises must cost the answer at
most :data:`REPORT_TIMEOUT` and show as ``unknown`` with the reason, the traceback in the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence

from paseo_hookspecs.status import StatusReport, StatusSection

from paseo.rpc.models import StatusSectionResult

REPORT_TIMEOUT = 1.0

log = logging.getLogger("paseo.daemon.status")


async def gather_sections(
    sections: Sequence[tuple[str, StatusSection]],
) -> dict[str, StatusSectionResult]:
    """Every section's report, concurrently, keyed by section name."""
    results = await asyncio.gather(*(_one(plugin, section) for plugin, section in sections))
    return {section.name: result for (_, section), result in zip(sections, results, strict=True)}


async def _one(plugin: str, section: StatusSection) -> StatusSectionResult:
    try:
        async with asyncio.timeout(REPORT_TIMEOUT):
            report = await section.report()
        details = json.loads(json.dumps(dict(report.details), default=str))
    except TimeoutError:
        return _unknown(plugin, f"its report took longer than {REPORT_TIMEOUT:g} s")
    except Exception as error:
        log.exception("status section %r of plugin %s failed", section.name, plugin)
        return _unknown(plugin, f"its report failed: {error}")
    if not isinstance(report, StatusReport):
        return _unknown(plugin, f"its report is a {type(report).__name__}, not a StatusReport")
    return StatusSectionResult(
        plugin=plugin, state=report.state, headline=report.headline, details=details
    )


def _unknown(plugin: str, why: str) -> StatusSectionResult:
    return StatusSectionResult(plugin=plugin, state="unknown", headline=why, details={})
