"""Native helpers of cyclebench.routines (C sources built on demand into the cache)."""
