"""HUD 0.6's control channel, served from hud-gym without HUD's package (``hud-gym serve
--protocol hud``; docs/hud-protocol.md).

- :mod:`.channel`: the wire (newline-delimited JSON-RPC 2.0 over TCP, 16 MiB frames);
- :mod:`.server`: ``hello``, ``tasks.list`` / ``start`` / ``grade`` / ``cancel``, ``bye``;
- :mod:`.sessions` and :mod:`.episodes`: a session's env, kept across a dropped connection;
- :mod:`.catalog`: the served task set; :mod:`.frames`: screenshots on the wire;
- :mod:`.mcp_tools`: the ``mcp`` capability (the session's env as MCP tools over streamable HTTP);
- :mod:`.tunnel` and :mod:`.peers`: ``tunnel.open`` relays and the same-user check.
"""
