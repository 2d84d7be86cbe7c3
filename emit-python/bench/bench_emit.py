"""Added time per wrapped call: the same tool called bare and through the emitter (decorator,
sync), interleaved, delivery in the background to a running tool-audit server over HTTP (or to
memory with --sink memory). Prints p50/p99 of the difference and the delivery counters.

    python emit-python/bench/bench_emit.py --url http://127.0.0.1:8080 --calls 20000
"""
import argparse
import statistics
import time
import uuid

from tool_audit_emit import AuditEmitter, MemoryTransport


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default=None, help="tool-audit server; default: an in-memory sink")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=2000)
    a = ap.parse_args()
    sink = {"http": {"url": a.url}} if a.url else {"transport": MemoryTransport()}
    audit = AuditEmitter("gateway", "bench", "bench-1", max_buffered=1_000_000, **sink)

    def search_web(query, top_k=10, filters=None):
        return {"status": "success", "result": [{"url": f"https://x.example/{query}/{i}"} for i in range(3)], "metadata": {"result_count": 3}}

    wrapped = audit.tool("search_web")(search_web)
    bare, audited = [], []
    task = f"bench-{uuid.uuid4().hex[:8]}"
    with audit.task(task):
        for i in range(a.warmup + a.calls):
            args = (f"query {i} Zürich", 10, {"lang": "en", "safe": True})
            t0 = time.perf_counter_ns()
            search_web(*args)
            t1 = time.perf_counter_ns()
            wrapped(*args)
            t2 = time.perf_counter_ns()
            if i >= a.warmup:
                bare.append(t1 - t0)
                audited.append(t2 - t1)
    added = [w - b for w, b in zip(audited, bare)]
    t_flush = time.perf_counter()
    ok = audit.flush(120)
    flush_s = time.perf_counter() - t_flush
    audit.close()
    us = lambda ns: ns / 1000
    print(f"calls measured: {a.calls} (after {a.warmup} warm-up), sink: {a.url or 'memory'}")
    print(f"bare tool      p50 {us(pct(bare, .5)):.1f} µs  p99 {us(pct(bare, .99)):.1f} µs")
    print(f"wrapped tool   p50 {us(pct(audited, .5)):.1f} µs  p99 {us(pct(audited, .99)):.1f} µs")
    print(f"added per call p50 {us(pct(added, .5)):.1f} µs  p99 {us(pct(added, .99)):.1f} µs  mean {us(statistics.fmean(added)):.1f} µs")
    print(f"drained after the loop in {flush_s:.2f} s (flush ok: {ok}); stats {audit.stats()}")


if __name__ == "__main__":
    main()
