"""The ``acp`` provider: drives any Agent Client Protocol agent program over stdio.

Use it through a custom provider in ``config.json``::

    "agents": {"providers": {"claude-acp": {
        "extends": "acp", "label": "Claude ACP", "command": ["claude-agent-acp"]}}}
"""

from paseo_acp.provider import AcpProvider
from paseo_acp.session import AcpSession

__all__ = ["AcpProvider", "AcpSession"]
