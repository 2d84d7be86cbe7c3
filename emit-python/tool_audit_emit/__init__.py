"""tool-audit emitter for Python orchestrators (the counterpart of ``@tool-audit/emit``).

    from tool_audit_emit import AuditEmitter

    audit = AuditEmitter("gateway", "QA_Agent", http={"url": "http://tool-audit:8080", "api_key": KEY})

    @audit.tool("search_web", timeout_s=10)
    def search_web(query: str, top_k: int = 10): ...

    with audit.task("task-42"):
        search_web("latest revenue")
"""
from ._budget import BudgetDeniedError
from ._emitter import AuditEmitter, Call, EmitterTimeoutError
from ._packets import args_hash, canonical_args, status_of_category
from ._result import AuditResult, audit_result
from ._transports import DeliveryError, HttpTransport, KafkaTransport, MemoryTransport

__all__ = [
    "AuditEmitter",
    "AuditResult",
    "BudgetDeniedError",
    "Call",
    "DeliveryError",
    "EmitterTimeoutError",
    "HttpTransport",
    "KafkaTransport",
    "MemoryTransport",
    "args_hash",
    "audit_result",
    "canonical_args",
    "status_of_category",
]
