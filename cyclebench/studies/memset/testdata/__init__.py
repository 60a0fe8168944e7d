"""TEST-ONLY kernels with planted bugs, used by tests/test_memset_*.py. Never time or ship them."""
