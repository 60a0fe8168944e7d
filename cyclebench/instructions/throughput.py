"""Throughput of one form: cycles per instruction over independent copies.

:func:`copies.independent_copies` gives 16 copies (written registers rotate, EVEX forms also
through the upper 16 vector registers; stores go to distinct addresses), and 4 copies are measured
too: the faster count is kept (uops.info tries several), and a full count off the port grid runs in
more runner processes, the fastest kept (fastest.py: a process can settle in a slower state),
as are copies the in-flight probe finds limited (window.py; it reads the full count) and the full count
where a fewer count is kept (:func:`_in_processes`); a gather's copies also run with every mask
set-up ahead of them all (gathers.py), and copies writing a mask register from memory all writing
one, the others zeroed (one_mask.py), the faster kept.  Every measurement is also read at the
fastest steady state several of its repetitions agree on (fastest.py, steady.py: some copies run in
two states, and the aggregate reads the commoner, slower one).  What the ISA does not
let us rename apart is broken between copies with documented dependency-breaking idioms that need
no execution port:

* flags read and written (adc, sbb, rcl, cmc ...): ``test r64, r64`` on a scratch register,
  uops.info's breaker (it writes every arithmetic flag and depends on nothing, but occupies an
  ALU: ``adc bh, ch`` reads 0.50 per copy with it on Zen 4, as published, and at most 0.33 with
  the port-free zero idiom ``xor r32, r32``, breakers kind "zero idiom", which ``inst --why`` runs);
* a general register read and written, implicit (mul: rax; cmpxchg: rax) or a fixed explicit
  operand (``AND AL, imm8``: AL): a full-width zero idiom ``xor e?x, e?x`` (writing the 32-bit
  register zeroes all 64 bits; a narrow ``xor al, al`` merges into the old value and does not
  break the chain); it also breaks the flags, so no second breaker is added for them;
  division: ``mov`` of the same dividend and ``xor edx, edx``;
* an implicit vector register (xmm0): ``vpxor xmm0, xmm0, xmm0``.

**Read-modify-write memory** (``AND M16, imm8``): each copy gets its own address, one operand
width apart (uops.info's convention: the next element of an array), 32 copies (:func:`copies_for`),
and the figure with one cache line per copy is measured too and shown where it differs (on Zen 3,
0.56 against 1.00 cycles for ``and word [m], 2``: stores to different lines retire at one line per
cycle); copies narrower than 8 bytes are also measured one 8-byte word apart, reported when faster
(:func:`_word_apart`: copies that share a word are not independent on every core), and one copy on
one address repeated, uops.info's count 1, shown beside (:func:`_one_address`).

The copies also run with no breaker, the faster kept (uops.info's least over both).  With
breakers the figure is reported as an upper bound (they can only slow the copies down); x87
stack chains cannot be broken (upper bound, said so).  A figure that equals the bound set by the
register rotation is also reported as an upper bound.
"""
from __future__ import annotations

from ..errors import CycleBenchError
from . import connectors as C
from . import gathers, one_mask, vsib, window
from .comparing import TP_TOL, agrees
from .forms import Form
from .instantiate import verified
from .copies import LINE, Copies, balanced_count, independent_copies, rmw_stride
from .breakers import breakers_for, only_breaks
from .fastest import (FEW_GAIN, LIMITED_PROCESSES, PROCESSES, fast_state, faster, on_port_grid,
                      other_processes, placed, runs_differ)
from .session import THROUGHPUT_COPIES, Measured, Session, form_init, used_gprs, value_pattern


RMW_COPIES = 32


def copies_for(form: Form) -> int:
    """Independent copies per run.  Read-modify-write memory chains each address through a
    store-forwarding round trip (about 10 cycles here) from one repetition of the copies to the
    next, so n copies cannot run faster than that round trip / n: 16 copies cap ``and dword [m],
    2`` at 0.67 per copy on Zen 3, 32 reach its 0.56 (8 copies: 1.13)."""
    return RMW_COPIES if rmw_stride(form) is not None else THROUGHPUT_COPIES


FEW_COPIES = 4          # also measured (uops.info tries 1, 4, 8 and all its copies)
FEW_COUNTS = (FEW_COPIES, 8)
MID_AFTER = 0.95        # 8 copies only where 4 take a cycle a copy or more: the only three of 572
                        # forms 8 made faster read 1.00 with 4 (Zen 4, vpexpand*), and 8 on every
                        # form cost a fifth of the forms a minute (256 -> 208, 300 forms)


def _scratch_avoid(form: Form, scratch: str) -> tuple[str, ...]:
    """The scratch register, out of the copies only where a flag breaker may use it (the rotation
    of a small pool, SIL, DIL, R12B, R13B, needs every register it has)."""
    return (scratch,) if form.flags_read & form.flags_written else ()


def _prepare(form: Form, copies: int, scratch: str, stride: int | None, breakers: str):
    """(copies, breakers per copy, chains left unbroken, code, init) of ``copies`` copies."""
    cps = independent_copies(form, copies, avoid=_scratch_avoid(form, scratch), stride=stride)
    if copies > FEW_COPIES:
        cps.instances = cps.instances[:balanced_count(form, cps.instances)]
    verified(cps.instances)
    pre, unbroken = breakers_for(form, cps.carried, scratch, breakers)
    code = [line for inst in cps.instances for line in pre + [inst.text]]
    init = form_init(form, cps.instances[0]) + [s for s in cps.init if s not in cps.instances[0].init]
    return cps, pre, unbroken, code, init


def _fewer(session: Session, form: Form, scratch: str, stride: int | None, breakers: str,
           pattern: int, n: int = FEW_COPIES):
    """``n`` copies measured: (measurement, copies, breakers, unbroken) or None on failure."""
    cps, pre, unbroken, code, init = _prepare(form, n, scratch, stride, breakers)
    try:
        return session.measure(code, init, per=len(cps.instances), pattern=pattern), cps, pre, unbroken
    except CycleBenchError:
        return None


def _in_processes(session: Session, doc: dict, kept: tuple, full: tuple, init: list[str], pattern: int,
                  processes: int) -> tuple:
    """(measurement, copies, breakers, unbroken, count) after ``processes`` more runner processes: of the
    kept copies, or, where a fewer count (FEW_COPIES) is kept, of the full count ``full``, which is
    then kept when faster.  A fewer count kept means the full count ran slower than it can, and its
    faster state may show in another process (Zen 4, 16 copies of ``vpexpandq xmm, xmm``: 1.00 in
    every repetition of one process, 0.67 in some of another; 4 copies 0.75 in all, which was kept
    and never run again)."""
    m, per = kept[0], kept[4]
    if per > FEW_COPIES:
        return (other_processes(session, doc, m, m.code.splitlines(), init, per, pattern, processes),) + kept[1:]
    other = other_processes(session, doc, full[0], full[0].code.splitlines(), init, full[4], pattern, processes)
    return (other,) + full[1:] if faster(m, other) is other else kept



def counts_to_try(before: dict | None, full: int) -> tuple[int, ...]:
    """The fewer copy counts to measure, given ``before``, a run of the same copies that measured
    them (the first of the two runs apart in time, or the copies with the form's normal operand
    values): those it has no reading of, or read apart from its full count beyond noise (faster: a
    count the copies may need; slower: a count or a reading that may change), and all of them
    where that run saw the copies faster some other way (a faster steady state, other operand
    values): their rate is a state each measurement may or may not catch (Zen 4, 16 ``vexpandps
    ymm, ymm`` 1.00 with 4, 8 and 16 copies, 0.67 with denormal values; the second run's 8 copies
    caught 0.67).  Otherwise a count that read as the full count did is not measured again: on
    Zen 4 (292 forms of a 300-form run), 329 of the first run's 412 fewer-count readings were of
    that kind and none of those counts ran faster in the second run."""
    seen = (before or {}).get("by_copies") or {}
    ref = seen.get(str(full))
    if not ref or str(FEW_COPIES) not in seen or (before or {}).get("states") or \
            any(v.get("value") is not None and v["value"] < ref * (1 - FEW_GAIN) for v in before.get("values") or []):
        return FEW_COUNTS
    return tuple(n for n in FEW_COUNTS
                 if seen.get(str(n)) is None or abs(seen[str(n)] - ref) > FEW_GAIN * ref)


def measure_throughput(session: Session, form: Form, self_latency: dict[int, float] | None = None,
                       earlier: dict | None = None, pattern: int | None = None,
                       breakers: str = "published", stride: int | None = None,
                       processes: int = PROCESSES, counts_from: dict | None = None) -> dict:
    """Cycles per instruction over independent copies.  ``self_latency``: operand position ->
    measured latency of that operand to itself (to tell a rotation-bound figure).  ``earlier``: a
    previous run of the same measurement; the lower of the two is kept (an SMT sibling on the
    host slows throughput-bound code for a while without disturbing the calibration), and the
    fewer counts it found no faster are not measured again (:func:`counts_to_try`; ``counts_from``
    names such a run when it is not ``earlier``)."""
    counts_from = earlier if counts_from is None else counts_from
    self_latency = self_latency or {}
    pattern = value_pattern(form) if pattern is None else pattern
    copies = copies_for(form)
    doc = {"value": None, "bound": None, "uncertainty": None, "copies": copies, "pattern": pattern,
           "code": None, "init": None, "carried": [], "breakers": [], "stable": None,
           "samples": [], "repeats": [], "warnings": [], "linear": None, "note": None, "error": None}
    scratch = C.scratch_gpr(used_gprs(*(i.register for i in form.implicit if i.read or i.write)))
    cps, pre, unbroken, code, init = _prepare(form, copies, scratch, stride, breakers)
    doc.update(copies=len(cps.instances), carried=list(cps.carried), breakers=pre)
    per = len(cps.instances)        # copies in the kept measurement's code
    try:
        m = fast_state(doc, session.measure(code, init, per=per, pattern=pattern))
        full = (m, cps, pre, unbroken, per)        # this run's full count, whatever count is kept
        if earlier is not None and earlier.get("value") is not None:
            doc["repeats"] = [earlier["value"], m.value]
            if earlier["value"] < m.value:     # the less disturbed of two runs apart in time
                m = Measured(earlier["value"], earlier["uncertainty"], earlier["samples"],
                             earlier["stable"], earlier["warnings"], {}, earlier["code"],
                             earlier["init"], earlier["linear"] is not False)
                doc.update({k: earlier[k] for k in ("stride", "operand_width_apart", "setups_ahead") if k in earlier})
                per = earlier.get("copies") or per
                doc["copies"] = per
                if list(earlier.get("breakers") or []) != pre:     # the earlier run kept its copies bare
                    pre, unbroken = list(earlier.get("breakers") or []), list(cps.carried)
                    doc["breakers"] = pre
    except CycleBenchError as e:
        doc.update(error=e.cause, code="\n".join(code))
        return doc
    if copies == THROUGHPUT_COPIES and m.stable:
        # uops.info's counts: fewer copies can run faster (Zen 4, vptestnmd k, xmm, m128: 0.50
        # per copy with 4, 0.58 with 16; vcompresspd xmm{k}, xmm: 0.67 with 8, 1.00 with 4 and
        # 16); no count can show a figure below the core's own
        doc["by_copies"] = {str(full[4]): full[0].value}      # this run's, not the earlier run's
        counts = counts_to_try(counts_from, full[4])
        if counts_from is not None and counts_from.get("by_copies"):
            doc["by_copies_before"] = dict(counts_from["by_copies"])
        four = doc.get("by_copies_before", {}).get(str(FEW_COPIES), 0)
        for n in counts:
            if n != FEW_COPIES and doc["by_copies"].get(str(FEW_COPIES), four) < MID_AFTER:
                continue
            few = _fewer(session, form, scratch, stride, breakers, pattern, n)
            if few is None:
                continue
            few = (fast_state(doc, few[0]),) + few[1:]
            doc["by_copies"][str(n)] = few[0].value
            if faster(m, few[0]) is few[0]:
                m, cps, pre, unbroken = few
                per = n
                doc.update(copies=n, carried=list(cps.carried), breakers=pre)
    elif copies == RMW_COPIES and processes and m.stable and stride is None:
        _one_address(session, form, doc, full, scratch, breakers, pattern)
    if vsib.mask_positions(form) and processes and m.stable and "setups_ahead" not in doc:
        ahead, k = gathers.setups_ahead(session, form, cps.instances, pre, init, pattern)
        if ahead is not None:
            doc["setups_ahead"] = {"copies": k, "value": ahead.value, "in_place": m.value}
            if faster(m, ahead) is ahead:
                m, cps = ahead, Copies(cps.instances[:k], cps.carried)
                per = doc["copies"] = doc["setups_ahead"]["kept"] = k
    if pre and breakers == "published" and processes and m.stable and only_breaks(pre):
        # uops.info also runs its copies without breakers and keeps the faster: a chain the
        # renamer removes costs less than a breaker's slot (Zen 4: six xchg ebx..r8d, eax 0.33 a
        # copy bare, 0.50 with xor eax, eax before each, as uops.info's 0.33)
        bare = _fewer(session, form, scratch, stride, "none", pattern, len(cps.instances))
        if bare is not None:
            doc["without_breakers"] = {"value": bare[0].value, "with": m.value}
            if faster(m, bare[0]) is bare[0]:
                m, cps, pre, unbroken = bare
                per = doc["copies"] = len(cps.instances)
                doc.update(breakers=[])
    if pre and breakers == "published" and processes and m.stable and "flags" in cps.carried:
        _port_free(session, form, doc, scratch, stride, pattern, len(cps.instances), m.value)
    if not pre and processes and m.stable and window.suspect(form):
        m, cps, init = one_mask.kept(session, form, doc, earlier, (m, cps, init), per,
                                     _scratch_avoid(form, scratch), pattern)
    # from here on the kept measurement's own code (a fewer count, the earlier run or the set-ups
    # ahead may have won: the full count's code would be read per the wrong count)
    code = m.code.splitlines()
    if per > FEW_COPIES and not on_port_grid(m.value):
        m = placed(session, doc, m, code, init, per, pattern)
    # copies seen in more than one steady state (in this run or the earlier one) may hold a faster
    # one in another process
    states = bool(doc.get("states") or (earlier or {}).get("states")) or runs_differ(earlier, full[0])
    kept = (m, cps, pre, unbroken, per)
    if processes and ((per > FEW_COPIES and (not on_port_grid(m.value) or states)) or per <= FEW_COPIES < full[4]):
        kept = _in_processes(session, doc, kept, full, init, pattern, processes)
    # the in-flight probe reads the full count's copies, whichever count is kept
    wide = kept if kept[4] > FEW_COPIES else full
    if wide[4] > FEW_COPIES and processes and kept[0].stable and not wide[2] and \
            (not on_port_grid(kept[0].value) or window.suspect(form)):
        doc["window"] = window.probe(session, wide[0].code.splitlines(), init, kept[0].value, pattern)
        doc["window"]["writes_mask"] = window.suspect(form)
        more = LIMITED_PROCESSES + 1 - len(doc.get("by_process") or [kept[0].value])
        if doc["window"].get("limited") and more > 0:
            kept = _in_processes(session, doc, kept, full, init, pattern, more)
        if doc["window"].get("limited"):
            doc["window"]["uops_info"] = window.uops_info_copies(session, form, _scratch_avoid(form, scratch),
                                                                 pattern)
    m, cps, pre, unbroken, per = kept
    doc.update(copies=per, carried=list(cps.carried), breakers=pre)
    doc.update(value=m.value, uncertainty=m.uncertainty, code=m.code, init=m.init, stable=m.stable,
               samples=m.samples, warnings=m.warnings, linear=m.linear, bound="exact")
    notes = []
    if m.below is not None:     # B - A within the noise: a bound, never a cost (nor a negative one)
        doc.update(value=m.below, bound="upper")
        notes.append(f"below the resolution: less than {m.below:.2f} cycles per copy")
    if pre:
        doc["bound"] = "upper"
        notes.append("dependency breakers between copies (" + ", ".join(sorted(set(pre))) +
                     ") can only slow the copies down")
    if unbroken:
        doc["bound"] = "upper"
        notes.append("still carried between copies: " + ", ".join(unbroken))
    bare = doc.get("without_breakers") or {}
    if not pre and bare.get("with") is not None and m.value < bare["with"]:
        notes.append(f"no dependency breakers: the copies ran faster without them ({bare['with']:.2f} with)")
    for op in form.operands:
        if not (op.kind == "reg" and op.read and op.write and not op.fixed):
            continue
        lat = self_latency.get(op.pos)
        distinct = len({i.regs.get(op.pos) for i in cps.instances})
        if lat and distinct and m.value <= 1.1 * lat / distinct:
            doc["bound"] = "upper"
            notes.append(f"as slow as the chain through {distinct} rotating registers allows")
            break
    notes += one_mask.notes(doc)
    ahead = doc.get("setups_ahead") or {}
    if ahead.get("kept"):
        notes.append(f"mask set-ups of the {ahead['kept']} copies ahead of them all (one per copy, counted); "
                     f"each before its own copy: {ahead['in_place']:.2f}")
    if vsib.mask_positions(form) and processes:
        doc["mask_unset"] = gathers.mask_unset(session, cps.instances, pre, init, pattern)
    if stride is None and rmw_stride(form) not in (None, LINE):
        stride = rmw_stride(form)
        alt = _alternative(session, form, pre, init, scratch, LINE, pattern)
        doc["alternative"] = alt
        if alt.get("value") is not None and not agrees(alt["value"], m.value, False, TP_TOL):
            notes.append(f"read-modify-write memory: copies {stride} byte(s) apart (uops.info's convention); "
                         f"one cache line per copy: {alt['value']:.2f}")
        if stride < WORD:
            _word_apart(session, form, doc, pre, init, scratch, pattern, notes)
    doc["note"] = "; ".join(notes) or None
    return doc


WORD = 8        # bytes: read-modify-write copies one 8-byte word apart share no word


def _one_address(session: Session, form: Form, doc: dict, full: tuple, scratch: str, breakers: str,
                 pattern: int) -> None:
    """A read-modify-write form's single copy, one address repeated (uops.info's count 1), shown
    beside the figure, never kept: on a Zen 4 guest locked forms read 6.09-6.41 a copy that way and
    7.50-7.58 with 4 to 32 copies on their own addresses, where uops.info publishes 7.36-7.40 for
    most (``lock inc``, ``and``, ``or``) and 6.20 for the carry-flag consumers (``lock adc``,
    ``sbb``): the count reproduces only some of its figures, so it is a cause, not a method."""
    one = _fewer(session, form, scratch, None, breakers, pattern, 1)
    if one is not None:
        one = fast_state({}, one[0])                   # read as the fewer counts are
        doc["one_address"] = {"value": one.value, "stable": one.stable, "copies": full[4], "with": full[0].value}


def _port_free(session: Session, form: Form, doc: dict, scratch: str, stride: int | None,
               pattern: int, n: int, with_test: float) -> None:
    """Copies linked through the flags, broken with uops.info's ``test r, r`` (an ALU µop), also
    run with a port-free zero idiom (``xor r32, r32``): shown beside the figure, never kept, since
    the published figures count their breaker (Zen 4: ``adc`` 0.50 with ``test``, as published;
    ``adox`` 0.50 with ``test`` and 0.33 with ``xor``, published 0.33)."""
    free = _fewer(session, form, scratch, stride, "zero idiom", pattern, n)
    if free is not None and free[0].stable:
        doc["port_free_breakers"] = {"value": free[0].value, "with": with_test,
                                     "breakers": sorted(set(free[2]))}


def _word_apart(session: Session, form: Form, doc: dict, pre: list[str], init: list[str], scratch: str,
                pattern: int, notes: list[str]) -> None:
    """A narrow read-modify-write form's copies one 8-byte word apart, reported when faster beyond
    noise: copies one operand width apart share words, and on some cores a load waits for an
    older store to any byte of its word, so they are not independent copies (Zen 4, 32 copies:
    ``sar byte [m], 0`` 0.89 a copy one byte apart, 0.50 one word apart; ``or word [m], imm16``
    0.67 and 0.56; ``add dword [m], 2`` 0.56 either way; uops.info publishes 0.56, 0.52, 0.54)."""
    word = _alternative(session, form, pre, init, scratch, WORD, pattern)
    doc["word_apart"] = word
    if word.get("value") is None or not word.get("stable") or word["value"] >= doc["value"] * (1 - FEW_GAIN):
        return
    notes.append(f"read-modify-write memory: copies {rmw_stride(form)} byte(s) apart (uops.info's addresses) "
                 f"{doc['value']:.2f} a copy, they share 8-byte words; one word apart {word['value']:.2f} "
                 "is reported")
    doc["operand_width_apart"] = {k: doc.get(k) for k in ("value", "uncertainty", "code", "stable")}
    doc.update(value=word["value"], uncertainty=word["uncertainty"], code=word["code"], stable=word["stable"],
               samples=word.get("samples", []), stride=WORD)


def _alternative(session: Session, form: Form, pre: list[str], init: list[str], scratch: str,
                 stride: int, pattern: int) -> dict:
    """The same copies with their read-modify-write addresses ``stride`` bytes apart."""
    cps = independent_copies(form, copies_for(form), avoid=_scratch_avoid(form, scratch), stride=stride)
    verified(cps.instances)
    code = [line for inst in cps.instances for line in pre + [inst.text]]
    out = {"convention": f"one address per copy, {stride} bytes apart", "stride": stride, "value": None,
           "code": "\n".join(code), "stable": None, "error": None}
    try:
        m = session.measure(code, init, per=len(cps.instances), pattern=pattern)
    except CycleBenchError as e:
        out["error"] = e.cause
        return out
    out.update(value=m.value, stable=m.stable, uncertainty=m.uncertainty, samples=m.samples)
    return out
