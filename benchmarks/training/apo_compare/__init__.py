"""pi_ref vs A*PO vs GRPO on the mini test split, paired by seed.

    python -m benchmarks.training.apo_compare --out benchmarks/results/apo          # seeds 0-9
    python -m benchmarks.training.apo_compare --out /tmp/apo --seeds 0 --set steps=4  # a quick look
    python -m benchmarks.training.apo_compare --out /tmp/apo --algorithms apo         # A*PO only
    python -m benchmarks.training.apo_compare --out /tmp/apo --rounds 3               # A*PO in 3 rounds
    python -m benchmarks.training.apo_compare --out /tmp/apo --preset smollm2         # another preset

For each seed, an apo-agent preset (``--preset``, default `cpu-demo`) builds pi_ref,
evaluates it on the test split, trains it with A*PO and, from the same pi_ref, with GRPO,
and evaluates both (``--algorithms`` runs a subset). A*PO also spends its Stage 1 reference
episodes (offline, once per pi_ref); the report counts them, and its CPU time, both with
Stage 1 and without. With ``--rounds R`` A*PO runs R times in a row, each round taking the
policy the last one made as its pi_ref (a fresh Stage 1, and the KL anchor moves with it);
every round is reported against the first pi_ref, with the cost of all rounds so far.

Running the same command again reuses every run that finished with the same training
settings: from its kept record ``--out/runs/<name>/results.json`` (which holds all the
report needs, so ``--work`` may be gone, e.g. on another machine), else from ``--work``.
Written to ``--out``:

* ``results.md``: mean and 95% interval over seeds (Student-t, or BCa with ``--interval bca``
  and 10+ seeds) of each policy, per-seed rows, the paired per-seed differences A*PO - GRPO,
  and the CPU time and episodes to test-success levels that every run reaches;
* ``results.json``: every figure; ``learning_curves.png``: training success per algorithm;
  ``test_curves.png``: test success against CPU time and episodes (`benchmarks.training.apo_curves`);
* ``runs/<algorithm>-seed<k>/``: each run's metrics.csv, learning curve, config and record;
* ``policy/``: the (last round's) A*PO policy of the first seed (config.json +
  final-model/), which the ``apo`` benchmark agent plays by default.

Modules: `runs` runs each (seed, policy) pipeline, or reuses its kept record or finished run;
`analysis` makes the report's figures from the records (a `Comparison`); `report` renders
results.md and draws learning_curves.png; `cli` is the command line, which ``__main__`` runs.
"""
