"""Counter backends, read sequences, event names and nanoBench config files."""
