"""User code: statements, nanoBench's extensions, assembling, and mapping bytes back to statements."""
from .parse import CodePart, Statement, parse_part
from .assemble import assemble, AssembledObject

__all__ = ["CodePart", "Statement", "parse_part", "assemble", "AssembledObject"]
