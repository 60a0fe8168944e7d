"""Instruction tables: the iced-x86 catalogue of forms, parsing user notation, instantiation for
the latency/throughput methods, published data (uops.info) and llvm-mca predictions.

Entry points::

    from cyclebench.instructions import Catalogue, resolve, instantiate
    cat = Catalogue.load()                    # all 64-bit forms, with CPU support / skip reasons
    form = resolve("imul rax, rbx")[0]        # IMUL (R64, R64)
    inst = instantiate(form)                  # text, init, registers
"""
from .catalogue import Catalogue, normalize_name
from .forms import Form, Operand
from .instantiate import Instance, LatencyPair, chain, check, instantiate, latency_pairs, verified
from .copies import independent_copies
from .notation import by_extension, by_mnemonic, resolve, resolve_one

__all__ = ["Catalogue", "Form", "Operand", "Instance", "LatencyPair", "normalize_name", "resolve",
           "resolve_one", "by_mnemonic", "by_extension", "instantiate", "verified", "check",
           "independent_copies", "latency_pairs", "chain"]
