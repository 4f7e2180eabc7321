"""Starts a workflow through the official Python MCP client with a progress callback, as a Python host would.

Usage: progress_client.py CAIRN PROJECT WORKFLOW. Prints one JSON object: the call's structured result and every
progress notification received during the call ({progress, total, message}, in order).
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    cairn, project, workflow = sys.argv[1:4]
    server = StdioServerParameters(command=cairn, args=["roscoe", "mcp"], env=dict(os.environ))
    received = []

    async def on_progress(progress, total, message):
        received.append({"progress": progress, "total": total, "message": message})

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(
                "start_workflow", {"cwd": project, "id": workflow}, progress_callback=on_progress
            )
            # The SDK's 1.x spells the field structuredContent, 2.x structured_content.
            structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
            print(json.dumps({"result": structured, "progress": received}))


asyncio.run(main())
