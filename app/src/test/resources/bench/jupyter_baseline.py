"""Baseline for the benchmark: a Jupyter kernel's start time and execute_interactive round trip.

Usage: python3 jupyter_baseline.py CALLS  -> one JSON line {"start_ms": [...], "exec_ms": [...]}
Uses Debian's python3-ipykernel and python3-jupyter-client.
"""
import json
import sys
import time

from jupyter_client.manager import KernelManager

calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
starts = []
execs = []
for round_ in range(3):
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    starts.append((time.perf_counter() - t0) * 1000)
    if round_ == 0:
        for i in range(calls + 20):
            t = time.perf_counter()
            kc.execute_interactive("print(1)", output_hook=lambda msg: None, timeout=30)
            if i >= 20:
                execs.append((time.perf_counter() - t) * 1000)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
print(json.dumps({"start_ms": starts, "exec_ms": execs}))
