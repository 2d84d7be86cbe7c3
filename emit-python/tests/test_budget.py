"""The Python emitter's budget option, as the TypeScript emitter's tests check it: against a
local HTTP server that answers as told (a deny does not run the tool and records nothing, allow
and warn run it, a server that is down, failing or slower than the bound gives the configured
fallback, counted in stats()), and against a running tool-audit server with a deny budget."""
import asyncio
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import free_port
from tool_audit_emit import AuditEmitter, BudgetDeniedError, MemoryTransport

FIGURES = {"budget_id": "b", "limit_usd": 1, "spent_usd": 0.9, "reserved_usd": 0, "remaining_usd": 0.1, "mode": "deny"}


class Fake:
    """A budget server answering ``answer`` (decision, delay_s, status) and keeping what it saw."""

    def __init__(self):
        self.answer = {"decision": "allow"}
        self.seen = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                fake.seen.append({"path": self.path, "auth": self.headers.get("authorization"), "body": body})
                a = fake.answer
                time.sleep(a.get("delay_s", 0))
                payload = json.dumps({"decision": a["decision"], "budgets": [FIGURES], "decision_id": "d-1"}).encode()
                try:
                    self.send_response(a.get("status", 200))
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the emitter gave up waiting

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def fake():
    f = Fake()
    yield f
    f.httpd.shutdown()


def emitter(fake, **budget):
    transport = MemoryTransport()
    opts = {"projected_cost_usd": lambda args, tool: args.get("n", 0) / 100, "on_unavailable": "allow", "url": fake.url, "api_key": "k-0123456789abcdef", "timeout_s": 2.0}
    opts.update(budget)
    return AuditEmitter("kernel", "QA", transport=transport, linger_s=0.01, budget=opts), transport


def recorded(audit, transport):
    assert audit.flush(5)
    return [json.loads(v) for _, v in transport.messages if json.loads(v)["type"] == "tool_call"]


def test_asks_with_the_call_id_the_call_is_recorded_under_then_runs_the_tool_on_allow(fake):
    fake.answer, fake.seen[:] = {"decision": "allow"}, []
    audit, transport = emitter(fake)
    ran = []

    @audit.tool("search_web")
    def search_web(q, n):
        ran.append(q)
        return "ok"

    with audit.task("T-1"):
        assert search_web("a", n=7) == "ok"
    [seen] = fake.seen
    assert seen["path"] == "/v1/budget/check" and seen["auth"] == "Bearer k-0123456789abcdef"
    [call] = recorded(audit, transport)
    assert seen["body"] == {"agent_id": "QA", "tool_id": "search_web", "task_id": "T-1", "projected_cost_usd": 0.07, "call_id": call["call_id"]}
    assert ran == ["a"] and audit.stats()["budget"] == {"checks": 1, "allowed": 1, "warned": 0, "denied": 0, "fallbacks": 0}


def test_a_deny_does_not_run_the_tool_and_raises_with_the_decision_nothing_recorded(fake):
    fake.answer = {"decision": "deny"}
    audit, transport = emitter(fake)
    ran = []

    @audit.tool("pay")
    async def pay(n):
        ran.append(n)

    with pytest.raises(BudgetDeniedError, match="budget b would go over its limit") as err:
        asyncio.run(pay(n=3))
    assert err.value.decision["decision"] == "deny" and err.value.decision["budgets"] == [FIGURES]
    with pytest.raises(BudgetDeniedError):
        with audit.call("pay", {"n": 3}):
            ran.append("block")
    assert ran == [] and recorded(audit, transport) == []
    assert audit.stats()["budget"]["denied"] == 2


def test_a_warn_runs_the_tool(fake, caplog):
    fake.answer = {"decision": "warn"}
    audit, transport = emitter(fake)
    with caplog.at_level("WARNING", logger="tool_audit_emit"):
        with audit.call("t", {"n": 1}) as call:
            call.set_result("done")
    assert len(recorded(audit, transport)) == 1 and "budget warning" in caplog.text


def test_a_server_slower_than_the_bound_the_fallback_decides_within_about_the_bound(fake):
    fake.answer = {"decision": "deny", "delay_s": 1.0}
    audit, transport = emitter(fake, timeout_s=0.1)
    start = time.monotonic()
    with audit.call("t", {"n": 1}) as call:
        call.set_result("ran")
    assert time.monotonic() - start < 0.8
    assert audit.stats()["budget"] == {"checks": 1, "allowed": 1, "warned": 0, "denied": 0, "fallbacks": 1}
    assert len(recorded(audit, transport)) == 1
    decision = audit.check_budget("t", {"n": 1})
    assert decision["fallback"] is True and decision["decision"] == "allow" and "0.1" in decision["reason"]


def test_a_server_that_is_down_or_answers_an_error_the_fallback_decides(fake):
    fake.answer = {"decision": "allow", "status": 500}
    audit, _ = emitter(fake, on_unavailable="deny")
    with pytest.raises(BudgetDeniedError, match="budget check unavailable .*500"):
        with audit.call("t", {"n": 1}):
            pass
    down, _ = emitter(fake, on_unavailable="deny", url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(BudgetDeniedError, match="on_unavailable is deny"):
        with down.call("t", {"n": 1}):
            pass
    assert down.stats()["budget"]["fallbacks"] == 1


def test_needs_a_server_and_a_valid_fallback():
    with pytest.raises(ValueError, match="needs a server"):
        AuditEmitter("kernel", "QA", transport=MemoryTransport(), budget={"projected_cost_usd": 1, "on_unavailable": "allow"})
    with pytest.raises(ValueError, match="on_unavailable"):
        AuditEmitter("kernel", "QA", transport=MemoryTransport(), budget={"projected_cost_usd": 1, "on_unavailable": "maybe", "url": "http://x"})
    assert AuditEmitter("kernel", "QA", transport=MemoryTransport()).check_budget("t") is None


def test_against_a_running_server_a_deny_budget_stops_calls_beyond_its_limit(server, task_id):
    agent = f"py-budget-{task_id[:8]}"
    body = json.dumps([{"budget_id": f"cap-{agent}", "scope": {"agent_id": agent}, "period": "day", "limit_usd": 0.05, "mode": "deny"}]).encode()
    req = urllib.request.Request(server.url + "/v1/budgets", data=body, headers={"content-type": "application/json"}, method="PUT")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    audit = AuditEmitter("gateway", agent, http={"url": server.url}, linger_s=0.01, budget={"projected_cost_usd": 0.02, "on_unavailable": "allow", "timeout_s": 5})
    ran, denied = 0, 0
    for i in range(4):
        try:
            with audit.call("paid_api", {"i": i}, task_id=task_id) as call:
                ran += 1
                call.set_result(audit_result_with_cost())
        except BudgetDeniedError:
            denied += 1
    # 0.02 a call against 0.05: the largest n with n × 0.02 ≤ 0.05 run, the rest are denied.
    assert (ran, denied) == (2, 2)
    assert audit.flush(20)
    audit.close()
    assert len(server.wait_for(task_id, 2)["invocations"]) == 2


def audit_result_with_cost():
    from tool_audit_emit import audit_result

    return audit_result("ok", cost_usd=0.02)
