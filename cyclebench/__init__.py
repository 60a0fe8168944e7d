"""cyclebench: what x86-64 machine code costs in CPU cycles."""
__version__ = "0.1.0"


def measure(*args, **kwargs):
    """Measure a snippet; see cyclebench.measurement.api.measure."""
    from .measurement.api import measure as _measure
    return _measure(*args, **kwargs)


def __getattr__(name):
    if name == "Result":
        from .measurement.result import Result
        return Result
    raise AttributeError(name)
