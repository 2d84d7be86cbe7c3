"""Generates test/fixtures/python-packets.jsonl: tool_call packets written by CPython's json
module, as a Python gateway would send them (floats like 1.0 and 1e+16, big integers, astral
characters in keys, DEL, lone surrogates). Run with python3; the output is committed."""
import hashlib, json, uuid

ARGS = [
    {"f": 1.0, "g": 1e16, "h": 1e-7, "i": 12345678901234567890, "j": -0.0, "k": 2.5e-320},
    {"\U0001F600": 1, "\uffff": 2, "a": 3, "Z": 4, "é": 5},
    {"del": "\x7f", "lone": "\ud800x", "nul": "\x00", "crlf": "a\r\nb", "slash": "a/b"},
    {"sql": "SELECT * FROM t WHERE a = 'x'; DROP TABLE t; --", "code": "def f():\n\treturn {'a': [1, 2]}\n"},
    {"deep": [[[[{"x": [1.5, {"y": None, "b": False, "a": True}]}]]]], "empty": {}, "list": []},
    {"text": "日本語のテキスト", "mixed": "naïve — “quotes” ’ €100", "math": "∑∫√∞"},
]

for i, args in enumerate(ARGS):
    canonical = json.dumps(args, sort_keys=True)
    cid = str(uuid.UUID(int=i + 1))
    inv = {
        "call_id": cid, "task_id": "py-task", "tool_id": "python_execute", "agent_id": "L",
        "orchestrator": "kernel", "args": args,
        "args_hash": hashlib.sha256(canonical.encode()).hexdigest(),
        "status": "success", "duration_ms": 5, "result_summary": {"exit_code": 0, "ratio": 1.0},
        "error": None, "cost_usd": 0.0, "tokens_used": None,
        "created_at": "2026-11-22T10:00:00.123456+00:00",
    }
    packet = json.dumps({"type": "tool_call", "call_id": cid, "invocation": inv})
    print(json.dumps({"packet": packet, "canonical": canonical}))
