"""A Python host whose client can ask its person (MCP elicitation, form mode), through the official `mcp` SDK.

Usage: elicit_client.py CAIRN PROJECT. Runs three calls and prints one JSON object with each call's structured result,
each run's history, and every elicitation request received (message and requested schema):
  asked    start_workflow gate {ask_person: true}; the form is accepted: approve, comment "lgtm".
  plain    start_workflow gate without ask_person (no form expected).
  declined start_workflow draft {ask_person: true} pauses at its AI step; advance_run answers it; the form that
           follows is declined.
"""

import asyncio
import json
import os
import sys

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def structured(result):
    # The SDK's 1.x spells the field structuredContent, 2.x structured_content.
    return getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)


async def main() -> None:
    cairn, project = sys.argv[1:3]
    server = StdioServerParameters(command=cairn, args=["roscoe", "mcp"], env=dict(os.environ))
    asked = []
    answers = []

    async def on_elicit(context, params):
        schema = getattr(params, "requested_schema", None) or getattr(params, "requestedSchema", None)
        if hasattr(schema, "model_dump"):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        asked.append({"message": params.message, "schema": schema})
        action, content = answers.pop(0)
        return types.ElicitResult(action=action, content=content)

    out = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            await session.initialize()

            async def call(tool, args):
                return structured(await session.call_tool(tool, {"cwd": project, **args}))

            answers.append(("accept", {"decision": "approve", "comment": "lgtm"}))
            out["asked"] = await call("start_workflow", {"id": "gate", "ask_person": True})
            out["askedHistory"] = await call("get_run_history", {"run_id": out["asked"]["runId"]})
            out["plain"] = await call("start_workflow", {"id": "gate"})
            started = await call("start_workflow", {"id": "draft", "ask_person": True})
            answers.append(("decline", None))
            out["declined"] = await call("advance_run", {"run_id": started["runId"], "response": "A draft."})
    out["elicitations"] = asked
    print(json.dumps(out))


asyncio.run(main())
