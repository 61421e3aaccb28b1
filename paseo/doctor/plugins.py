"""The plugins, loaded in the doctor's process once (by whichever check first needs them), and
the checks they contribute (``paseo_register_doctor_checks``) run against a
:class:`~paseo_hookspecs.doctor.DoctorScope` of this home."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paseo.doctor.model import Check, DoctorContext

if TYPE_CHECKING:
    from paseo.plugins import PaseoPluginManager

CALL_WAIT = 10.0


def plugin_manager(context: DoctorContext) -> tuple[PaseoPluginManager | None, str | None]:
    """The loaded manager, or ``None`` and why loading failed (strict mode)."""
    cached = context.cache.get("plugins")
    if cached is not None:
        manager, error = cached
        return manager, error
    from paseo.config import load_config
    from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError

    loaded = load_config(context.layout.config, context.env, home=context.home)
    result = PaseoPluginManager(
        LoadPolicy.from_environment(
            plugins_enabled=loaded.plugins_enabled, entries=loaded.plugin_entries
        )
    )
    outcome: tuple[PaseoPluginManager | None, str | None]
    try:
        result.load_all()
        outcome = (result, None)
    except PluginLoadError as exc:
        outcome = (None, str(exc))
    context.cache["plugins"] = outcome
    return outcome


class Scope:
    """:class:`~paseo_hookspecs.doctor.DoctorScope` over the doctor's context."""

    def __init__(self, context: DoctorContext) -> None:
        self._context = context

    @property
    def home(self) -> Any:
        return self._context.home

    @property
    def daemon_running(self) -> bool:
        return self._context.answering

    def http_url(self, path: str) -> str | None:
        from paseo.doctor.served import tcp_address

        address = tcp_address(self._context) if self._context.answering else None
        return None if address is None else f"http://{address.listen_form()}{path}"

    def call(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float = CALL_WAIT
    ) -> Any:
        from paseo_hookspecs.errors import Unavailable

        from paseo.client.light import LightClient

        if not self._context.answering:
            raise Unavailable("the daemon is not running")
        with LightClient(None, home=self.home, env={}, request_timeout=timeout) as client:
            return client.call(method, params)


def checks(context: DoctorContext) -> list[Check]:
    """Every contributed check's findings, under the group each names."""
    manager, _error = plugin_manager(context)
    if manager is None:  # the providers group reports the load failure
        return []
    scope = Scope(context)
    results: list[Check] = []
    for plugin, check in manager.doctor_checks():
        try:
            findings = list(check.run(scope))
        except Exception as exc:  # noqa: BLE001 - a plugin's fault: named, the others run
            results.append(
                Check(
                    check.group,
                    plugin,
                    "fail",
                    f"plugin {plugin!r}'s check failed: {type(exc).__name__}: {exc}",
                    f"report it to the maintainers of {plugin!r}",
                )
            )
            continue
        results += [
            Check(check.group, finding.name, finding.status, finding.found, finding.fix)
            for finding in findings
        ]
    return results
