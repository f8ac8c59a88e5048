"""engram.cli: the `engram` command.

One BLAS thread per process unless told otherwise: recall's vector search is a
single matrix-vector product per query, and splitting it over two busy cores
makes its tail wait for the slower one (measured by bench.recall_latency). Set before numpy
loads; an explicit OPENBLAS_NUM_THREADS wins.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
