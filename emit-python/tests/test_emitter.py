"""The Python emitter against the real broker and a running server: exactly-once rows, a tool
that raises, a tool that times out, the server down. The oracle for args is the json module."""
import asyncio
import hashlib
import json
import os
import time

import pytest

from conftest import Server, args_key, by_args, free_port
from tool_audit_emit import AuditEmitter, EmitterTimeoutError, audit_result


def sha(args):
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode("utf-8")).hexdigest()


def task_when(server, task_id, ready, seconds=20):
    """The task view once ready(view) holds, or as it is after `seconds` (the asserts then say what is missing)."""
    deadline = time.time() + seconds
    while True:
        t = server.task(task_id)
        if ready(t) or time.time() > deadline:
            return t
        time.sleep(0.2)


def emitter(server, **kw):
    return AuditEmitter("gateway", "QA_Agent", "gateway-py-1", http={"url": server.url}, linger_s=0.01, **kw)


def test_http_sync_async_and_context_manager_land_exactly_once(server, task_id):
    audit = emitter(server)

    @audit.tool("search_web")
    def search_web(query, top_k=10):
        return {"status": "success", "result": [{"url": f"https://x.example/{query}"}], "metadata": {"result_count": 1}}

    @audit.tool()
    async def summarize(doc, **opts):
        await asyncio.sleep(0)
        return audit_result("a summary", cost_usd=0.25, tokens_used={"input_tokens": 812, "output_tokens": 64})

    expected = []
    with audit.task(task_id):
        for i in range(10):
            r = search_web(f"q{i} Zürich 🚀", top_k=i)
            assert r["status"] == "success"  # the tool's value, unchanged
            expected.append({"query": f"q{i} Zürich 🚀", "top_k": i})
        for i in range(5):
            assert asyncio.run(summarize(f"doc {i}", ratio=1.0, n=i)) == "a summary"
            expected.append({"doc": f"doc {i}", "ratio": 1.0, "n": i})
    with audit.call("fetch_url", {"url": "https://x.example"}, task_id=task_id) as call:
        call.set_result("<html>ok</html>")
    expected.append({"url": "https://x.example"})
    assert audit.flush(20)
    audit.close()
    assert audit.stats()["delivered"] == 16 + 16 and audit.stats()["dropped"] == 0

    t = server.wait_for(task_id, 16, 16)
    time.sleep(0.5)
    t = server.task(task_id)
    assert len(t["invocations"]) == 16
    assert len({i["call_id"] for i in t["invocations"]}) == 16
    rows = by_args(t["invocations"])
    for args in expected:
        row = rows[args_key(args)]
        assert row["args_hash"] == sha(args)
        assert row["status"] == "success" and row["error"] is None
        assert row["orchestrator"] == "gateway" and row["instance_id"] == "gateway-py-1"
    assert rows[args_key(expected[10])]["cost_usd"] == 0.25
    assert rows[args_key(expected[0])]["result_summary"] == {"result_count": 1}
    assert len(t["outputs"]) == 16


def test_a_tool_that_raises_or_returns_an_error_envelope(server, task_id):
    audit = emitter(server)

    @audit.tool("run_python")
    def run_python(code):
        raise ValueError("SyntaxError: invalid syntax")

    @audit.tool("search_web")
    def limited(query):
        return {"status": "error", "error_category": "rate_limit", "message": "429 from provider", "retryable": True}

    with audit.task(task_id):
        with pytest.raises(ValueError, match="invalid syntax"):
            run_python("print(")
        assert limited("q")["error_category"] == "rate_limit"
        with pytest.raises(KeyError):
            with audit.call("lookup", {"k": 1}):
                raise KeyError("k")
    audit.close(20)
    t = server.wait_for(task_id, 3)
    rows = {i["tool_id"]: i for i in t["invocations"]}
    assert rows["run_python"]["status"] == "error" and rows["run_python"]["error"] == "SyntaxError: invalid syntax"
    assert rows["search_web"]["status"] == "rate_limited" and rows["search_web"]["error"] == "429 from provider"
    assert rows["search_web"]["result_summary"] == {"error_category": "rate_limit", "retryable": True}
    assert rows["lookup"]["status"] == "error"
    assert t["outputs"] == []


def test_a_tool_that_times_out(server, task_id):
    audit = emitter(server)

    @audit.tool("slow_async", timeout_s=0.2)
    async def slow_async(n):
        await asyncio.sleep(5)

    @audit.tool("slow_sync", timeout_s=0.2)
    def slow_sync(n):
        time.sleep(1)
        return "late"

    @audit.tool("own_timeout")
    def own_timeout(n):
        raise TimeoutError("upstream read timed out")

    with audit.task(task_id):
        started = time.monotonic()
        with pytest.raises(EmitterTimeoutError):
            asyncio.run(slow_async(1))
        with pytest.raises(EmitterTimeoutError):
            slow_sync(2)
        assert time.monotonic() - started < 2
        with pytest.raises(TimeoutError, match="upstream"):
            own_timeout(3)
    audit.close(20)
    t = server.wait_for(task_id, 3)
    rows = {i["tool_id"]: i for i in t["invocations"]}
    assert {r["status"] for r in rows.values()} == {"timeout"}
    assert rows["slow_async"]["duration_ms"] >= 200 and rows["slow_async"]["error"] == "slow_async timed out after 0.2 s"
    assert rows["own_timeout"]["error"] == "upstream read timed out"


@pytest.mark.skipif(not os.environ.get("KAFKA_BROKERS"), reason="needs the broker (npm test starts it)")
def test_kafka_delivery_exactly_once(server, task_id):
    audit = AuditEmitter("kernel", "L", kafka={"brokers": os.environ["KAFKA_BROKERS"], "topic": server.topic}, linger_s=0.01)

    @audit.tool("search_web")
    def search(query, page):
        return f"results for {query}"

    with audit.task(task_id):
        for i in range(50):
            assert search("kafka", i) == "results for kafka"
    assert audit.flush(30)
    audit.close()
    assert audit.stats()["delivered"] == 100
    t = server.wait_for(task_id, 50, 50)
    time.sleep(1)
    t = server.task(task_id)
    assert len(t["invocations"]) == 50 and len({i["call_id"] for i in t["invocations"]}) == 50
    assert sorted(i["args"]["page"] for i in t["invocations"]) == list(range(50))
    for i in t["invocations"]:
        assert i["args_hash"] == sha({"query": "kafka", "page": i["args"]["page"]}) and i["orchestrator"] == "kernel"


def test_server_down_tool_still_returns_and_packets_arrive_after_it_comes_back(task_id):
    port = free_port()
    audit = AuditEmitter("scheduler", "S", http={"url": f"http://127.0.0.1:{port}", "timeout_s": 2}, max_buffered=20, linger_s=0.01, retry_max_s=0.2)
    ids = []
    slowest = 0.0
    with audit.task(task_id):
        for i in range(30):
            started = time.perf_counter()
            with audit.call("ping", {"i": i}) as call:
                call.set_result(None)  # no content: one packet per call
            slowest = max(slowest, time.perf_counter() - started)
            ids.append(call.call_id)
    assert slowest < 0.05  # the tool never waits for the sink
    time.sleep(0.3)
    s = audit.stats()
    assert s["dropped"] == 10 and s["buffered"] == 20 and s["delivered"] == 0 and s["failed_batches"] >= 1
    server = Server(port=port)
    try:
        assert audit.flush(30)
        assert audit.stats() == {"enqueued": 30, "delivered": 20, "rejected": 0, "dropped": 10, "failed_batches": s["failed_batches"] + audit.stats()["failed_batches"] - s["failed_batches"], "buffered": 0}
        t = server.wait_for(task_id, 20)
        assert sorted(i["call_id"] for i in t["invocations"]) == sorted(ids[:20])
    finally:
        audit.close()
        server.stop()


def test_an_approval_is_sent_with_the_call_and_served_by_the_task_view(server, task_id):
    from datetime import datetime, timedelta, timezone

    audit = emitter(server)
    at = datetime(2026, 11, 22, 11, 30, 0, 250000, tzinfo=timezone(timedelta(hours=1)))
    with audit.call("wire_transfer", {"amount": 12.5}, task_id=task_id, approval={"approved_by": "dana", "approved_at": at, "reference": "CHG-7"}) as call:
        call.set_result({"status": "success", "result": "sent"})
    with audit.call("wire_transfer", {"amount": 1}, task_id=task_id, approval={"approved_by": "Zoë", "approved_at": "2026-11-22T10:30:00Z"}) as call:
        call.set_result("sent")
    with audit.call("wire_transfer", {"amount": 2}, task_id=task_id) as call:
        call.set_result("sent")
    for bad in ({"approved_by": "dana"}, {"approved_by": "", "approved_at": at}, {"approved_by": "x", "approved_at": datetime(2026, 1, 1)}, {"approved_by": "x", "approved_at": "soon"}, {"approved_by": "x", "approved_at": at, "by": 1}):
        with pytest.raises(ValueError, match="approval"):
            audit.call("wire_transfer", {}, task_id=task_id, approval=bad)
    assert audit.flush(20)
    audit.close()
    t = server.wait_for(task_id, 3, 3)
    rows = by_args(t["invocations"])
    assert rows[args_key({"amount": 12.5})]["approval"] == {"approved_by": "dana", "approved_at": "2026-11-22T10:30:00.250Z", "reference": "CHG-7"}
    assert rows[args_key({"amount": 1})]["approval"] == {"approved_by": "Zoë", "approved_at": "2026-11-22T10:30:00.000Z"}
    assert rows[args_key({"amount": 2})]["approval"] is None


def test_an_agent_run_names_its_task(server, task_id, caplog):
    audit = emitter(server)
    with audit.call("lookup", {"key": "k2"}, task_id=task_id) as call:
        call.set_result("v2")
    run_id = audit.record_run(task_id, "Refund request #4411", 4000.4)
    audit.record_run(task_id, "look up the order", 12, agent_id="researcher", error="gave up")
    assert audit.record_run(task_id, "", 1.0) is None
    assert audit.record_run(task_id, "n", -1) is None
    assert audit.record_run(task_id, "n", 1.0, run_id="nope") is None
    assert "agent run not recorded" in caplog.text
    assert audit.flush(20)
    audit.close()
    server.wait_for(task_id, 1, 0)
    t = task_when(server, task_id, lambda t: len(t["agent_runs"]) == 2)
    # Both end now; the first started 4 s before: it is the outermost and names the task.
    assert t["name"] == "Refund request #4411" and t["agent_id"] == audit.agent_id
    assert [(r["run_id"], r["name"], r["duration_ms"], r["status"], r["error"]) for r in t["agent_runs"]] == [
        (run_id, "Refund request #4411", 4000, "success", None),
        (t["agent_runs"][1]["run_id"], "look up the order", 12, "error", "gave up"),
    ]


def test_a_model_turn_is_served_beside_the_call_it_asked_for(server, task_id, caplog):
    audit = emitter(server)
    turn_id = audit.record_turn(task_id, "gpt-4o-mini", 640.2, provider="openai", input_tokens=900, output_tokens=30, requested_tool_calls=[{"id": "tc-9", "tool_id": "lookup"}])
    with audit.call("lookup", {"key": "k1"}, task_id=task_id) as call:
        call.set_result({"status": "success", "result": "v1", "metadata": {"tool_call_id": "tc-9"}})
    assert audit.record_turn(task_id, "", 1.0) is None
    assert audit.record_turn(task_id, "m", 1.0, input_tokens=-1) is None
    assert "model turn not recorded" in caplog.text
    assert audit.flush(20)
    audit.close()
    server.wait_for(task_id, 1, 1)
    t = task_when(server, task_id, lambda t: t["model_turns"])
    [turn] = t["model_turns"]
    [call] = t["invocations"]
    assert turn["turn_id"] == turn_id and turn["model"] == "gpt-4o-mini" and turn["input_tokens"] == 900 and turn["output_tokens"] == 30
    # Priced by the server's table: gpt-4o-mini at 0.15 in / 0.60 out per million tokens.
    assert abs(turn["cost_usd"] - (900 * 0.15 + 30 * 0.6) / 1e6) < 1e-12 and turn["cost_source"] == "price_table"
    assert turn["requested_tool_calls"] == [{"id": "tc-9", "tool_id": "lookup", "call_id": call["call_id"]}]


def test_a_model_turns_messages_are_kept_with_their_secrets_out(server, task_id):
    # As OpenAI's SDK gives them: the tool call's arguments are JSON text, the key escaped inside.
    secret_args = {"user": "ana", "password": "Opaque-Pw-2026-xyz"}
    key = "sk-proj-" + "Xy7Qw3Lm9Pz2" * 4
    said = [{"role": "user", "content": f"my key is {key}"}, {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "login", "arguments": json.dumps(secret_args)}}]}]
    audit = emitter(server)
    ids = [audit.record_turn(task_id, "gpt-4o-mini", 5.0, messages=said), audit.record_turn(task_id, "gpt-4o-mini", 5.0)]
    assert audit.record_turn(task_id, "m", 1.0, messages={"not json": float("nan")}) is None
    assert audit.flush(20)
    audit.close()
    t = task_when(server, task_id, lambda t: len(t["model_turns"]) == 2)
    turns = {x["turn_id"]: x for x in t["model_turns"]}
    assert set(turns) == set(ids) and turns[ids[1]]["messages"] is None
    text = turns[ids[0]]["messages"]
    # Redacted by the server (this emitter does not redact), still the messages: each JSON text
    # inside still JSON.
    assert "Opaque-Pw-2026-xyz" not in text and key not in text and "[redacted:" in text
    [user, asked] = json.loads(text)
    assert user["role"] == "user" and json.loads(asked["tool_calls"][0]["function"]["arguments"])["user"] == "ana"
