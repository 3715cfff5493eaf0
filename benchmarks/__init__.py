"""Agent and performance benchmarks for webshop-gym (run from the repository root).

    python -m benchmarks.run --agents random rule heuristic --env WebShop-Mini-Text-v0 --split test

See benchmarks/README.md.
"""
