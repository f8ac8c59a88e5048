"""Engram benchmarks (BENCH.md): each module runs as one command printing JSON lines and a table."""
