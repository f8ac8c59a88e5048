"""Engram benchmarks (bench/README.md): each module runs as one command printing JSON lines and a table."""
