"""What machine this is: CPU identity and features, the microarchitecture table, CPU topology, and
the metadata block of every result."""
import importlib

# Loaded when first named: the microarchitecture table (uarch.py, about 3 ms) is needed only for a
# result's metadata, which a measurement loads while its assembler runs (measurement/api.py).
_EXPORTS = {"cpu_info": "cpu", "machine_metadata": "metadata", "identify": "uarch", "this_machine": "uarch"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
