"""Execution resources without counters: which ports, pipes and units instruction forms use,
inferred from throughput measurements of forms alone and in mixes (docs/ports.md), and a
throughput predictor for straight-line blocks built on that model.

model (the max-load model and its MILP) <- mixes (interference measurements) <- infer (the
steps) <- run (forms, results file); portsets (published ports beside the model); predict
(blocks); blocks (basic blocks of compiled C, runnable in the harness).
"""
