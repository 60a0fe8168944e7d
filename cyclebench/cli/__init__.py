"""Command-line front ends; each subcommand is a module with add_parser() and run()."""
