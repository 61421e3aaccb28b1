"""``python -m paseo.testing.fake_model``: the fake model server as its own process.

Prints its base URL on the first line of stdout, then serves until stdin reaches end of file
or it gets SIGTERM/SIGINT. Useful to try an agent program offline, and for benchmarks, where a
server thread inside the measuring process would compete with it for the GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from .server import FakeModelServer


async def _serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, done.set)
    # End of stdin (the parent went away) stops the server too.
    loop.add_reader(sys.stdin.fileno(), lambda: done.set() if not sys.stdin.read(1) else None)
    async with FakeModelServer(port=port) as fake:
        print(fake.url, flush=True)
        await done.wait()


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paseo.testing.fake_model", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    args = parser.parse_args()
    asyncio.run(_serve(args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
