"""Schedules: recurring prompts on a cron (in a time zone) or interval cadence.

Other rooms use :class:`~paseo.schedules.service.ScheduleService` (built by the composition
root with its ports), :class:`~paseo.schedules.ports.ScheduleAgents` (what it needs from the
agents room) and :func:`~paseo.schedules.rpc.method_groups` (its RPC adapter).
"""
