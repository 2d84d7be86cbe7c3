"""A running tool-audit server for the Python tests: ``node bin/tool-audit.mjs serve`` on a free
port with its own embedded ClickHouse, consuming its own Kafka topic from the real broker when
KAFKA_BROKERS is set (npm test sets it). Rows are read back through the read API."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `tool-audit serve` process."""

    def __init__(self, port: Optional[int] = None, kafka: bool = False) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.topic = f"pytest.packets.{uuid.uuid4().hex[:8]}"
        self.dir = tempfile.mkdtemp(prefix="tool-audit-pytest-")
        env = dict(os.environ, PORT=str(self.port), HOST="127.0.0.1", TOOL_AUDIT_DATA_DIR=self.dir, LOG_LEVEL="warn",
                   ANALYZER_ENABLED="false", DEDUP_INDEX_INTERVAL_MS="0", TOOL_AUDIT_API_KEYS="")
        env.pop("KAFKA_BROKERS", None)
        if kafka:
            env.update(KAFKA_BROKERS=os.environ["KAFKA_BROKERS"], KAFKA_TOPIC=self.topic, KAFKA_DLQ_TOPIC=self.topic + ".dlq",
                       KAFKA_GROUP_ID=f"pytest-{self.topic}", KAFKA_TOPIC_PARTITIONS="2")
        self.log = open(Path(self.dir) / "server.log", "w")
        self.proc = subprocess.Popen(["node", str(REPO / "bin" / "tool-audit.mjs"), "serve"], cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {Path(self.dir, 'server.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("server not ready in 60 s")

    def get(self, path: str) -> Dict[str, Any]:
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def task(self, task_id: str) -> Dict[str, Any]:
        return self.get(f"/v1/tasks/{urllib.request.quote(task_id, safe='')}?limit=1000")

    def wait_for(self, task_id: str, calls: int, outputs: int = 0, timeout_s: float = 30) -> Dict[str, Any]:
        """The task once it has at least this many calls and outputs (Kafka ingest is asynchronous)."""
        deadline = time.monotonic() + timeout_s
        while True:
            t = self.task(task_id)
            if (len(t["invocations"]) >= calls and len(t["outputs"]) >= outputs) or time.monotonic() > deadline:
                return t
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def server():
    s = Server(kafka=bool(os.environ.get("KAFKA_BROKERS")))
    yield s
    s.stop()


@pytest.fixture
def task_id() -> str:
    return f"py-{uuid.uuid4().hex[:12]}"


def args_key(args: Any) -> str:
    """A key for args that survives the read API's JSON (which may write 1.0 back as 1)."""
    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v
    return json.dumps(norm(args), sort_keys=True)


def by_args(invocations: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {args_key(i["args"]): i for i in invocations}
