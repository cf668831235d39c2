"""A hud-gym env as an MCP server (``hud-gym serve GYM --mcp``): the tools of :mod:`.tools`
over stdio or streamable HTTP (:mod:`.server`). Needs the ``mcp`` extra (``pip install 'hud-gym[mcp]'``)."""

from hud_gym.protocols.mcp.server import DEFAULT_MAX_MESSAGE_SIZE, MCP_PATH, READY_PREFIX, build_server, http_app, serve
from hud_gym.protocols.mcp.tools import TOOL_NAMES, add_tools, tool_result

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "MCP_PATH",
    "READY_PREFIX",
    "TOOL_NAMES",
    "add_tools",
    "build_server",
    "http_app",
    "serve",
    "tool_result",
]
