"""Python's own json as the judge of lossless reads.

post URL KEY          posts tool calls whose args Python wrote (floats, -0.0, exponents, integers
                      past 2^53, non-ASCII), hashed by Python; prints what it sent as JSON.
check URL KEY SENT [FILE...]
                      reads every read path that returns args (and each FILE: an answer printed by
                      the CLI) and checks, for every call, that
                      sha256(json.dumps(args, sort_keys=True)) == args_hash == what Python sent,
                      and that result_summary and tokens_used come back as sent. Prints a report;
                      exits 1 on any mismatch. Standard library only.
"""
import hashlib
import json
import sys
import time
import urllib.request
import uuid

ARGS = [
    {"f1": 1.0, "f2": 1e16, "f3": -0.0, "big": 9223372036854775809, "u": "é😀"},
    {"neg_big": -123456789012345678901234567890, "tiny": 5e-324, "exp": 1.5e-07, "max": 1.7976931348623157e308,
     "nested": {"z": [1.0, -0.0, 2 ** 64, 0.1], "a": "\u2028 \x00 \"q\" \\"}},
    {"keys": {"é": 1, "a": 2, "😀": 3, "\uffff": 4, "Z": 5}, "empty": {}, "list": [], "t": True, "n": None},
    {"query": "latest quarterly revenue", "top_k": 10},
]
SUMMARIES = [
    {"big": 18446744073709551617, "neg_zero": -0.0, "one": 1.0},
    {"exp": 1e+22, "text": "café ✓"},
    {"result_count": 3},
    {},
]
TASK = "lossless-" + uuid.uuid4().hex[:8]
TOOL = "lossless_tool"
AGENT = "lossless_agent"


def args_hash(args):
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode("utf-8")).hexdigest()


def request(url, key, body=None):
    data = None if body is None else body.encode("utf-8")
    req = urllib.request.Request(url, data=data, method="POST" if body is not None else "GET")
    req.add_header("authorization", "Bearer " + key)
    if body is not None:
        req.add_header("content-type", "application/json")
    with urllib.request.urlopen(req, timeout=60) as res:
        return json.loads(res.read().decode("utf-8"))


def post(url, key):
    now = int(time.time() * 1000) - 60_000
    calls, packets = [], []
    for i, args in enumerate(ARGS):
        call_id = str(uuid.uuid4())
        failed = i % 2 == 1
        inv = {
            "call_id": call_id, "task_id": TASK, "tool_id": TOOL, "agent_id": AGENT, "orchestrator": "gateway",
            "args": args, "args_hash": args_hash(args), "status": "error" if failed else "success",
            "duration_ms": 40_000 + i, "result_summary": SUMMARIES[i], "error": "boom" if failed else None,
            "cost_usd": 2.5, "tokens_used": {"input_tokens": 9007199254740991, "output_tokens": 0},
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((now + i * 1000) / 1000)) + ".%03dZ" % ((now + i * 1000) % 1000),
        }
        packets.append({"type": "tool_call", "call_id": call_id, "invocation": inv})
        calls.append({"call_id": call_id, "args_hash": inv["args_hash"], "canonical": json.dumps(args, sort_keys=True),
                      "summary": json.dumps(SUMMARIES[i]), "tokens": json.dumps(inv["tokens_used"]), "failed": failed})
    answer = request(url + "/v1/packets", key, json.dumps(packets))
    if answer["accepted"] != len(packets) or answer["rejected"] != 0:
        print(json.dumps({"error": "not accepted", "answer": answer}))
        sys.exit(1)
    print(json.dumps({"task": TASK, "tool": TOOL, "agent": AGENT, "calls": calls}))


def check_invocations(where, invocations, sent, problems):
    seen = 0
    for inv in invocations:
        want = sent.get(inv["call_id"])
        if want is None:
            continue
        seen += 1
        got = json.dumps(inv["args"], sort_keys=True)
        if args_hash(inv["args"]) != inv["args_hash"] or inv["args_hash"] != want["args_hash"]:
            problems.append({"where": where, "call_id": inv["call_id"], "field": "args", "want": want["canonical"], "got": got})
        if json.dumps(inv["result_summary"]) != want["summary"]:
            problems.append({"where": where, "call_id": inv["call_id"], "field": "result_summary", "want": want["summary"], "got": json.dumps(inv["result_summary"])})
        if json.dumps(inv["tokens_used"]) != want["tokens"]:
            problems.append({"where": where, "call_id": inv["call_id"], "field": "tokens_used", "want": want["tokens"], "got": json.dumps(inv["tokens_used"])})
    return seen


def check(url, key, sent_text, files):
    sent_doc = json.loads(sent_text)
    sent = {c["call_id"]: c for c in sent_doc["calls"]}
    failed = sum(1 for c in sent_doc["calls"] if c["failed"])
    paths = {
        "/v1/tasks/" + sent_doc["task"]: ("invocations", len(sent)),
        "/v1/tools/" + sent_doc["tool"] + "/invocations": ("invocations", len(sent)),
        "/v1/agents/" + sent_doc["agent"] + "/tools": ("invocations", len(sent)),
        "/v1/calls/expensive?threshold_usd=1": ("invocations", len(sent)),
        "/v1/calls/slow?threshold_ms=30000": ("invocations", len(sent)),
        "/v1/calls/failed": ("errors", failed),
    }
    problems, report = [], {}
    for path, (field, expected) in paths.items():
        seen = check_invocations(path, request(url + path, key)[field], sent, problems)
        report[path] = seen
        if seen != expected:
            problems.append({"where": path, "problem": "calls returned", "want": expected, "got": seen})
    for name in files:
        with open(name, encoding="utf-8") as f:
            seen = check_invocations(name, json.load(f)["invocations"], sent, problems)
        report[name] = seen
        if seen != len(sent):
            problems.append({"where": name, "problem": "calls returned", "want": len(sent), "got": seen})
    print(json.dumps({"checked": report, "problems": problems}))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    if sys.argv[1] == "post":
        post(sys.argv[2], sys.argv[3])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
