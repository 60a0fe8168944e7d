"""C sources of the paging study's programs (package data: built by programs.py, never imported)."""
