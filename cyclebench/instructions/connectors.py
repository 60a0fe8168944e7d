"""Connecting instructions that close a latency chain when a pair's input and output differ in kind.

uops.info defines latency per (input operand -> output operand) pair.  When the output can feed the
input directly (same register, flags to flags, memory read-modify-write), :func:`instantiate.chain`
gives the chain.  Otherwise the chain is closed with a *connector*: a short sequence from the
output's kind back to the input's kind, e.g. ``cmovc rbx, rbx`` (flags -> GPR) after ``add rbx,
rcx`` for the pair ``op0 -> flags``.  The measured cycles per link are then

    R = latency(pair) + latency(connector)

Each connector is a list of *steps*; every step has a reference loop made of itself and its inverse
(``vmovq xmm1, rbx; vmovq rbx, xmm1``), measured separately.  Every computing instruction on a
dependency path takes at least one cycle, so a step whose reference loop takes RT cycles with k
other instructions has latency in [1, RT - k].  Stores and loads are the exception: Zen 2 and
later rename memory (a store followed by a load of the same address runs in about 1 cycle for
both), so their lower bound is 0 and the reference bounds them by RT.  When RT - k is 1 (integer ALU steps: add/sub, cmp/cmov)
the step's latency is known exactly and the pair's latency is exact; otherwise the result is an
upper bound ``R - sum(lower bounds)`` (uops.info's "≤") with the lower bound ``R - sum(upper
bounds)`` kept alongside.

Steps (kinds: GPR, VEC, K, MM, FLAGS, MEM = the form's memory operand, ADDR = its base register):

=========  ========================================  ==================================
step       instruction                               reference loop
=========  ========================================  ==================================
alu        add s, e / sub s, e (value-preserving)    add rbx, rcx; sub rbx, rcx
cmp        cmp e, 0                GPR -> FLAGS      cmp rbx, 0; cmovc rbx, rbx
cmov       cmovc s, s              FLAGS -> GPR      (same)
gpr2vec    vmovq xmm_s, e          GPR -> VEC        vmovq xmm1, rbx; vmovq rbx, xmm1
vec2gpr    vmovq s, xmm_e          VEC -> GPR        (same)
gpr2k      kmovq k_s, e            GPR -> K          kmovq k1, rbx; kmovq rbx, k1
k2gpr      kmovq s, k_e            K -> GPR          (same)
vec2kW     vpcmpuq k_s, e, v31, 5  VEC -> K (ones)   vpcmpuq k1, v1, v31, 5; vpmovm2q v1, k1
k2vecW     vpmovm2q v_s, k_e       K -> VEC          (same; W = the vector width, v = xmm/ymm/zmm)
gpr2mm     movq mm_s, e            GPR -> MM         movq mm1, rbx; movq rbx, mm1
mm2gpr     movq s, mm_e            MM -> GPR         (same)
gpr2k32    kmovd k_s, e32 (k2gpr32: kmovd s32, k_e)  kmovd k1, ebx; kmovd ebx, k1
mm2vec     movq2dq xmm_s, mm_e (vec2mm: movdq2q)     movq2dq xmm1, mm1; movdq2q mm1, xmm1
store/load store to / load from the form's memory    store then load of the same size
           operand (store forwarding)
vandW      vpand v, v, v (memory_chain.py's fill)    its own self-chain (exact)
=========  ========================================  ==================================

``v31`` is zeroed in the connector's init (``ZERO_VEC``): ``vpcmpuq`` compares two registers, never
one with itself, whose constant result a core may take as an idiom that reads nothing.

The mask steps are pinned (uops.info's method, see ``PINNING``): ``vpcmpuq`` closed by a
masked move ``vmovdqu64 v1{k1}, v1``, whose latency its own self-chain gives, costs the loop minus
that move; ``vpmovm2q`` costs its reference loop minus ``vpcmpuq``.

**Other routes** (:func:`alternatives`; uops.info tries every instruction from the output's kind to
the input's and keeps the least): each route bounds the same pair, so the lowest upper bound and
the highest lower bound hold.  Zen 4: ``kmovd`` closes K <-> GPR in 9 cycles against ``kmovq``'s
10; ``movq2dq`` closes MM <-> XMM in one step (loop 3.0) against two through a GPR (7.0).

Other combinations go through a scratch GPR (VEC -> FLAGS = vec2gpr + cmp, anything -> ADDR =
... -> GPR + ``add r14, g; sub r14, g``).  Values: every connector keeps the value of its target
or replaces it with a harmless one (a mask register gets all ones, a memory operand gets the
output's value); a register the form addresses memory through (a string pointer, a bit offset:
``Port.address``) keeps its own, the dependency added in by ``add s, g; sub s, g``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import iced_x86

from .operands import GPR_BITS, REGISTER_BY_NAME, VECTOR_CLASSES, register_class, register_name
from .connector_steps import (  # noqa: F401  (the step costs, read through this module too)
    PIN_SLACK, PIN_WHOLE, PINNED_PARTNER, PINNING, REFERENCES, RENAMED_ROUND_TRIP, SIZE, ZERO_INIT, lower_bound,
    partner_of_pinned, pinned, reference_of, vand, vec2k, vec_move, whole_cycles)

MEM_BASE = "r14"


@dataclass
class Port:
    """One end of a latency pair, made concrete: its kind and register (or memory text/size)."""

    kind: str                  # GPR VEC K MM FLAGS MEM ADDR X87 OTHER
    reg: str | None = None     # register name as used in the instance (rbx, xmm1, k1, mm1)
    bits: int = 0              # register or memory width
    mem: str | None = None     # memory operand text for MEM / ADDR
    is_mask: bool = False      # the EVEX write mask (keep it all ones)
    flags: frozenset = frozenset()   # FLAGS: the flags the form writes (empty: unknown, CF assumed)
    written: bool = False      # the form writes this register too (a connector must not read it)
    address: bool = False      # the form addresses memory through this register's value (keep it)


# the cmov that reads a flag, in order of preference (CF first: the reference loop's own)
_CMOV_FOR = (("CF", "cmovc"), ("ZF", "cmovz"), ("SF", "cmovs"), ("OF", "cmovo"), ("PF", "cmovp"))


def cmov_for(port: Port) -> str:
    """A cmov that reads a flag the form writes: ``adox`` writes only OF, so ``cmovc`` would not
    depend on it and the chain would be broken (its latency would read 0)."""
    return next((c for f, c in _CMOV_FOR if not port.flags or f in port.flags), "cmovc")


@dataclass
class Connector:
    lines: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    init: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "; ".join(self.lines)


class NoConnector(Exception):
    """There is no connector for this combination of kinds (the pair is reported unmeasured)."""


def port_for_register(name: str, is_mask: bool = False) -> Port:
    reg = _reg_enum(name)
    cls = register_class(reg)
    if cls in GPR_BITS:
        return Port("GPR", name, GPR_BITS[cls])
    if cls in VECTOR_CLASSES:
        return Port("VEC", name, {"XMM": 128, "YMM": 256, "ZMM": 512}[cls])
    if cls == "K":
        return Port("K", name, 64, is_mask=is_mask)
    if cls == "MM":
        return Port("MM", name, 64)
    if cls == "ST":
        return Port("X87", name, 80)
    return Port("OTHER", name)


def _reg_enum(name: str) -> int:
    n = name.strip().upper().replace("(", "").replace(")", "")
    if n.startswith("R") and n.endswith("B") and n[1:-1].isdigit():
        n = n[:-1] + "L"
    return REGISTER_BY_NAME[n]


def gpr(name: str, bits: int = 64) -> str:
    """The ``bits``-wide name of the GPR ``name`` lives in (``bl``, 64 -> ``rbx``)."""
    full = iced_x86.RegisterInfo(_reg_enum(name)).full_register
    base = register_name(full)
    if bits == 64:
        return base
    table = {"rax": "a", "rbx": "b", "rcx": "c", "rdx": "d"}
    if base in table:
        c = table[base]
        return {32: f"e{c}x", 16: f"{c}x", 8: f"{c}l"}[bits]
    if base in ("rsi", "rdi", "rsp", "rbp"):
        s = base[1:]
        return {32: f"e{s}", 16: s, 8: f"{s}l"}[bits]
    return base + {32: "d", 16: "w", 8: "b"}[bits]


def _vbits(name: str) -> int:
    """The width of a vector register by its name (``ymm3`` -> 256)."""
    return {"x": 128, "y": 256, "z": 512}[name.strip().lower()[0]]


def vec(name: str, bits: int) -> str:
    num = re.sub(r"\D", "", name)
    return {128: "xmm", 256: "ymm", 512: "zmm"}[bits] + num


_SCRATCH = ("r13", "r12", "r11", "r10", "r9", "r8", "rdx", "rcx", "rbx")


def scratch_gpr(used: set[str]) -> str:
    for r in _SCRATCH:
        if r not in used:
            return r
    raise NoConnector("no free general-purpose register for the connector")


def _kmov_to_gpr(reg: str, k: str, alt: bool) -> Connector:
    """K -> GPR: ``kmovq``, or on the other route ``kmovd`` into the 32-bit name."""
    return Connector([f"kmovd {gpr(reg, 32)}, {k}"], ["k2gpr32"]) if alt else \
        Connector([f"kmovq {gpr(reg)}, {k}"], ["k2gpr"])


def _low_xmm(name: str) -> str:
    """``name`` where movq2dq/movdq2q can name it (xmm0-15)."""
    if not name.lower().startswith("x") or int(re.sub(r"\D", "", name)) >= 16:
        raise NoConnector(f"no legacy MMX <-> XMM move for {name}")
    return name


def _to_gpr(end: Port, used: set[str], alt: bool = False) -> tuple[str, Connector]:
    """Route ``end`` into a GPR: (the 64-bit GPR, the connector so far)."""
    if end.kind == "GPR":
        return gpr(end.reg), Connector()
    t = scratch_gpr(used)
    used.add(t)
    if end.kind == "VEC":
        return t, Connector([f"vmovq {t}, {vec(end.reg, 128)}"], ["vec2gpr"])
    if end.kind == "K":
        return t, _kmov_to_gpr(t, end.reg, alt)
    if end.kind == "MM":
        return t, Connector([f"movq {t}, {end.reg}"], ["mm2gpr"])
    if end.kind == "FLAGS":
        return t, Connector([f"{cmov_for(end)} {t}, {t}"], ["cmov"])
    if end.kind == "MEM":
        w = min(end.bits, 64) if end.bits else 64
        if w not in (8, 16, 32, 64):
            raise NoConnector(f"no load for a {end.bits}-bit memory operand")
        return t, Connector([f"mov {gpr(t, w)}, {SIZE[w]} ptr {end.mem}"], [f"load_g{w}"])
    raise NoConnector(f"no connector from {end.kind}")


def _join(a: Connector, b: Connector) -> Connector:
    return Connector(a.lines + b.lines, a.steps + b.steps, a.init + b.init)


def alternatives(end: Port, start: Port, used: set[str]) -> list[Connector]:
    """The other route between the kinds of ``end`` and ``start`` where there is one (the module
    docstring), to be measured beside :func:`connect`'s: empty where both are the same."""
    try:
        base, other = connect(end, start, used), connect(end, start, used, alt=True)
    except NoConnector:
        return []
    return [other] if other.text != base.text else []


def connect(end: Port, start: Port, used: set[str], alt: bool = False) -> Connector:
    """Instructions that make ``start`` depend on ``end`` (see the module docstring).
    ``used``: full 64-bit GPR names the instance uses (not to be taken as scratch); ``alt``: the
    other route where the kinds have one (:func:`alternatives`)."""
    used = set(used)
    if "X87" in (end.kind, start.kind) or "OTHER" in (end.kind, start.kind):
        raise NoConnector(f"no connector between {end.kind} and {start.kind}")
    if end.kind == start.kind and end.kind in ("GPR", "VEC", "K", "MM") and \
            _full(end.reg) == _full(start.reg):
        return Connector()                      # already the same register
    if end.kind == "MEM" and start.kind == "MEM":
        if end.mem == start.mem:
            return Connector()
        raise NoConnector("two different memory operands")

    # direct steps
    if start.kind == "ADDR":
        g, c = _to_gpr(end, used, alt)
        base = re.match(r"\[(\w+)", start.mem or "")    # the form's own base (RDI beside AH..BH)
        base = base.group(1) if base else MEM_BASE
        return _join(c, Connector([f"add {base}, {g}", f"sub {base}, {g}"], ["alu", "alu"]))
    if start.kind == "MEM":
        return _store(end, start, used)
    if start.kind == "GPR":
        s = gpr(start.reg)
        if start.address and end.kind != "GPR":
            # a string instruction's pointer or a bit offset: another value faults or moves the
            # access, so the dependency goes in as the address connector's does, the value kept
            g, c = _to_gpr(end, used | {s}, alt)
            return _join(c, Connector([f"add {s}, {g}", f"sub {s}, {g}"], ["alu", "alu"]))
        if end.kind == "GPR":
            e = gpr(end.reg)
            return Connector([f"add {s}, {e}", f"sub {s}, {e}"], ["alu", "alu"])
        if end.kind == "FLAGS":
            if start.written:
                # ``cmovc s, s`` would read the form's own result in s, and the loop would run
                # through s -> s as well (``bts rbx, 0``: 2 cycles, against 1 into CF); uops.info
                # moves the flag into another register and sign-extends it into s (CMOVcc, MOVSX)
                t = scratch_gpr(used)
                return Connector([f"{cmov_for(end)} {t}, {t}", f"movsx {gpr(s, 32)}, {gpr(t, 16)}"],
                                 ["cmov", "movsx"])
            return Connector([f"{cmov_for(end)} {s}, {s}"], ["cmov"])
        if end.kind == "VEC":
            return Connector([f"vmovq {s}, {vec(end.reg, 128)}"], ["vec2gpr"])
        if end.kind == "K":
            return _kmov_to_gpr(s, end.reg, alt)
        if end.kind == "MM":
            return Connector([f"movq {s}, {end.reg}"], ["mm2gpr"])
        if end.kind == "MEM":
            w = min(end.bits or 64, start.bits, 64)
            return Connector([f"mov {gpr(start.reg, w)}, {SIZE[w]} ptr {end.mem}"], [f"load_g{w}"])
    if start.kind == "VEC":
        if end.kind == "K":
            return Connector([f"vpmovm2q {start.reg}, {end.reg}"], [f"k2vec{_vbits(start.reg)}"])
        if end.kind == "MEM":
            return _load_vec(end, start)
        if end.kind == "MM" and alt:
            return Connector([f"movq2dq {_low_xmm(start.reg)}, {end.reg}"], ["mm2vec"])
        if end.kind == "VEC":
            return _vec_to_vec(end, start, alt)
        g, c = _to_gpr(end, used, alt)
        return _join(c, Connector([f"vmovq {vec(start.reg, 128)}, {g}"], ["gpr2vec"]))
    if start.kind == "K":
        if end.kind == "VEC":
            return Connector([vec2k(start.reg, end.reg)], [f"vec2k{_vbits(end.reg)}"], [ZERO_INIT])
        if start.is_mask:
            # keep the write mask all ones: through a vector compare against the zeroed register
            g, c = _to_gpr(end, used, alt)
            return _join(c, Connector([f"vmovq xmm30, {g}", vec2k(start.reg, "xmm30")],
                                      ["gpr2vec", "vec2k128"], [ZERO_INIT]))
        if end.kind == "MEM":
            w = min(end.bits or 64, 64)
            return Connector([f"kmov{'bwdq'[(w // 8).bit_length() - 1]} {start.reg}, {SIZE[w]} ptr {end.mem}"],
                             [f"load_k{w}"])
        g, c = _to_gpr(end, used, alt)
        if alt:
            return _join(c, Connector([f"kmovd {start.reg}, {gpr(g, 32)}"], ["gpr2k32"]))
        return _join(c, Connector([f"kmovq {start.reg}, {g}"], ["gpr2k"]))
    if start.kind == "MM":
        if end.kind == "MEM":
            return Connector([f"movq {start.reg}, qword ptr {end.mem}"], ["load_mm64"])
        if end.kind == "VEC" and alt:
            return Connector([f"movdq2q {start.reg}, {_low_xmm(vec(end.reg, 128))}"], ["vec2mm"])
        g, c = _to_gpr(end, used, alt)
        return _join(c, Connector([f"movq {start.reg}, {g}"], ["gpr2mm"]))
    if start.kind == "FLAGS":
        g, c = _to_gpr(end, used, alt)
        return _join(c, Connector([f"cmp {g}, 0"], ["cmp"]))
    raise NoConnector(f"no connector from {end.kind} to {start.kind}")


def _vec_to_vec(end: Port, start: Port, alt: bool) -> Connector:
    """Another vector register (an implicit XMM0): one AND of the output with itself into the
    input, integer (``vpand``) or on the other route FP (``vandpd``), as uops.info's chains
    between vector registers; each its own self-chain's latency, so the pair stays exact."""
    s, e = start.reg, vec(end.reg, start.bits)
    if not alt:
        return Connector([f"{vand(s)} {s}, {e}, {e}"], [f"vand{start.bits}"])
    if vand(s) != "vpand" or vand(e) != "vpand":
        raise NoConnector("no VEX vandpd for this register")
    return Connector([f"vandpd {s}, {e}, {e}"], [f"vandpd{start.bits}"])


def _full(name: str) -> int:
    return iced_x86.RegisterInfo(_reg_enum(name)).full_register


def _store(end: Port, start: Port, used: set[str]) -> Connector:
    """``end`` -> the memory operand ``start`` (a store of the operand's size)."""
    bits = start.bits or 64
    m = start.mem
    if end.kind == "VEC":
        if bits in (8, 16):
            # a 32-bit store holds the operand in its low bytes and forwards to its narrower load in
            # one µop; vpextrb/w would add a shuffle (uops.info also stores 32 bits here)
            return Connector([f"vmovd dword ptr {m}, {vec(end.reg, 128)}"], ["store_v32"])
        if bits not in (32, 64, 128, 256, 512):
            raise NoConnector(f"no vector store of {bits} bits")
        ins, kind = vec_move(bits)
        return Connector([f"{ins} {SIZE[bits]} ptr {m}, {vec(end.reg, max(bits, 128))}"], [f"store_v{bits}"])
    if end.kind == "K" and bits in (8, 16, 32, 64):
        return Connector([f"kmov{'bwdq'[(bits // 8).bit_length() - 1]} {SIZE[bits]} ptr {m}, {end.reg}"],
                         [f"store_k{bits}"])
    if end.kind == "MM" and bits == 64:
        return Connector([f"movq qword ptr {m}, {end.reg}"], ["store_mm64"])
    if bits not in (8, 16, 32, 64):
        raise NoConnector(f"no store of {bits} bits from {end.kind}")
    g, c = _to_gpr(end, used)
    return _join(c, Connector([f"mov {SIZE[bits]} ptr {m}, {gpr(g, bits)}"], [f"store_g{bits}"]))


def _load_vec(end: Port, start: Port) -> Connector:
    bits = min(end.bits or 128, start.bits)
    m = end.mem
    if bits == 16:
        r = vec(start.reg, 128)
        return Connector([f"vpinsrw {r}, {r}, word ptr {m}, 0"], ["load_v16"])
    if bits == 8:
        r = vec(start.reg, 128)
        return Connector([f"vpinsrb {r}, {r}, byte ptr {m}, 0"], ["load_v8"])
    if bits not in (32, 64, 128, 256, 512):
        raise NoConnector(f"no vector load of {bits} bits")
    ins, _ = vec_move(bits)
    return Connector([f"{ins} {vec(start.reg, max(bits, 128))}, {SIZE[bits]} ptr {m}"], [f"load_v{bits}"])
