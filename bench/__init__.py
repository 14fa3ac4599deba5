"""memstream's benchmark (docs/benchmarks.md): throughput and latency, each reported as a ratio to a
baseline measured in the same run on the same machine.

``memstream bench`` / ``python -m bench`` call :func:`bench.run.run_bench`. Modules:
``workload`` (the events), ``harness`` (isolated topics, databases and processes per phase),
``passthrough`` (the bare Faust agent baseline, run as a process), ``measure`` (timing what
arrives on a topic or in a table), ``baselines`` (the raw COPY baseline), ``latency``
(publish → read-model latency at a fixed rate), ``report`` (table and JSON), ``run`` (phases).

Run on their own (``python -m bench.<name>``): ``judge``, ``embedders``, ``state`` (restore,
memory, recovery), ``cycle_cost`` (a cycle against a user's history) and ``input_cost`` (an
input's state entries as writes pile up between cycles and a session grows).
"""
