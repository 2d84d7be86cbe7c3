"""Reads an export of calls as pandas or DuckDB users would, and judges it on its own.

    python export_check.py parquet FILE   (pyarrow)
    python export_check.py csv FILE       (the csv module)

Prints one JSON object: the rows' call_id, task_id (CSV's \\N as null), created_at (ISO, UTC), args_hash and
args in file order, and the call_ids whose args, encoded as UTF-8, do not hash (SHA-256) to their args_hash.
"""
import csv
import hashlib
import json
import sys


def rows_of_parquet(path):
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    schema = {f.name: str(f.type) for f in table.schema}
    out = []
    for r in table.to_pylist():
        created = r["created_at"]
        out.append({**r, "created_at": created.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created.microsecond // 1000:03d}Z"})
    return out, schema


def rows_of_csv(path):
    csv.field_size_limit(1 << 30)
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f)), {}


def main():
    kind, path = sys.argv[1], sys.argv[2]
    rows, schema = rows_of_parquet(path) if kind == "parquet" else rows_of_csv(path)
    bad = [r["call_id"] for r in rows if hashlib.sha256(r["args"].encode("utf-8")).hexdigest() != r["args_hash"]]
    print(json.dumps({
        "rows": [{"call_id": r["call_id"], "task_id": None if r["task_id"] in (None, "\\N") else r["task_id"], "created_at": r["created_at"], "args_hash": r["args_hash"], "args": r["args"]} for r in rows],
        "bad_hashes": bad,
        "schema": schema,
    }))


main()
