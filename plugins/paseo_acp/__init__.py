"""The ``acp`` provider: drives any Agent Client Protocol agent program over stdio.

Use it through a custom provider in ``config.json``::

    "agents": {"providers": {"claude-acp": {
        "extends": "acp", "label": "Claude ACP", "command": ["claude-agent-acp"]}}}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paseo_acp.provider import AcpProvider
    from paseo_acp.session import AcpSession

__all__ = ["AcpProvider", "AcpSession"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the daemon imports ``paseo_acp.plugin`` at start-up, and this
    # package's import must not pull the provider in before a provider is needed.
    if name == "AcpProvider":
        from paseo_acp.provider import AcpProvider

        return AcpProvider
    if name == "AcpSession":
        from paseo_acp.session import AcpSession

        return AcpSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
