"""The checks of ``agents.providers`` that need to know which providers are installed.

The config schema names no provider: which ids exist is decided by the plugins that register
them, so :mod:`paseo.config.models` checks only shapes (an id pattern, an entry that
``extends`` another provider declares a ``label``). What remains is checked here, against the
ids of the providers actually registered: by ``paseo config validate`` (as warnings) and by
the daemon once its plugins are loaded. Rules that belong to one provider (what an ``acp``
entry needs) are that provider's ``derive``'s.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from paseo.config.models import ProviderOverride
from paseo.config.problems import ConfigProblem


def provider_problems(
    providers: Mapping[str, ProviderOverride],
    registered: Collection[str],
    declared: Collection[str] = (),
) -> list[ConfigProblem]:
    """What ``agents.providers`` (``providers``) says that the installed providers contradict.

    ``registered`` are the ids of the providers plugins register (``paseo_register_providers``):
    the ones an entry may ``extends``. ``declared`` are the ids plugin manifests declare: an
    entry may tune those without ``extends``, as it may tune a registered one. Each problem is a
    warning at the entry's ``extends`` path whose message names the installed providers.
    """
    installed = ", ".join(sorted(registered)) or "none"
    problems: list[ConfigProblem] = []
    for provider_id, entry in providers.items():
        path = f"agents.providers.{provider_id}.extends"
        if entry.extends is None:
            if provider_id not in registered and provider_id not in declared:
                problems.append(
                    ConfigProblem(
                        path,
                        f'custom provider "{provider_id}" must declare extends, or name an '
                        f"installed provider (installed providers: {installed})",
                        "warning",
                    )
                )
        elif entry.extends not in registered:
            problems.append(
                ConfigProblem(
                    path,
                    f'unknown provider "{entry.extends}" (installed providers: {installed})',
                    "warning",
                )
            )
    return problems
