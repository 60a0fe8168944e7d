"""Memory operands on banks of their own (copies.bank_offset): the random mixes' slots and the
model's mixes (docs/ports-findings.md, "Loads: the order and the run decide, not the counts")."""
import random
import re

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.copies import BANK, LINE, bank_offset
from cyclebench.instructions.ports.blocks import random_blocks
from cyclebench.instructions.ports.mixes import SECOND_AREA, mix_code

WIDTH = {"byte": 1, "word": 2, "dword": 4, "qword": 8, "xmmword": 16, "ymmword": 32, "zmmword": 64}
_MEM = re.compile(r"(\w+) ptr \[r14\+0x([0-9a-f]+)\]")


def _banks(offset, width):
    return set(range(offset // BANK, (offset + max(width, 1) - 1) // BANK + 1))


def test_bank_offsets_stay_aligned_within_their_line_and_take_the_free_banks():
    used = [0] * (LINE // BANK)
    assert [bank_offset(8, used) for _ in range(4)] == [0, 8, 16, 24]
    assert bank_offset(16, used) == 32 and bank_offset(4, used) == 48 and bank_offset(32, used) == 32
    assert bank_offset(64, [0] * 8) == 0 and bank_offset(512, [0] * 8) == 0      # a line or more: offset 0
    for width in (1, 2, 4, 6, 8, 10, 16, 32, 64):
        used = [0] * (LINE // BANK)
        size = 1 << (min(width, LINE) - 1).bit_length()
        for _ in range(12):
            off = bank_offset(width, used)
            assert off % size == 0 and off + min(width, LINE) <= LINE, (width, off)


def test_random_mixes_give_each_memory_operand_its_slot_and_banks_of_its_own():
    forms = ["MOV (R64, M64)", "ADDSD (XMM, M64)", "XORPS (XMM, M128)", "CMP (M32, I8)", "MOVZX (R32, M16)",
             "NOT (R32)"]
    spread = 0
    for lines, _ in random_blocks(Catalogue.load(), forms, 20, random.Random(5)):
        taken = []
        for i, line in enumerate(lines):
            m = _MEM.search(line)
            if not m:
                continue
            width, off = WIDTH[m.group(1)], int(m.group(2), 16) - LINE * (i + 1)
            assert 0 <= off and off % width == 0 and off + width <= LINE, line    # within its own slot
            taken.append(_banks(off, width))
        if sum(map(len, taken)) <= LINE // BANK:
            assert len(set().union(*taken)) == sum(map(len, taken)), lines       # no bank shared
        spread += len(taken) > 1
    assert spread >= 10


def test_mixed_forms_loads_take_the_banks_the_loads_before_them_leave():
    """Each load of a mix on the banks the loads before it in program order use least, each form
    within its own line of its own area (mixes._banked): no two of any four loads share a bank."""
    cat = Catalogue.load()
    a, b = cat.get("CMP (M64, R64)"), cat.get("ADDSD (XMM, M64)")
    code, _, _ = mix_code({a.name: a, b.name: b}, {a.name: 1, b.name: 3})
    where = [(ln.split()[0], int(_MEM.search(ln).group(2), 16)) for ln in code]
    assert {o // LINE for m, o in where if m == "cmp"} == {1}
    assert {(o - SECOND_AREA) // LINE for m, o in where if m == "addsd"} == {0}
    banks = [(o % LINE) // BANK for _, o in where]
    assert all(len(set(banks[i:i + 4])) == 4 for i in range(len(banks) - 3)), banks
    wide = cat.get("VMOVUPS (YMM, M256)")
    code, _, _ = mix_code({wide.name: wide}, {wide.name: 1})
    assert {int(_MEM.search(ln).group(2), 16) for ln in code} == {LINE, LINE + 32}      # halves in turn
    store = cat.get("MOV (M64, R64)")
    code, _, _ = mix_code({store.name: store}, {store.name: 1})
    assert len({_MEM.search(ln).group(2) for ln in code}) == 1      # stores keep one address
    load = cat.get("MOV (R64, M64)")
    code, _, _ = mix_code({load.name: load}, {load.name: 1}, lines=True)     # each copy on its own line
    offs = [int(_MEM.search(ln).group(2), 16) for ln in code]
    assert len({o // LINE for o in offs}) == len(offs)
    assert [o % LINE for o in offs[:9]] == [0, 8, 16, 24, 32, 40, 48, 56, 0]
