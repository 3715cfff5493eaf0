"""Training research: A*PO against GRPO (comparison, tuning, curves, generalisation), the cost
of training (throughput, memory, rollout engines, GPU runs), and the MaskablePPO baseline.
"""
