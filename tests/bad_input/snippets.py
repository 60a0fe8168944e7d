"""Snippet text (issue 8, items 2-6): non-ASCII text, oversized expansions, absolute targets,
the harness's own names, named labels, and directives that read files or break the harness.
Every case is refused before anything runs (none makes a system call)."""
from __future__ import annotations

import re

from . import ApiCase, Case

ASCII_HINT = "plain ASCII"
SIZE_HINT = "--unroll or --loop"
RELOC_HINT = r"labels .*'1:' \.\.\. 'jmp 1b'.*cb_sym_NAME"
RESERVED = r"'cb_ctl' is a name of the measurement harness, in code: "
RESERVED_HINT = "names starting with cb_ belong to the harness"
FILE_HINT = "--code-file"
HUNDRED_NOPS = "; ".join(["nop"] * 100)


def asm(id: str, code: str, exit_code: int, error: str, hint: str, *extra: str, **kw) -> Case:
    return Case(f"asm-{id}", ["asm", *extra, code], exit_code, error, hint, **kw)


def nanobench(id: str, code: str, exit_code: int, error: str, hint: str, **kw) -> Case:
    return Case(f"nanobench-{id}", ["nanobench", "-asm", code], exit_code, error, hint, **kw)


def _measure(code, **kw):
    from cyclebench import measure
    return measure(code, **kw)


CASES = [
    # item 2: non-ASCII text
    asm("non-ascii", "mov rax, ü", 3, r"non-ASCII character 'ü' \(U\+00FC\) in code: 'mov rax, \\xfc'",
        ASCII_HINT),
    asm("typographic-quotes", "mov rax, “1”", 3, r"U\+201C", ASCII_HINT),
    asm("non-ascii-init", "nop", 3, r"U\+00A0 in init: 'mov\\xa0rax, 1'", ASCII_HINT, "--init", "mov\u00a0rax, 1"),
    nanobench("non-ascii", "mov rax, ü", 3, r"non-ASCII character 'ü'", ASCII_HINT),
    # item 3: expansion caps, checked before expanding
    asm("expansion-10M-statements", f"100000*|{HUNDRED_NOPS}|", 2,
        r"the code would expand to 10000000 statements", SIZE_HINT),
    nanobench("expansion-10M-statements", f"100000*|{HUNDRED_NOPS}|", 2,
              r"would expand to 10000000 statements", SIZE_HINT),
    asm("repeat-count-too-large", "1000001*|nop|", 2, r"repeats 1000001 times", "at most 100000"),
    asm("repeat-count-5000-digits", "9" * 5000 + "*|nop|", 2, r"repeats 9{20}\.\.\. times", "at most"),
    asm("nop-length-huge", "|" + "9" * 5000, 2, r"is not a NOP length", r"1 <= n <= 15"),
    asm("rept-1e8", ".rept 100000000; nop; .endr", 2, r"'\.rept 100000000' is over 100000", SIZE_HINT),
    asm("fill-1e8", ".fill 100000000, 1, 0x90", 2, r"'\.fill 100000000' is over", SIZE_HINT),
    Case("asm-code-file-dev-zero", ["asm", "--code-file", "/dev/zero"], 2,
         r"the code file /dev/zero is a device", "raw x86-64 machine code"),
    Case("asm-code-file-too-big", ["asm", "--code-file", "{tmp}/big.bin"], 2,
         r"big\.bin is larger than 4 MiB", "at most 4 MiB", files={"big.bin": b"\x90" * (5 << 20)}),
    # item 4: absolute targets need relocations
    asm("jmp-absolute", "jmp 0x12345678", 3,
        r"relocation \(R_X86_64_PC32 against an absolute address\) in code: 'jmp 0x12345678'", RELOC_HINT),
    asm("call-absolute", "nop; call 0x4000; nop", 3, r"relocation .* in code: 'call 0x4000'", RELOC_HINT),
    nanobench("jmp-absolute", "jmp 0x12345678", 3, r"relocation .* 'jmp 0x12345678'", RELOC_HINT),
    asm("offset-label", "mov rax, offset 1f; 1: nop", 3,
        r"relocation \(R_X86_64_32S against \.text \+ \w+\) in code: 'mov rax, offset 1f'", RELOC_HINT),
    # item 5: the harness's names, and named labels repeated by unrolling
    asm("set-cb-ctl", ".set cb_ctl, 0; add rax, rbx", 3, RESERVED + r"'\.set cb_ctl, 0'$", RESERVED_HINT),
    asm("label-cb-ctl", "cb_ctl: add rax, rbx", 3, RESERVED + "'cb_ctl: add rax, rbx'$", RESERVED_HINT),
    asm("read-cb-ctl", "mov rax, [rip + cb_ctl]", 3, RESERVED, RESERVED_HINT),
    asm("define-cb-data-ptr", "cb_data_ptr = 5", 3, r"'cb_data_ptr' is a name of the measurement harness",
        RESERVED_HINT),
    nanobench("set-cb-ctl", ".set cb_ctl, 0; add rax, rbx", 3, RESERVED, RESERVED_HINT),
    asm("named-label", "foo: add rax, rbx", 3,
        r"the label 'foo' is defined more than once, in code: 'foo: add rax, rbx'",
        r"unrolled .* named label is defined once per copy; use numeric labels: '1:' with 'jmp 1b'"),
    asm("named-label-in-init", "nop", 3, r"the label 'bar' is defined more than once, in init",
        "numeric labels", "--init", "bar: xor eax, eax"),
    asm("numeric-label-missing", "jmp 1f", 3, r"local label .*\"1\".* is not defined",
        r"'1f' needs a '1:' after it"),
    # item 6: file-reading directives, and directives that break the harness around the snippet
    asm("include", '.include "/etc/hostname"', 3, r"'\.include' reads a file, in code: ", FILE_HINT),
    asm("incbin", 'nop; .incbin "/etc/hostname"', 3, r"'\.incbin' reads a file, in code: '\.incbin ",
        FILE_HINT),
    asm("incbin-upper-case", '.INCBIN "/etc/hostname"', 3, r"'\.INCBIN' reads a file", FILE_HINT),
    asm("incbin-in-init", "nop", 3, r"reads a file, in init: ", FILE_HINT, "--init", '.incbin "/dev/zero"'),
    asm("incbin-spelled-by-a-macro", '.macro m a, b; .\\a\\b "/etc/hostname"; .endm; m inc, bin', 3,
        r"reads the file '/etc/hostname' through the assembler", FILE_HINT),
    nanobench("incbin", '.incbin "/etc/hostname"', 3, r"'\.incbin' reads a file", FILE_HINT),
    asm("end", "nop; .end", 3, r"'\.end' ends the assembly", r"drop '\.end'"),
    asm("section-data", ".section .data; nop", 3, r"'\.section' switches to another section", "data area"),
    asm("att-syntax", ".att_syntax; nop", 3, r"switches the syntax or mode", "Intel syntax"),
    asm("code32", ".code32; nop", 3, r"'\.code32' switches the syntax or mode", "64-bit mode"),
    ApiCase("api-non-ascii", lambda: _measure("mov rax, ü"), 3, r"non-ASCII character"),
    ApiCase("api-raw-code-too-big", lambda: _measure(b"\x90" * (5 << 20)), 2, r"over 4 MiB"),
    ApiCase("api-incbin", lambda: _measure('.incbin "/etc/passwd"'), 3, r"reads a file"),
    # statements the CPU runs in the kernel only: said so, not a hint about addresses
    *(asm(f"privileged-{name}", code, 5, rf"privileged instruction in '{re.escape(code)}' \(code\): {name}",
          r"cannot be timed from user space") for name, code in (("hlt", "hlt"), ("cli", "cli"),
                                                                ("rdmsr", "rdmsr"))),
    # seq names the statement as asm does
    Case("seq-names-the-statement", ["seq", "mov rax, [rax"], 3, r"in code: 'mov rax, \[rax'", r"Intel syntax"),
    Case("asm-code-and-code-file", ["asm", "--code-file", "{tmp}/c.bin", "nop"], 2,
         r"both assembly and --code-file given for the code to measure$", r"one of them", files={"c.bin": b"\x90"}),
    # the assembler's temporary folder never shows in a message
    asm("rept-without-endr", ".rept 3; nop", 3, r"^(?!.*cyclebench-).*REPT without ENDR", r"Intel syntax"),
]
