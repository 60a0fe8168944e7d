"""`python3 -m cyclebench`: the same as the `cyclebench` command."""
import sys

try:
    from .cli.main import main
except KeyboardInterrupt:          # Ctrl-C before main() could guard: the same line and code
    print("interrupted: results saved so far are kept", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
