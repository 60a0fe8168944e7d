"""Which operand values the instruction tables sweep (values.alternative_values): denormals
for floating-point forms, every bit set for masked memory forms, nothing for integer forms."""
import pytest

from cyclebench.instructions import Catalogue
from cyclebench.instructions.values import ALL_ONES, DENORMALS, alternative_values


@pytest.fixture(scope="module")
def forms():
    return {f.name: f for f in Catalogue.load().forms}


@pytest.mark.parametrize("name, expected", [
    ("ADDPD (XMM, XMM)", [DENORMALS]), ("MULSS (XMM, XMM)", [DENORMALS]),
    ("VFMADD231PD (YMM, YMM, YMM)", [DENORMALS]), ("PADDQ (XMM, XMM)", []), ("ADD (R64, R64)", []),
    ("VMASKMOVPS (M128, XMM, XMM)", [ALL_ONES, DENORMALS])])
def test_the_values_swept_follow_the_operand_types(forms, name, expected):
    if name not in forms:
        pytest.skip(f"{name} is not in this catalogue")
    assert alternative_values(forms[name]) == expected


def test_the_denormal_pattern_is_a_denormal_at_every_width():
    import struct
    raw = DENORMALS.to_bytes(8, "little")
    assert struct.unpack("<d", raw)[0] != 0 and abs(struct.unpack("<d", raw)[0]) < 2.3e-308
    assert all(0 < abs(x) < 1.2e-38 for x in struct.unpack("<2f", raw))
    assert all(0 < abs(x) < 6.2e-5 for x in struct.unpack("<4e", raw))
