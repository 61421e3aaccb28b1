"""A fake Paseo Hub for tests: the Hub's daemon-facing wire, faithful to
``reference/hub-protocol.md`` (enrollment, the daemon socket, revocation, the execution MCP
endpoint), with knobs for the failures a real network produces.

::

    async with FakeHub() as hub:
        token = hub.issue_token()
        ...  # paseo hub connect hub.url --token token
        daemon_id = await hub.wait_for(lambda: next(iter(hub.daemons), None))
        await hub.wait_connected(daemon_id)
        answer = await hub.create(daemon_id, prompt="hello", cwd="/tmp/repo")

Usable by third parties: it depends on the standard library and websockets only.
"""

from paseo.testing.fake_hub.hub import API_KEY, FakeHub, RequestLost
from paseo.testing.fake_hub.state import Daemon, Execution

__all__ = ["API_KEY", "Daemon", "Execution", "FakeHub", "RequestLost"]
