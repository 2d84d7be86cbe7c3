"""The Python emitter takes secrets out before a packet leaves the process: the
placeholders are computed here with the standard library's hmac, args_hash is the SHA-256 of the
args json.dumps writes, and no secret is in any packet. (test/integration/emit/python-redaction.test.ts
checks that the redaction is the TypeScript code's, character for character.)"""
import hashlib
import hmac
import json

import pytest

from tool_audit_emit import AuditEmitter, MemoryTransport

KEY = "python-redaction-key-0123"
AWS = "AKIAIOSFODNN7EXAMPLE"
TOKEN = "ghp_" + "a1B2c3D4e5" * 4


def mark(rule, secret):
    return "[redacted:%s:%s]" % (rule, hmac.new(KEY.encode(), secret.encode(), hashlib.sha256).hexdigest()[:16])


def test_packets_carry_placeholders_and_the_hash_of_what_is_sent():
    sink = MemoryTransport()
    audit = AuditEmitter("kernel", "QA", transport=sink, linger_s=0, redaction={"key": KEY, "paths": {"login": ["args.password"]}})
    with audit.call("login", {"user": "ana", "password": "hunter2", "note": "token " + TOKEN, "api_key": "k-314159"}) as call:
        call.set_result({"content": [{"type": "text", "text": "key " + AWS}]})
    with pytest.raises(RuntimeError):
        with audit.call("deploy", {"env": "prod"}):
            raise RuntimeError("denied for " + AWS)
    assert audit.flush(5)
    raw = [value for _, value in sink.messages]
    assert not any(AWS in v or TOKEN in v or "hunter2" in v for v in raw)
    packets = [json.loads(v) for v in raw]
    calls = [p["invocation"] for p in packets if p["type"] == "tool_call"]
    contents = [p["content"] for p in packets if p["type"] == "output_artifact"]
    assert "denied for " + mark("aws_access_key", AWS) in calls[1]["error"]
    assert [json.loads(c) for c in contents] == [{"content": [{"type": "text", "text": "key " + mark("aws_access_key", AWS)}]}]
    inv = calls[0]
    args = {"user": "ana", "password": mark("path", "hunter2"), "note": "token " + mark("github_token", TOKEN), "api_key": mark("secret_name", "k-314159")}
    assert inv["args"] == args
    assert inv["args_hash"] == hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()
    audit.close()


def test_a_bad_key_is_refused_at_once():
    with pytest.raises(ValueError, match="at least 16 characters"):
        AuditEmitter("kernel", "QA", transport=MemoryTransport(), redaction={"key": "short"})


def test_numbers_under_a_secret_name_are_written_as_javascript_writes_them():
    """Ingest (JavaScript) reads the number the emitter sent and redacts String(n): the same placeholder."""
    from tool_audit_emit._redact import Redactor
    r = Redactor({"key": KEY})
    # String(n) in JavaScript, written out: shortest digits then zeros below 1e21, exponent from there.
    for value, js in [(4096, "4096"), (1.5, "1.5"), (1.2345678901234568e20, "123456789012345680000"), (1e21, "1e+21"), (1e-7, "1e-7"), (2.0, "2")]:
        args, _, changed = r.call("t", {"token": value}, None)
        assert changed and args == {"token": mark("secret_name", js)}, (value, args)


def test_a_turns_messages_leave_redacted_when_the_emitter_redacts():
    sink = MemoryTransport()
    audit = AuditEmitter("kernel", "QA", transport=sink, linger_s=0, redaction={"key": KEY})
    # OpenAI's tool call: the arguments are JSON text, so the password's name is escaped there.
    said = [{"role": "user", "content": "use " + TOKEN}, {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "login", "arguments": json.dumps({"password": "hunter2"})}}]}]
    assert audit.record_turn("t1", "gpt-4o", 3.0, messages=said)
    assert audit.flush(5)
    [raw] = [value for _, value in sink.messages]
    text = json.loads(raw)["turn"]["messages"]
    assert TOKEN not in text and "hunter2" not in text
    [user, asked] = json.loads(text)
    assert user["content"] == "use " + mark("github_token", TOKEN)
    # The JSON text inside written back as json.dumps writes it, the value under the name replaced.
    assert asked["tool_calls"][0]["function"]["arguments"] == json.dumps({"password": mark("secret_name", "hunter2")})
