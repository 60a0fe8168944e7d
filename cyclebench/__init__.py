"""cyclebench: what x86-64 machine code costs in CPU cycles."""
__version__ = "0.1.0"


def measure(*args, **kwargs):
    """Measure a snippet; see cyclebench.measurement.api.measure. Bad arguments raise
    cyclebench.errors.UsageError (exit code 2), like the CLI's; every other failure is another
    CycleBenchError subclass with ``cause``, ``hint`` and ``exit_code``."""
    from .measurement.api import measure as _measure
    from .measurement.params import bind
    bind(_measure, args, kwargs)
    return _measure(*args, **kwargs)


def __getattr__(name):
    if name == "Result":
        from .measurement.result import Result
        return Result
    raise AttributeError(name)
