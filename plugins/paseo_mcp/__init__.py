"""The MCP server for agents: agents drive Paseo (sub-agents, schedules, worktrees) through
tools served at ``/mcp/agents`` on the daemon's listen address (docs/mcp.md)."""
