"""The end of a measurement loop, and when it must leave the flags alone.

``dec C; jnz top`` writes the flags. Where the flags a copy starts from depend on the flags an
earlier copy started from (a chain through the flags, snippet/flagchain.py), that end cuts the
chain at every iteration, iterations overlap in the out-of-order window, and the code reads fast.
Zen 4 guest: ``cmovs ebx, r11d``, three ``vpackuswb``, ``add ebx, 2``, ``mov ebx, 5`` (a 2-cycle
chain through the flags) read 1.50 cycles a copy at the automatic unroll. Such code gets an end
that writes no flag (:func:`loop_close`: JRCXZ is the one conditional branch that reads none), and
reads 2.00. Other code keeps ``dec``/``jnz``: it costs less where the end is part of what is timed
(the block loop, whose B - A holds it: with the longer end 152 of 1,077 BHive blocks read 3-10%
more on that guest), and every figure measured before stays what it was.

The count lives in RCX where the code leaves RCX free (:func:`flag_counter`); else RCX is
exchanged with the counter around the test. The exchange is not free: ``xchg`` of two registers
is 3 µops on Golden Cove, and on a Sapphire Rapids-class guest the 2-cycle chain ``cmovs ebx,
r11d; add ebx, r12d`` read 0.95 cycles a copy at unroll 1 and 1.86 at unroll 2 with it, 2.00 at
both with the count in RCX: with few copies an iteration's exchanges set the pace.
"""
from __future__ import annotations

_RCX = 1


def flag_counter(used: set[str], counter: str) -> str:
    """The register a flag-keeping loop end counts in: RCX where ``used`` (the 64-bit registers
    the looped code reads or writes) leaves it free, else ``counter``."""
    return "rcx" if "rcx" not in used else counter


def loop_close(counter: str, top: str, done: str) -> list[str]:
    """``counter`` down by one and back to ``top`` until it reaches 0, no flag and no other
    register changed (RCX is exchanged in for the test and back on both ways out)."""
    if counter == "rcx":
        return ["lea rcx, [rcx - 1]", f"jrcxz {done}", f"jmp {top}", f"{done}:"]
    return [f"xchg rcx, {counter}", "lea rcx, [rcx - 1]", f"jrcxz {done}",
            f"xchg rcx, {counter}", f"jmp {top}", f"{done}:", f"xchg rcx, {counter}"]


def loop_close_bytes(counter: int, back: int) -> bytes:
    """:func:`loop_close` as machine code, for general register number ``counter``; ``back``:
    bytes from the loop top to this end's first byte."""
    xchg = b"" if counter == _RCX else bytes([0x49 if counter >= 8 else 0x48, 0x87,
                                              0xC0 | (_RCX << 3) | (counter & 7)])
    test = xchg + b"\x48\x8d\x49\xff" + b"\xe3" + bytes([len(xchg) + 5])   # lea rcx, [rcx-1]; jrcxz done
    jmp = -(back + len(test) + len(xchg) + 5)
    return test + xchg + b"\xe9" + jmp.to_bytes(4, "little", signed=True) + xchg
