"""A real agent loop over `tap mcp`: pydantic-ai's Agent with its TestModel (no LLM), which
calls the named tool of the MCP server with arguments generated from its schema, then
answers with what the tool returned. Prints {"output": ...} as one JSON line.

    pydantic_agent.py SESSION TOOL      # $TAP_BIN, $TAP_HOME
"""

import asyncio
import json
import os
import sys

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.test import TestModel


async def main():
    session, tool = sys.argv[1], sys.argv[2]
    transport = StdioTransport(
        command=os.environ["TAP_BIN"],
        args=["mcp", "--session", session],
        env={k: v for k, v in os.environ.items() if k.startswith("TAP_") or k in ("PATH", "HOME")},
    )
    agent = Agent(TestModel(call_tools=[tool]), toolsets=[MCPToolset(transport, cache_tools=False)])
    async with agent:
        result = await agent.run("Use the tool.")
    print(json.dumps({"output": result.output}), flush=True)


asyncio.run(main())
