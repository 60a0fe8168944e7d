"""What machine this is: CPU identity and features, the microarchitecture table, CPU topology, and
the metadata block of every result."""
from .cpu import cpu_info
from .metadata import machine_metadata
from .uarch import identify, this_machine

__all__ = ["cpu_info", "identify", "machine_metadata", "this_machine"]
