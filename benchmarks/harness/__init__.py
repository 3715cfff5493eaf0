"""The agent harness: agents, the runner that plays them over vector envs, and their report.

`benchmarks.harness.run` plays agents x env ids x splits and writes per-episode records;
`benchmarks.harness.report` turns those records into tables, plots and failure analyses;
`benchmarks.harness.paired` compares two runs goal by goal. See benchmarks/README.md.
"""
