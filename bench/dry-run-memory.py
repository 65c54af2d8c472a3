#!/usr/bin/python3
"""bench.py's memory check alone (`dry_run_memory`): on a throwaway cluster, databases of 1,000
and 20,000 users all missing 2+ days, two dry runs each (the webhook on) and one real run to an
outbox; prints their peak RSS (kB) and the mails written.

    /usr/bin/python3 bench/dry-run-memory.py BINARY
"""
import importlib.util
import os
import shutil
import sys
import tempfile

spec = importlib.util.spec_from_file_location("bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

base = tempfile.mkdtemp(prefix="sileme-memory-", dir="/var/tmp")
cluster = bench.Cluster(base)
try:
    dry, real = bench.dry_run_memory(cluster, sys.argv[1], [1000, 20000], 2)
    print(f"dry runs, peak RSS kB: {dry}; real runs (peak RSS kB, mails): {real}")
finally:
    cluster.stop()
    shutil.rmtree(base, ignore_errors=True)
