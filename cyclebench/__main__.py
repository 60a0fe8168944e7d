"""`python3 -m cyclebench`: the same as the `cyclebench` command."""
import sys

from .cli.main import main

sys.exit(main())
