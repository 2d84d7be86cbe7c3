"""A real Python MCP client (the official `mcp` package) calling tools through tool-audit's gateway.

    python mcp_client.py stdio ARGS_JSON TASK_ID -- <gateway command...>
    python mcp_client.py http  ARGS_JSON TASK_ID URL

Calls a tool once per entry of ARGS_JSON — an args object (tool `lookup`) or
{"tool": name, "arguments": {...}} — with `_meta["tool-audit/task_id"] = TASK_ID`, then prints
one JSON object: the texts answered, whether each was an error, and Python's own args hashes
(sha256 of json.dumps(args, sort_keys=True)), the oracle the stored args_hash must equal.
"""
import asyncio
import hashlib
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def call_of(entry):
    if "tool" in entry and "arguments" in entry:
        return entry["tool"], entry["arguments"]
    return "lookup", entry


async def calls(session: ClientSession, args_list, task_id):
    await session.initialize()
    texts = []
    for entry in args_list:
        tool, args = call_of(entry)
        result = await session.call_tool(tool, args, meta={"tool-audit/task_id": task_id})
        texts.append([result.content[0].text if result.content else "", bool(result.is_error)])
    return texts


async def main():
    mode, args_file, task_id = sys.argv[1:4]
    with open(args_file, encoding="utf-8") as f:
        args_list = json.load(f)
    if mode == "stdio":
        command = sys.argv[sys.argv.index("--") + 1:]
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                texts = await calls(session, args_list, task_id)
    else:
        async with streamable_http_client(sys.argv[4]) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                texts = await calls(session, args_list, task_id)
    hashes = [hashlib.sha256(json.dumps(call_of(e)[1], sort_keys=True).encode()).hexdigest() for e in args_list]
    print(json.dumps({"texts": texts, "hashes": hashes}))


asyncio.run(main())
