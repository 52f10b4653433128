"""The official Python MCP client (mcp 2.3.0) against a stdio server, in both eras.

Usage: python python_clients.py SERVER [ARGS...] -- TOOL JSON_ARGS EXPECTED_KEY

Connects twice: once with the default 2026-07-28 client (server/discover plus the _meta envelope)
and once with the legacy ClientSession (initialize 2025-11-25). Each time it lists the tools,
checks TOOL is among them, calls TOOL with JSON_ARGS and checks the structured result carries
EXPECTED_KEY. Prints one line per check and "N passed, N failed" last; exits 1 on any failure.
"""

import asyncio
import json
import sys

from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


async def modern(params, tool, args, key):
    async with Client(params) as c:
        check("modern: negotiated 2026-07-28", str(c.protocol_version) == "2026-07-28", repr(c.protocol_version))
        tools = await c.list_tools()
        names = [t.name for t in tools.tools]
        check(f"modern: tools/list names {tool}", tool in names, repr(names))
        r = await c.call_tool(tool, args)
        sc = r.structured_content or {}
        check(f"modern: {tool} returns {key}", key in sc and not r.is_error, repr(r))


async def legacy(params, tool, args, key):
    async with stdio_client(params) as (rd, wr), ClientSession(rd, wr) as s:
        init = await s.initialize()
        check("legacy: negotiated 2025-11-25", str(init.protocol_version) == "2025-11-25", repr(init.protocol_version))
        tools = await s.list_tools()
        names = [t.name for t in tools.tools]
        check(f"legacy: tools/list names {tool}", tool in names, repr(names))
        r = await s.call_tool(tool, args)
        sc = r.structured_content or {}
        check(f"legacy: {tool} returns {key}", key in sc and not r.is_error, repr(r))
        bad = await s.call_tool("no-such-tool", {})
        check("legacy: unknown tool is an isError result", bool(bad.is_error), repr(bad))


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    server, tool_spec = argv[:sep], argv[sep + 1:]
    tool, args, key = tool_spec[0], json.loads(tool_spec[1]), tool_spec[2]
    params = StdioServerParameters(command=server[0], args=server[1:])
    for era in (modern, legacy):
        try:
            asyncio.run(era(params, tool, args, key))
        except Exception as e:  # a crash is a failure of that era, reported, not hidden
            check(f"{era.__name__}: session completed", False, repr(e))
    print(f"python-mcp: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
