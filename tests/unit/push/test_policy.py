"""The attention policy: who hears about an agent that needs attention."""

from __future__ import annotations

from paseo_push.policy import ACTIVE_WINDOW, ClientState, decide

NOW = 1_000_000.0


def client(
    client_id: str = "c1",
    *,
    device: str = "web",
    focused: str | None = None,
    visible: bool = True,
    idle: float = 0.0,
) -> ClientState:
    return ClientState(client_id, device, focused, visible, NOW - idle)


def test_an_active_client_viewing_the_agent_means_nothing_is_sent() -> None:
    clients = [client("viewer", focused="a1"), client("other", idle=1)]
    decision = decide(agent_id="a1", reason="finished", internal=False, clients=clients, now=NOW)
    assert decision.action == "none"


def test_a_viewer_that_is_not_visible_does_not_count_as_viewing() -> None:
    clients = [client("hidden", focused="a1", visible=False)]
    decision = decide(agent_id="a1", reason="finished", internal=False, clients=clients, now=NOW)
    assert (decision.action, decision.client_id) == ("in_app", "hidden")


def test_a_viewer_idle_past_the_window_does_not_count_as_viewing() -> None:
    clients = [client("stale", focused="a1", idle=ACTIVE_WINDOW + 1)]
    decision = decide(agent_id="a1", reason="permission", internal=False, clients=clients, now=NOW)
    assert decision.action == "push"


def test_otherwise_the_most_recent_client_gets_an_in_app_notice() -> None:
    clients = [client("older", idle=60), client("newest", focused="a2", idle=5)]
    decision = decide(agent_id="a1", reason="finished", internal=False, clients=clients, now=NOW)
    assert (decision.action, decision.client_id) == ("in_app", "newest")


def test_errors_reach_a_present_client_in_app() -> None:
    decision = decide(
        agent_id="a1", reason="error", internal=False, clients=[client("c")], now=NOW
    )
    assert (decision.action, decision.client_id) == ("in_app", "c")


def test_a_backgrounded_mobile_app_is_not_present_so_a_push_goes_out() -> None:
    clients = [client("phone", device="mobile", visible=False)]
    decision = decide(agent_id="a1", reason="finished", internal=False, clients=clients, now=NOW)
    assert decision.action == "push"


def test_with_no_client_a_push_goes_out() -> None:
    decision = decide(agent_id="a1", reason="finished", internal=False, clients=[], now=NOW)
    assert decision.action == "push"


def test_errors_are_never_pushed() -> None:
    decision = decide(agent_id="a1", reason="error", internal=False, clients=[], now=NOW)
    assert decision.action == "none"


def test_internal_agents_never_notify() -> None:
    for clients in ([], [client("c")]):
        decision = decide(
            agent_id="a1", reason="permission", internal=True, clients=clients, now=NOW
        )
        assert decision.action == "none"
