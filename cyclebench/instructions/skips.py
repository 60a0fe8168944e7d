"""Which instruction forms cyclebench refuses to benchmark, and why.

A form is run U x L times back to back inside the generated harness (see docs/ARCHITECTURE.md), in
ring 3, in a child process whose R14/RDI/RSI/RBP/RSP point into 1 MB areas and whose other GPRs
start at 0.  A form is skipped when running it that way would leave the measured code, fault, hang,
corrupt the process, or measure nothing.  The first matching rule gives the reason:

============================  ===================================================================
rule                          forms
============================  ===================================================================
MPX hint NOP                  ``bnd*`` (MPX): without MPX they execute as hint NOPs, so a number
                              would describe a NOP, not the instruction (only when the CPU lacks MPX)
3DNow!                        3DNow! and 3DNow!+ (gone from AMD since family 15h, never on Intel)
MVEX                          Knights Corner encodings
far branch                    jmp/call far, retf, jmpe: load CS (a code segment selector)
16-bit branch                 near jmp/jcc/call/ret with a 66 prefix: AMD truncates the target
                              to 16 bits (Intel ignores the prefix)
transactional memory          xbegin, xend, xabort
interrupt / exception         int, int1, int3, into, ud0/ud1/ud2, iret*, syscall, sysret,
                              sysenter, sysexit (iced FlowControl INTERRUPT / EXCEPTION)
privileged                    everything iced marks ring-0 only: hlt, lgdt/lidt/lldt/ltr, wrmsr,
                              rdmsr, mov cr/dr, invlpg, wbinvd, clts, swapgs, xsetbv, xsaves, ...
port I/O                      in, out, ins, outs
may need OS permission        cli, sti, rdpmc (CR4.PCE) and others iced marks "may require CPL 0";
                              the allow-list CPUID, RDTSC, RDTSCP, RDPID stays measurable (Linux
                              leaves CR4.TSD and CPUID faulting off)
UMIP                          sgdt, sidt, sldt, str, smsw: fault in user mode on CPUs with UMIP
system entry / hypervisor     vmcall, vmmcall, vmfunc, enclu, getsec, rsm, ...
waits                         monitor/mwait, monitorx/mwaitx, umonitor/umwait/tpause, hlt
segment state                 writes to a segment register (mov sreg, pop sreg, lfs/lgs/lss) and
                              wrfsbase/wrgsbase (glibc keeps the thread pointer in FS.base)
absolute address              mov al/ax/eax/rax <-> moffs64: the areas lie where mmap put them,
                              unknown when the code is assembled; an address of the form's own
                              choosing could be one of the runner's mappings, which a store
                              would overwrite
32-bit address                clzero eax (a32): the memory areas lie above 4 GiB
AMD prefetch group            reserved-NOP 0F 0D /r with a register operand: #UD on AMD
control-state loads           ldmxcsr, vldmxcsr, fldcw, fldenv, frstor, fxrstor*, xrstor*: loading
                              arbitrary memory faults (#GP on reserved bits) or unmasks FP exceptions
serializing                   instructions iced marks serializing (on AMD or Intel), except the
                              allow-list CPUID, LFENCE, MFENCE, SERIALIZE: harmless in ring 3 and
                              their cost is exactly what people look up (CPUID also exits to the
                              hypervisor in a VM: its number then includes the VM exit)
============================  ===================================================================

Separately from these safety rules, a form the CPU does not support is not offered; its reason
names the missing CPUID feature, or says "cannot tell whether this CPU supports X" when
machine/features.py has no way to know.  Forms that need set-up to avoid faults are *not*
skipped but carry it in their instantiation (instantiate.py): division (non-zero divisor), x87 (a filled register stack),
MMX (emms afterwards), implicit-address instructions (clzero: RAX, xlat: RBX), write masks, gathers
and scatters (a zero index vector, the mask set before each copy: vsib.py), REP string forms (RCX = 0),
and (flow.py) near branches (to the next instruction, the condition set every loop iteration),
indirect branches and returns (the target set before each copy), the stack and string forms
without REP (RSP, RSI, RDI set back every loop iteration: measure(reset=...)).
"""
from __future__ import annotations

import iced_x86

from ..machine.cpu import cpu_info
from .operands import FLOW_CONTROL_NAMES

ALLOWED_MAY_REQUIRE_CPL0 = frozenset({"CPUID", "RDTSC", "RDTSCP", "RDPID"})
ALLOWED_SERIALIZING = frozenset({"CPUID", "LFENCE", "MFENCE", "SERIALIZE"})
UMIP = frozenset({"SGDT", "SIDT", "SLDT", "STR", "SMSW"})
SYSTEM_ENTRY = frozenset({
    "SYSCALL", "SYSRET", "SYSRETQ", "SYSENTER", "SYSEXIT", "SYSEXITQ", "SWAPGS", "IRET", "IRETD",
    "IRETQ", "RSM", "VMCALL", "VMMCALL", "VMFUNC", "VMLAUNCH", "VMRESUME", "VMRUN", "ENCLU",
    "ENCLS", "ENCLV", "GETSEC", "SEAMCALL", "SEAMOPS", "SEAMRET", "TDCALL", "UIRET", "ERETS",
    "ERETU", "SENDUIPI",
})
IOPL_SENSITIVE = frozenset({"CLI", "STI"})   # #GP at IOPL 0 (Linux user mode); iced does not flag them
WAITS = frozenset({"MONITOR", "MWAIT", "MONITORX", "MWAITX", "UMONITOR", "UMWAIT", "TPAUSE", "HLT"})
SEGMENT_LOADS = frozenset({"LFS", "LGS", "LSS", "WRFSBASE", "WRGSBASE", "LKGS"})
CONTROL_STATE_LOADS = frozenset({
    "LDMXCSR", "VLDMXCSR", "FLDCW", "FLDENV", "FNLDENV", "FRSTOR", "FNRSTOR", "FXRSTOR",
    "FXRSTOR64", "XRSTOR", "XRSTOR64", "XRSTORS", "XRSTORS64", "RSTORSSP",
})


def skip_reason(oci: iced_x86.OpCodeInfo, ins: iced_x86.Instruction | None, mnemonic: str,
                features: tuple[str, ...], operands, cpu_has) -> str | None:
    """The reason this form cannot be benchmarked safely, or None.

    ``mnemonic`` is iced's mnemonic name (uppercase), ``operands`` the form's Operand list,
    ``cpu_has(feature)`` answers True/False/None for CPUID feature names.
    """
    if "MPX" in features and cpu_has("MPX") is not True:
        return "MPX: runs as a hint NOP on CPUs without MPX (nothing to measure)"
    if {"D3NOW", "D3NOWEXT", "CYRIX_D3NOW"} & set(features):
        return "3DNow!: gone from AMD CPUs since family 15h and never on Intel"
    if oci.encoding == iced_x86.EncodingKind.MVEX:
        return "MVEX: Knights Corner only"
    flow = FLOW_CONTROL_NAMES.get(ins.flow_control if ins is not None else 0, "NEXT")
    if mnemonic in SYSTEM_ENTRY:
        return "system entry or hypervisor call: leaves user mode"
    if flow == "INTERRUPT":
        return "raises an interrupt (int, int1, int3, into, syscall-like): leaves the measured code"
    if flow == "EXCEPTION":
        return "raises #UD by design (ud0/ud1/ud2)"
    if flow == "XBEGIN_XABORT_XEND":
        return "control flow: transactional memory (xbegin/xabort/xend)"
    if flow != "NEXT":
        why = _flow_reason(oci, ins, flow)
        if why:
            return why
    if oci.must_be_cpl0 or not oci.cpl3:
        return "privileged: ring 0 only"
    if oci.is_input_output:
        return "port I/O: faults in user mode"
    if mnemonic in WAITS:
        return "waits or sleeps (monitor/mwait family, hlt)"
    if mnemonic in UMIP:
        return "faults in user mode on CPUs with UMIP (descriptor-table and machine-status stores)"
    if (oci.may_require_cpl0 and mnemonic not in ALLOWED_MAY_REQUIRE_CPL0) or \
            mnemonic in IOPL_SENSITIVE:
        return "may fault in user mode: needs OS permission (IOPL, CR4 bits)"
    if mnemonic in SEGMENT_LOADS or any(op.cls == "SREG" and op.write for op in operands):
        return "changes segment state (FS.base holds the thread pointer; selectors fault)"
    if any(op.slot is not None and op.slot.special == "moffs" for op in operands):
        return ("absolute 64-bit address (moffs): the runner's areas and code lie where the kernel "
                "maps them (mmap without a fixed address), so no address of them is known when the "
                "code is assembled; an address of the form's own choosing could be one of the "
                "runner's own mappings, which a store would overwrite")
    if oci.address_size in (16, 32) and flow == "NEXT":     # a branch's: only its count register (ECX)
        return "16/32-bit address size (clzero eax): the harness's memory areas lie above 4 GiB"
    if operands and operands[0].kind == "reg" and _amd_prefetch_group(oci):
        return "0F 0D with a register operand: #UD on AMD, where 0F 0D is the PREFETCH group"
    if mnemonic in CONTROL_STATE_LOADS:
        return ("loads control state from memory: arbitrary data faults or unmasks FP "
                "exceptions")
    if (oci.is_serializing_amd or oci.is_serializing_intel) and mnemonic not in ALLOWED_SERIALIZING:
        return "serializing instruction (not on the allow-list CPUID, LFENCE, MFENCE, SERIALIZE)"
    return None


def _flow_reason(oci: iced_x86.OpCodeInfo, ins, flow: str) -> str | None:
    """Why a branch, call or return cannot run as flow.py runs them (to the next copy), or None."""
    if oci.mnemonic == iced_x86.Mnemonic.JMPE:
        return "jmpe: a jump into IA-64 mode (#UD on every x86-64 CPU without it)"
    kinds = [ins.op_kind(i) for i in range(ins.op_count)] if ins is not None else []
    if iced_x86.OpKind.FAR_BRANCH16 in kinds or iced_x86.OpKind.FAR_BRANCH32 in kinds or \
            oci.mnemonic == iced_x86.Mnemonic.RETF or \
            (ins is not None and ins.memory_size in (iced_x86.MemorySize.SEG_PTR16,
                                                     iced_x86.MemorySize.SEG_PTR32,
                                                     iced_x86.MemorySize.SEG_PTR64)):
        return "far branch, call or return: loads CS (a code segment selector)"
    if oci.operand_size == 16:
        return ("control flow with a 16-bit operand size (66 prefix): AMD CPUs truncate the target to "
                "16 bits, which leaves the measured code (Intel ignores the prefix)")
    if flow in ("CONDITIONAL_BRANCH", "UNCONDITIONAL_BRANCH", "CALL", "INDIRECT_BRANCH",
                "INDIRECT_CALL", "RETURN"):
        return None
    return f"control flow ({flow.lower().replace('_', ' ')}): would leave the measured code"


def _amd_prefetch_group(oci: iced_x86.OpCodeInfo) -> bool:
    """iced's RESERVEDNOP 0F 0D /r: with a register operand a reserved NOP on Intel, #UD on AMD."""
    if not (oci.table == iced_x86.OpCodeTableKind.T0F and oci.op_code == 0x0D
            and oci.instruction_string.upper().startswith("RESERVEDNOP")):
        return False
    return cpu_info().vendor == "AuthenticAMD"
