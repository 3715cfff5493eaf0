"""The data behind the shop: product and goal records, their loaders, and prepared stores.

- `model`: the records (`Product`, `Goal`, catalogues), shared by everything else;
- `catalog`: loaders for the official file formats and the bundled ``"mini"`` catalogue;
- `goals`: human and synthetic goals, seeded prices and price limits, the paper's splits;
- `instructions`: the option and price clauses goals append to an instruction, and their
  parser (what agents read the instruction with);
- `splits`: split manifests, the goals of each split and a hash that results name;
- `store`: the prepared on-disk store that opens a 1.18M-product catalogue in a second;
- `prepare`, `download`, `jsonstream`, `locations`: building that store from the official
  files, fetching them, and where they live;
- `synthetic`: catalogues of any size generated from a real one (scale benchmarks only).
"""
