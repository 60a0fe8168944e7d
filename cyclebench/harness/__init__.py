"""Generation of the measurement assembly around the user's code (nanoBench's model)."""
from .codegen import HarnessSpec, generate

__all__ = ["HarnessSpec", "generate"]
