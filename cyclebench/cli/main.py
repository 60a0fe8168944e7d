"""cyclebench's entry point: parse, dispatch, and turn user errors into one-line messages.

Ctrl-C at any moment prints the "interrupted" line and gives exit code 130, never a traceback:
nothing is imported before the guarded block but what the interpreter has already loaded (even
``signal`` and ``errors`` are imported inside it), and a second Ctrl-C while the process ends is
ignored. SIGTERM takes the same way out (exit 143), so that every ``finally`` runs: temporary
files are removed and results files closed on either signal. (No ``from __future__ import``
either: it loads the ``__future__`` module, and a Ctrl-C landed inside it once start-up was fast.)
"""
import sys

INTERRUPTED = "interrupted: results saved so far are kept"
TERMINATED = "terminated: results saved so far are kept"


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, like Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """The command line (``argv`` None: this process's arguments) -> exit code."""
    try:
        if argv is None:              # this process's own run: SIGTERM unwinds like Ctrl-C
            import signal
            signal.signal(signal.SIGTERM, _on_sigterm)
        return _dispatch(argv)
    except KeyboardInterrupt as e:
        return interrupted(process_ends=argv is None, terminated=isinstance(e, Terminated))


def interrupted(process_ends: bool = True, terminated: bool = False) -> int:
    """Say so and give 130 (143 for SIGTERM); when the process is ending, a second signal cannot
    cut that short."""
    if process_ends:
        import signal
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        except ValueError:            # not the main thread: nothing to protect
            pass
    try:
        print(TERMINATED if terminated else INTERRUPTED, file=sys.stderr)
    except (OSError, ValueError):     # stderr closed
        pass
    return 143 if terminated else 130


def _dispatch(argv: list[str] | None) -> int:
    from ..errors import CycleBenchError       # here, not at the top: an early Ctrl-C is caught
    try:
        from .parser import build_parser
        args = build_parser(argv).parse_args(argv)
        return args.run(args) or 0
    except CycleBenchError as e:
        print(f"error: {_one_line(e.cause)}", file=sys.stderr)
        if e.hint:
            print(f"hint: {_one_line(e.hint)}", file=sys.stderr)
        return e.exit_code
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: say so plainly; the traceback only on request
        signal_inside = _wrapped_interrupt(e)
        if signal_inside is not None:
            raise signal_inside from None
        import os
        if os.environ.get("CYCLEBENCH_DEBUG"):
            raise
        print(f"error: internal error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        print("hint: this is a bug in cyclebench; re-run with CYCLEBENCH_DEBUG=1 for the traceback", file=sys.stderr)
        return 1


def _one_line(text: str) -> str:
    """A message as one line: control characters of the user's text (a path's newline, a terminal
    escape sequence) escaped, not sent to the terminal."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(text))


def _wrapped_interrupt(e: BaseException) -> KeyboardInterrupt | None:
    """A Ctrl-C (or SIGTERM) that Python re-raised as another error: one landing while a class is
    created (a module imported at its first use) comes out as "RuntimeError: Error calling
    __set_name__"."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


if __name__ == "__main__":
    sys.exit(main())
