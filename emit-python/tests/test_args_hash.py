"""The shared vectors (../shared/vectors/args_hash.jsonl, made by CPython) hold for the emitter,
and the packet it builds carries the hash of exactly the args it sends."""
import hashlib
import json
from pathlib import Path

import pytest

from tool_audit_emit import AuditEmitter, MemoryTransport, args_hash, canonical_args

ROOT = Path(__file__).resolve().parents[2]
# The shared vectors beside the repository (CI has them), else the repository's copy of them
# (test/unit/schemas/canonical-args.test.ts checks that the copy equals the shared file).
CANDIDATES = [ROOT.parent / "shared" / "vectors" / "args_hash.jsonl", ROOT / "test" / "fixtures" / "args_hash.jsonl"]


def vectors():
    found = next((p for p in CANDIDATES if p.exists()), None)
    if found is None:
        pytest.skip("no args_hash vectors present")
    return [json.loads(line) for line in found.read_text().splitlines() if line.strip()]


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
