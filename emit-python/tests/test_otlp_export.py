"""Python's opentelemetry-sdk with the OTLP/HTTP protobuf exporter, exporting an agent run's
spans to POST /v1/traces: each tool span is one row whose call_id is uuid5(namespace,
trace_id + span_id) and whose args hash is the json module's; re-export adds nothing."""
import hashlib
import json
import time
import uuid

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

NAMESPACE = uuid.UUID("6f1b6f2e-9a57-5c1e-8d0a-7c6f746c7370")  # docs/emitters.md: OTLP call_id derivation


def test_python_sdk_export_of_an_agent_run(server, task_id):
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "gateway", "service.instance.id": "gw-3"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("agent")
    calls = [("search_web", {"query": "naïve café", "top_k": 5}, '["https://a.example"]', None),
             ("run_python", {"code": "1/0"}, None, "ZeroDivisionError"),
             ("summarize", {"doc": "d", "ratio": 0.5}, "short text", None)]
    with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"}):
        with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}):
            pass
        for tool, args, result, error in calls:
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.call.arguments": json.dumps(args),
                     "gen_ai.agent.name": "QA_Agent", "tool_audit.task_id": task_id, "gen_ai.usage.input_tokens": 7}
            if result is not None:
                attrs["gen_ai.tool.call.result"] = result
            with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attrs) as span:
                time.sleep(0.01)
                if error:
                    span.set_attribute("error.type", error)
                    span.set_status(Status(StatusCode.ERROR, "division by zero"))
    spans = memory.get_finished_spans()
    exporter = OTLPSpanExporter(endpoint=server.url + "/v1/traces")
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert exporter.export(spans) == SpanExportResult.SUCCESS  # re-export: a redelivery

    t = server.wait_for(task_id, 3, 2)
    time.sleep(0.5)
    t = server.task(task_id)
    assert len(t["invocations"]) == 3 and len(t["outputs"]) == 2
    rows = {i["call_id"]: i for i in t["invocations"]}
    tool_spans = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    for s, (tool, args, _result, error) in zip(tool_spans, calls):
        ctx = s.get_span_context()
        call_id = str(uuid.uuid5(NAMESPACE, f"{ctx.trace_id:032x}{ctx.span_id:016x}"))
        row = rows[call_id]
        assert row["tool_id"] == tool and row["agent_id"] == "QA_Agent"
        assert row["args"] == args
        assert row["args_hash"] == hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()
        assert row["duration_ms"] == (s.end_time - s.start_time) // 1_000_000  # whole ms of the span
        assert row["orchestrator"] == "gateway" and row["instance_id"] == "gw-3"
        assert row["status"] == ("error" if error else "success")
        assert row["error"] == ("division by zero" if error else None)
        assert row["tokens_used"] == {"input_tokens": 7}
