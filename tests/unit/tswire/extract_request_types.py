"""Print the ``type`` of every member of the TypeScript ``SessionInboundMessageSchema``.

Run once against the TypeScript repository at the commit the transport follows, to refresh
``ts_request_types.txt`` (see its header)::

    git -C "$TS_REPO" show f3de5689:packages/server/src/shared/messages.ts > /tmp/m.ts
    for f in chat/chat-rpc-schemas schedule/rpc-schemas loop/rpc-schemas; do
      git -C "$TS_REPO" show f3de5689:packages/server/src/server/$f.ts; done > /tmp/rpc.ts
    python tests/unit/tswire/extract_request_types.py /tmp/m.ts /tmp/rpc.ts

Not a test: it reads TypeScript source, which the suite does not have.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def request_types(messages: str, others: str) -> list[str]:
    union = re.search(
        r'export const SessionInboundMessageSchema = z\.discriminatedUnion\("type", \[(.*?)\]\);',
        messages,
        re.S,
    )
    if union is None:
        raise SystemExit("SessionInboundMessageSchema not found")
    source = messages + "\n" + others
    found = []
    for name in re.findall(r"([A-Za-z0-9]+Schema)", union.group(1)):
        match = re.search(
            r"const " + name + r'\b[^=]*=\s*z\s*\.object\(\{\s*type: z\.literal\("([^"]+)"\)',
            source,
        )
        if match is None:
            raise SystemExit(f"no type literal for {name}")
        found.append(match.group(1))
    return sorted(set(found))


if __name__ == "__main__":
    texts = [Path(p).read_text() for p in sys.argv[1:]]
    print("\n".join(request_types(texts[0], "\n".join(texts[1:]))))
