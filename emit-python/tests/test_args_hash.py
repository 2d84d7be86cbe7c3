"""The args_hash vectors (test/fixtures/args_hash.jsonl, made by CPython) hold for the emitter,
and the packet it builds carries the hash of exactly the args it sends."""
import hashlib
import json
from pathlib import Path

from tool_audit_emit import AuditEmitter, MemoryTransport, args_hash, canonical_args

ROOT = Path(__file__).resolve().parents[2]
# The repository's vectors, the same ones test/unit/schemas/canonical-args.test.ts checks.
VECTORS = ROOT / "test" / "fixtures" / "args_hash.jsonl"


def vectors():
    return [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]


def test_vectors_reproduced():
    vs = vectors()
    assert len(vs) >= 10
    for v in vs:
        assert canonical_args(v["args"]) == v["canonical"]
        assert args_hash(v["canonical"]) == v["args_hash"]


def test_packet_args_hash_is_of_the_args_it_carries():
    sink = MemoryTransport()
    audit = AuditEmitter("gateway", "QA_Agent", transport=sink, linger_s=0)
    for v in vectors():
        with audit.call("search_web", v["args"]) as call:
            call.set_result(None)
    assert audit.flush(5)
    packets = [json.loads(value) for _, value in sink.messages]
    assert len(packets) == len(vectors())
    for p, v in zip(packets, vectors()):
        inv = p["invocation"]
        assert inv["args_hash"] == v["args_hash"]
        assert hashlib.sha256(json.dumps(inv["args"], sort_keys=True).encode()).hexdigest() == v["args_hash"]
    audit.close()
