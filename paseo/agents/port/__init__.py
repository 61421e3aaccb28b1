"""The kernel side of the agent port (:mod:`paseo_hookspecs.agents`).

- :mod:`.subscribers` — :class:`~paseo_hookspecs.agents.AgentEvents`: the feed's facts put in
  each subscriber's own bounded queue, delivered by its own task;
- :mod:`.control` — :class:`~paseo_hookspecs.agents.AgentControl` over the agent service, and
  :class:`~.control.KernelAgents`, both halves as ``DaemonContext.agents``.
"""
