"""Invariants of the deployment files (Dockerfile, compose, Prometheus, Grafana, k8s, README).

Each check is a plain function of a ``Repo`` snapshot that returns the problems it finds, so the
real files are held to an empty list and a broken copy in tmp_path shows the check can fail.
"""
