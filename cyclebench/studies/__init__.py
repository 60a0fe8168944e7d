"""Studies: one folder per reproduced study, with its kernels and experiment code."""
