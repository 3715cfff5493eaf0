"""``python -m benchmarks.training.apo_compare``: see `benchmarks.training.apo_compare.cli`."""

from benchmarks.training.apo_compare import cli

if __name__ == "__main__":
    cli.main()
