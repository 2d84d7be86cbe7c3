"""A real Python MCP client (the official `mcp` package) calling tools through tool-audit's gateway.

    python mcp_client.py stdio ARGS_JSON TASK_ID -- <gateway command...>
    python mcp_client.py http  ARGS_JSON TASK_ID URL

Calls `lookup` once per args object in ARGS_JSON with `_meta["tool-audit/task_id"] = TASK_ID`,
then prints one JSON object: the texts answered and Python's own args hashes
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


async def calls(session: ClientSession, args_list, task_id):
    await session.initialize()
    texts = []
    for args in args_list:
        result = await session.call_tool("lookup", args, meta={"tool-audit/task_id": task_id})
        texts.append(result.content[0].text)
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
    hashes = [hashlib.sha256(json.dumps(a, sort_keys=True).encode()).hexdigest() for a in args_list]
    print(json.dumps({"texts": texts, "hashes": hashes}))


asyncio.run(main())
