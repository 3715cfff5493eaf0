"""Agent and performance benchmarks for webshop-gym, by purpose (run from the repository root).

    harness/   agents, the runner and its report:  python -m benchmarks.harness.run --help
    env/       env performance:                    python -m benchmarks.env.env_speed
    fidelity/  agreement with the original:        python -m benchmarks.fidelity.search_agreement
    training/  A*PO vs GRPO and training costs:    python -m benchmarks.training.apo_compare --help

`machine` describes the machine a figure came from, `intervals` holds the interval statistics
and `markdown` renders every table. Recorded results live in results/. See benchmarks/README.md.
"""
