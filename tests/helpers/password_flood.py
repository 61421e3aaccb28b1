"""A wrong-password flood in its own process, so it loads the daemon and not the measuring
client: ``python password_flood.py URL ATTACKERS MAX_SECONDS``.

Prints ``started`` once every attacker was answered at least once, floods until stdin closes
(or ``MAX_SECONDS`` pass), then prints the counts of HTTP statuses received as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import Counter

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus


async def _attacker(url: str, statuses: Counter[int], attackers: int, stop: asyncio.Event) -> None:
    guess = 0
    while not stop.is_set():
        guess += 1
        try:
            ws = await connect(
                url, additional_headers={"Authorization": f"Bearer guess-{guess}"}, open_timeout=10
            )
        except InvalidStatus as exc:
            statuses[exc.response.status_code] += 1
        except (OSError, TimeoutError):
            statuses[0] += 1
        else:
            statuses[101] += 1
            await ws.close()
        if sum(statuses.values()) == attackers:
            print("started", flush=True)


async def main(url: str, attackers: int, max_seconds: float) -> None:
    statuses: Counter[int] = Counter()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    tasks = [
        asyncio.create_task(_attacker(url, statuses, attackers, stop)) for _ in range(attackers)
    ]
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stdin_closed, max_seconds)
    stop.set()
    await asyncio.gather(*tasks)
    print(json.dumps({str(status): count for status, count in statuses.items()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
