"""Chat rooms: messages from people and agents, and ``@mentions`` that prompt agents.

Rooms and their messages are durable files under ``$PASEO_HOME/chat/``; a post that mentions
an agent prompts it through the agent port (``DaemonContext.agents``), bounded by a per-room
rate and a mention-chain depth so agents cannot ping-pong without end. See ``docs/chat.md``.
"""
