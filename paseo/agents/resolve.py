"""Naming an agent: by full id, by a unique prefix of its id, or by its exact title.

The server applies this rule to every ``agentId`` it receives, so the CLI and every other
client resolve names the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.records import AgentRecord


def resolve_agent(reference: str, agents: Iterable[AgentRecord]) -> AgentRecord:
    """The one agent ``reference`` names.

    Order: exact id; else the only id starting with ``reference``; else the only agent titled
    ``reference`` (an active one wins over archived ones of the same title). ``NotFound`` when
    nothing matches, ``InvalidParams`` (listing the candidates) when the name is ambiguous.
    """
    ref = reference.strip()
    every = list(agents)
    for agent in every:
        if agent.id == ref:
            return agent
    lowered = ref.lower()
    by_prefix = [agent for agent in every if agent.id.lower().startswith(lowered)] if ref else []
    if len(by_prefix) == 1:
        return by_prefix[0]
    if len(by_prefix) > 1:
        raise _ambiguous(ref, by_prefix)
    by_title = [agent for agent in every if agent.title is not None and agent.title == ref]
    active = [agent for agent in by_title if agent.archivedAt is None]
    chosen = active or by_title
    if len(chosen) == 1:
        return chosen[0]
    if len(chosen) > 1:
        raise _ambiguous(ref, chosen)
    raise NotFound(
        f"no agent is named {ref!r} (by id, id prefix or title); list them with `paseo ls -a`",
        data={"agentId": ref},
    )


def _ambiguous(ref: str, candidates: list[AgentRecord]) -> InvalidParams:
    shown = ", ".join(
        f"{agent.id[:8]}" + (f" ({agent.title})" if agent.title else "") for agent in candidates[:5]
    )
    more = f" and {len(candidates) - 5} more" if len(candidates) > 5 else ""
    return InvalidParams(
        f"{ref!r} names {len(candidates)} agents: {shown}{more}; give more of the id",
        data={"agentId": ref, "candidates": [agent.id for agent in candidates]},
    )
