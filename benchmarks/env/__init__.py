"""Env performance: creation time, step latency, HTML rendering, full-scale memory and search,
the web shop and OpenEnv servers under load, and verl-agent's env pool on Ray.

Each module measures, returns its figures and renders them with `benchmarks.markdown`.
See benchmarks/README.md for the command and recorded result of each.
"""
