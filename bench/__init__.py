"""Berth's benchmarks: engine-only latency (engine.py) and the side-by-side benchmark
against kube-scheduler on a real control plane (run.py; see bench/results/README.md)."""
