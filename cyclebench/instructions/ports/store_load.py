"""What a store-to-load round trip costs: forwarded, renamed, or neither; measured, not assumed.

A load that reads what a store of the block wrote waits for the store's data.  How long depends
on the core and on how the two name the place (docs/ports-findings.md, "Memory dependencies"):

* **renamed**: some cores (Zen 3, Zen 4; not Intel's) hand a load the register the store took its
  data from, when the load names the place with the store's own address expression (registers,
  scale and displacement) and reads no more than the store wrote.  The round trip then costs
  nothing: Zen 4, ``mov [m], rax; mov rax, [m]; add eax, 1`` runs 1.00 cycle an iteration, the
  ``add`` alone.  Byte and word loads are not renamed (6.6 cycles for the trip).
* **forwarded**: through another expression (``mov [rdi], rax; mov rax, [rsi]`` with rsi = rdi,
  or a 4K-aliased address that the block's start state maps onto the same physical page) the
  store buffer forwards the data: Zen 4, 6.6 cycles for the trip.
* **load-op**: a load that also computes from a register (``add rax, [m]``) is not renamed on
  Zen 4 even through the store's own expression, and its trip is longer: 7.1 cycles before its
  operation's own (``mov [m], rax; add rax, [m]`` 8.08 cycles an iteration, as with rsi = rdi).
* **wider**: a load that reads bytes the store did not write waits for the store to be written
  (Zen 4, ``mov [m], eax; mov rax, [m]``: 19 cycles for the trip).
* **unpaired**: stores in a span of which a load reads a store's bytes (renamed or forwarded, in
  the iteration or the next) are written one a cycle: Zen 4, two 8-byte stores in one 32-byte
  half 1.11 cycles an iteration, 2.00 with ``mov rcx, [r14+0x200]`` on the first's bytes (before
  or after it), 1.00 with the load 0x10 past them; three stores and such a load 3.00; a BHive
  block whose pair of stores is in another span than the one read keeps the pair (3.01).  A load that
  reads bytes a store did not write waits the wider trip an iteration even off every chain
  (two 8-byte stores and a load astride them: 19.0).
* **misrenamed**: a load renamed to an older store through its own expression, where a younger
  store through another expression wrote the place since, is forwarded and pays a recovery
  (Zen 4: 2.4 cycles more).

:func:`probe` times each of these as a loop with one 1-cycle ``add`` on the chain (and the ``add``
alone, to take it off), and the plain store-and-load loop without it (``plain``, kept for the
record: cyclebench inst halves it into its store and load latencies).  ``cyclebench ports`` keeps the result as a results-file record (type ``store_load``);
a file without one keeps the chain bound's older rule (one expression, inst's halves).
"""
from __future__ import annotations

from dataclasses import dataclass

RECORD = "store_load"
M = "[r14+0x200]"
SAME = ["lea rsi, [r14+0x200]", "lea rdi, [r14+0x200]"]     # two registers holding one address
ADD = "add eax, 1"
SIZES = {1: ("byte", "al", "movzx eax, byte ptr {m}"), 2: ("word", "ax", "movzx eax, word ptr {m}"),
         4: ("dword", "eax", "mov eax, dword ptr {m}"), 8: ("qword", "rax", "mov rax, qword ptr {m}")}


def _trip(n: int, store: str = M, load: str = M) -> list[str]:
    w, reg, ld = SIZES[n]
    return [f"mov {w} ptr {store}, {reg}", ld.format(m=load)]


def blocks() -> dict[str, tuple[list[str], list[str]]]:
    """The probe's blocks: name -> (code, init)."""
    out = {"alu": ([ADD], []), "plain": (_trip(8), [])}
    for n in SIZES:
        out[f"same {n}"] = (_trip(n) + [ADD], [])
    out["other"] = (_trip(8, "[rdi]", "[rsi]") + [ADD], SAME)
    out["op"] = ([f"mov qword ptr {M}, rax", f"add rax, qword ptr {M}"], [])
    pair = ["mov qword ptr [r14+0x200], 0", "mov qword ptr [r14+0x208], 0"]
    out["pair"] = (pair, [])
    out["pair and load"] = (pair + ["mov rcx, qword ptr [r14+0x200]"], [])
    out["wider"] = (["mov dword ptr [r14+0x200], eax", "mov rax, qword ptr [r14+0x200]", ADD], [])
    out["misrenamed"] = (["mov rax, qword ptr [rdi]", ADD, "mov qword ptr [rdi], rax",
                          "mov qword ptr [rsi], rax"], SAME)
    return out


@dataclass(frozen=True)
class Trips:
    """Cycles of a store-to-load round trip, by how the load meets the store (module docstring)."""
    forwarded: float
    renamed: frozenset            # load sizes in bytes that are renamed
    renamed_cost: float
    wider: float
    misrenamed: float             # cycles beyond a forwarded trip
    plain: float                  # the same-expression qword loop alone (inst's two halves)
    op: float                     # a load-op's trip through the store's expression, before its operation
    unpairs: bool = False         # a load that reads a store's bytes keeps stores from pairing

    @classmethod
    def from_times(cls, t: dict[str, float]) -> "Trips":
        alu = t["alu"]
        fwd = max(0.0, t["other"] - alu)
        # renamed: the trip costs less than half a forwarded one
        renamed = [n for n in SIZES if t[f"same {n}"] - alu < fwd / 2]
        cost = min((max(0.0, t[f"same {n}"] - alu) for n in renamed), default=fwd)
        return cls(fwd, frozenset(renamed), cost, max(fwd, t["wider"] - alu),
                   max(0.0, t["misrenamed"] - t["other"]) if renamed else 0.0, t["plain"],
                   max(0.0, t["op"] - alu), t.get("pair and load", 0.0) - t.get("pair", 0.0) >= 0.5)

    @classmethod
    def from_record(cls, rec: dict) -> "Trips":
        return cls.from_times({k: float(v) for k, v in rec["times"].items()})

    def trip(self, load, store, shadowed: bool, op: bool = False) -> float:
        """Cycles from the store's data to the load's result, before a load-op's operation
        (``load``, ``store``: (expression, first byte, end) of each, the byte range as the start
        state places it; ``shadowed``: the load's expression is that of an older store to the
        place a younger one overwrote; ``op``: the load computes from a register too)."""
        if load[1] < store[1] or load[2] > store[2]:
            return self.wider
        renames = load[2] - load[1] in self.renamed
        own = load[0] == store[0] and load[1] == store[1] and renames
        if op:
            if self.op >= self.forwarded / 2:      # load-ops are not renamed: their own trip
                return self.op
            return self.op if own else self.forwarded
        if own:
            return self.renamed_cost
        return self.forwarded + (self.misrenamed if shadowed and renames else 0.0)


def probe(session) -> dict:
    """The trips measured on this CPU (``session``: an instructions.session.Session), as the record
    {"type": "store_load", "forwarded", "renamed", "times"}."""
    times = {k: round(session.measure(code, init).value, 3) for k, (code, init) in blocks().items()}
    t = Trips.from_times(times)
    return {"type": RECORD, "forwarded": round(t.forwarded, 3), "renamed": sorted(t.renamed), "times": times}


def stored(path) -> tuple[Trips | None, str]:
    """(the round trips a results file's probe measured, or None; where that came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no store-to-load probe; one address expression, inst's halves"
    if not r.get("times"):          # a record that names no figure (the check lets one through)
        return None, f"{r.get('why') or 'the store-to-load probe gave no figure'}; one address expression, inst's halves"
    t = Trips.from_record(r)
    return t, (f"measured by cyclebench ports: forwarded {t.forwarded:.2f} cycles, renamed "
               f"{t.renamed_cost:.2f} for {'/'.join(map(str, sorted(t.renamed))) or 'no'}-byte loads "
               f"through the store's expression")


def meetings(instructions) -> list[tuple[int, int, bool]]:
    """(load, store, the load reads bytes the store did not write): the block's loads and stores
    that its start state puts on overlapping bytes (memory.steady_state, page offsets: every page
    is one physical page), an access that is both never with itself."""
    from ...blocks.memory import PAGE, steady_state
    acc = [a for a in steady_state(instructions) if a.address is not None]
    out = []
    for ld in (a for a in acc if a.read):
        lo = ld.address % PAGE
        for st in (a for a in acc if a.write and a is not ld):
            so = st.address % PAGE
            if lo < so + st.size and so < lo + ld.size:
                out.append((ld.index, st.index, lo < so or lo + ld.size > so + st.size))
    return out


def start_state_note(instructions) -> list[str]:
    """The note a block gets whose accesses through different registers meet (or 4K-alias onto
    one physical page) only because its start state makes every register equal."""
    from ...blocks.memory import flags, steady_state
    f = flags(steady_state(instructions))
    pairs = f["registers_meet"] + f["aliasing_4k"]
    if not pairs:
        return []
    return [f"a memory dependency the start state creates (all registers equal): instructions "
            + ", ".join(f"{a + 1} and {b + 1}" for a, b in pairs)
            + " meet at one address; the figure is data-dependent (another program state may not have it)"]
