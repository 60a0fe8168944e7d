"""The public measure() API, statistics, stability and results."""
