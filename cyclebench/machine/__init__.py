"""What machine this is: CPU identity and features, and the metadata block of every result."""
from .cpu import cpu_info
from .metadata import machine_metadata

__all__ = ["cpu_info", "machine_metadata"]
