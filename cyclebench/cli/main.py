"""cyclebench's entry point: parse, dispatch, and turn user errors into one-line messages."""
from __future__ import annotations

import os
import sys

from ..errors import CycleBenchError
from .parser import build_parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.run(args) or 0
    except CycleBenchError as e:
        print(f"error: {e.cause}", file=sys.stderr)
        if e.hint:
            print(f"hint: {e.hint}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted: results saved so far are kept", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: say so plainly; the traceback only on request
        if os.environ.get("CYCLEBENCH_DEBUG"):
            raise
        print(f"error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        print("hint: this is a bug in cyclebench; re-run with CYCLEBENCH_DEBUG=1 for the traceback", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
