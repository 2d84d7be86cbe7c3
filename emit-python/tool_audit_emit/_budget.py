"""Budget checks before a tool runs, as the TypeScript emitter's ``budget`` option does: the
emitter asks a tool-audit server's ``POST /v1/budget/check`` and waits a bounded time (default
50 ms). A deny means the tool does not run (:class:`BudgetDeniedError`); when the server cannot
be reached in time, ``on_unavailable`` decides and the fallback is counted. Standard library only.
"""
from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Union

Projected = Union[float, int, Callable[[Dict[str, Any], str], float]]


class BudgetDeniedError(Exception):
    """Raised instead of running a tool a budget denies (or, with ``on_unavailable="deny"``, when
    the server could not be asked). ``decision`` is what the check answered."""

    def __init__(self, tool_id: str, call_id: str, decision: Dict[str, Any]) -> None:
        if decision.get("fallback"):
            msg = f"{tool_id} not run: budget check unavailable ({decision.get('reason')}) and on_unavailable is deny"
        else:
            over = [b.get("budget_id") for b in decision.get("budgets", []) if b.get("mode") == "deny"]
            msg = f"{tool_id} not run: budget {', '.join(str(b) for b in over)} would go over its limit"
        super().__init__(msg)
        self.tool_id, self.call_id, self.decision = tool_id, call_id, decision


class BudgetChecker:
    """Asks the server before each call. ``check`` never raises: a failure is the fallback."""

    def __init__(
        self,
        projected_cost_usd: Projected,
        on_unavailable: str,
        timeout_s: float = 0.05,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        server: Optional[Dict[str, Any]] = None,
    ) -> None:
        url = url or (server or {}).get("url")
        if not url:
            raise ValueError("budget checking needs a server: give budget url or an http transport")
        if on_unavailable not in ("allow", "deny"):
            raise ValueError(f"budget on_unavailable must be 'allow' or 'deny'; got {on_unavailable!r}")
        if not (isinstance(projected_cost_usd, (int, float)) or callable(projected_cost_usd)):
            raise ValueError("budget projected_cost_usd must be a number or a function (args, tool_id) -> float")
        self.endpoint = url.rstrip("/") + "/v1/budget/check"
        self.headers = {"content-type": "application/json"}
        key = api_key or (server or {}).get("api_key")
        if key:
            self.headers["authorization"] = f"Bearer {key}"
        self.projected = projected_cost_usd
        self.on_unavailable = on_unavailable
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._counts = {"checks": 0, "allowed": 0, "warned": 0, "denied": 0, "fallbacks": 0}

    def stats(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def check(self, agent_id: str, tool_id: str, task_id: Optional[str], call_id: str, args: Dict[str, Any]) -> Dict[str, Any]:
        """The decision for a call: the server's, or the fallback's (``fallback`` True, ``reason``)."""
        try:
            projected = self.projected(args, tool_id) if callable(self.projected) else self.projected
            decision = self._ask(agent_id, tool_id, task_id, call_id, float(projected))
            fallback = False
        except Exception as err:  # any failure to get an answer is the fallback's to decide
            decision = {"decision": self.on_unavailable, "budgets": [], "fallback": True, "reason": str(err)}
            fallback = True
        with self._lock:
            self._counts["checks"] += 1
            self._counts["fallbacks"] += fallback
            key = {"deny": "denied", "warn": "warned"}.get(decision["decision"], "allowed")
            self._counts[key] += 1
        return decision

    def _ask(self, agent_id: str, tool_id: str, task_id: Optional[str], call_id: str, projected: float) -> Dict[str, Any]:
        if not (projected >= 0 and projected != float("inf")):
            raise ValueError(f"projected_cost_usd gave {projected}")
        body = json.dumps({"agent_id": agent_id, "tool_id": tool_id, "task_id": task_id, "projected_cost_usd": projected, "call_id": call_id}).encode("utf-8")
        req = urllib.request.Request(self.endpoint, data=body, headers=self.headers, method="POST")
        try:
            # One timeout for connecting and for each read: the answer is a few hundred bytes.
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                text = res.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as err:
            raise RuntimeError(f"POST {self.endpoint} answered {err.code}: {err.read().decode('utf-8', 'replace')[:200]}") from None
        except (urllib.error.URLError, OSError) as err:
            raise RuntimeError(f"no answer from {self.endpoint} within {self.timeout_s} s: {err}") from None
        answer = json.loads(text)
        if answer.get("decision") not in ("allow", "warn", "deny"):
            raise RuntimeError("the answer has no decision")
        budgets: List[Dict[str, Any]] = answer.get("budgets", [])
        return {"decision": answer["decision"], "budgets": budgets, "decision_id": answer.get("decision_id"), "fallback": False}
