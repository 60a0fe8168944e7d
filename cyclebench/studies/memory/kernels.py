"""Bandwidth kernels as snippet text: read, write, copy and triad over arrays in the R14 area, in
scalar (8 B), SSE (16 B), AVX2 (32 B) and AVX-512 (64 B) widths, with temporal or non-temporal
stores.

A measured copy is one pass over the arrays (a counted loop of 4 accesses per array per
iteration, an ``sfence`` after non-temporal stores); ``init`` points r8, r9 and r10 at the
arrays A, B and C, 64-byte aligned and staggered by 1,088 bytes so they do not alias in the
caches; ``one_time_init`` writes every array first (no read hits the shared zero page):

``read``   sums A (qwords) into 4 accumulators          A[i] = i (qword index)
``write``  stores a constant into A                     every qword = PATTERN
``copy``   B := A                                       A[i] = i
``triad``  C := A + 3.0 * B (doubles, STREAM's triad)    A = 1.0, B = 2.0, so C = 7.0

``verify(kernel, size)`` is code to put after a pass: it executes ``ud2`` unless the destination
holds exactly what the pass should have produced (the read sum, the pattern, the copy, 7.0), so a
kernel that moves fewer bytes than it claims faults (the tests use it).

Bytes per pass, both ways: STREAM counts the arrays read and written once each; with a temporal
store the cache also reads each destination line before writing it (write-allocate), which
STREAM leaves out; non-temporal stores do not.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

OPS = ("read", "write", "copy", "triad")
WIDTHS = {"scalar": 8, "sse": 16, "avx2": 32, "avx512": 64}
FEATURES = {"scalar": (), "sse": ("sse2",), "avx2": ("avx2",), "avx512": ("avx512f",)}
ARRAYS = {"read": 1, "write": 1, "copy": 2, "triad": 3}
UNROLL = 4
STAGGER = 1088
PATTERN = 0x5A5A_0123_4567_89AB
F1, F2, F7, F3 = (struct.unpack("<Q", struct.pack("<d", v))[0] for v in (1.0, 2.0, 7.0, 3.0))


@dataclass(frozen=True)
class Kernel:
    op: str
    width: str
    nt: bool = False

    @property
    def name(self) -> str:
        return f"{self.op}-{self.width}" + ("-nt" if self.nt else "")

    @property
    def step(self) -> int:
        """Bytes per array per loop iteration."""
        return UNROLL * WIDTHS[self.width]

    def stream_bytes(self, size: int) -> int:
        """Bytes a pass moves as STREAM counts them (each array once)."""
        return ARRAYS[self.op] * size

    def allocate_bytes(self, size: int) -> int:
        """... plus the read of each destination line a temporal store allocates."""
        return self.stream_bytes(size) + (size if self.op != "read" and not self.nt else 0)


def kernels(widths, nt_too: bool = True) -> list[Kernel]:
    out = []
    for op in OPS:
        for w in widths:
            out.append(Kernel(op, w))
            if nt_too and op != "read":
                out.append(Kernel(op, w, True))
    return out


def array_size(kernel: Kernel, footprint: int) -> int:
    """Bytes per array so that all the kernel's arrays together are about ``footprint``."""
    per = footprint // ARRAYS[kernel.op]
    return max(kernel.step, per // 256 * 256)


def r14_size(size: int) -> int:
    span = 3 * (size + STAGGER + 64) + (4 << 20)
    return 2 * (-(-span // 8192) * 4096)


def init(size: int, r14: int) -> str:
    """r8, r9, r10 := A, B, C (64-byte aligned, staggered)."""
    gap = -(-(size + STAGGER) // 64) * 64
    return "\n".join([f"mov rax, {r14 // 2}", "mov r8, r14", "sub r8, rax", "add r8, 0x1fffff", "and r8, -0x200000",
                      f"lea r9, [r8 + {gap}]", f"lea r10, [r9 + {gap}]"])


def _fill(ptr: str, size: int, value: int | None) -> list[str]:
    """qwords of [ptr, ptr+size) := value, or their index when value is None."""
    if value is not None:
        return [f"mov rdi, {ptr}", f"mov rcx, {size // 8}", f"mov rax, {value}", "rep stosq"]
    return [f"mov rdi, {ptr}", f"mov rcx, {size // 8}", "xor eax, eax",
            "7:", "mov [rdi], rax", "inc rax", "add rdi, 8", "dec rcx", "jnz 7b"]


def one_time_init(kernel: Kernel, size: int, r14: int) -> str:
    lines = [init(size, r14)]
    if kernel.op in ("read", "copy"):
        lines += _fill("r8", size, None) + _fill("r9", size, 0)
    elif kernel.op == "write":
        lines += _fill("r8", size, 0)
    else:
        lines += _fill("r8", size, F1) + _fill("r9", size, F2) + _fill("r10", size, 0)
    return "\n".join(lines)


def _regs(width: str, n: int) -> list[str]:
    p = {"sse": "xmm", "avx2": "ymm", "avx512": "zmm"}[width]
    return [f"{p}{i}" for i in range(n)]


def _v(width: str) -> str:
    return "" if width == "sse" else "v"


def body(kernel: Kernel, size: int) -> str:
    """One pass over the arrays (see the module docstring)."""
    w, W, op, nt = kernel.width, WIDTHS[kernel.width], kernel.op, kernel.nt
    it = size // kernel.step
    out = []
    if op == "write":
        if w == "scalar":
            out.append(f"mov rax, {PATTERN}")
        else:
            out += [f"mov rax, {PATTERN}", "vmovq xmm15, rax" if w != "sse" else "movq xmm15, rax",
                    {"sse": "punpcklqdq xmm15, xmm15", "avx2": "vpbroadcastq ymm15, xmm15",
                     "avx512": "vpbroadcastq zmm15, xmm15"}[w]]
    if op == "triad":
        out += [f"mov rax, {F3}", "movq xmm14, rax" if w in ("scalar", "sse") else "vmovq xmm14, rax"]
        if w == "sse":
            out.append("unpcklpd xmm14, xmm14")
        elif w in ("avx2", "avx512"):
            out.append(f"vbroadcastsd {'ymm' if w == 'avx2' else 'zmm'}14, xmm14")
    if op == "read":
        if w == "scalar":
            out += ["xor eax, eax", "xor ebx, ebx", "xor r11d, r11d", "xor r12d, r12d"]
        else:
            xor = {"sse": "pxor", "avx2": "vpxor", "avx512": "vpxorq"}[w]
            out += [f"{xor} {r}, {r}" + ("" if w == "sse" else f", {r}") for r in _regs(w, 4)]
    out += ["mov rsi, r8", "mov rdi, r9", "mov rdx, r10", f"mov rcx, {it}", "1:"]
    for u in range(UNROLL):
        o = u * W
        out += _access(kernel, o, u)
    adv = [f"add rsi, {kernel.step}"]
    if op in ("copy", "triad"):
        adv.append(f"add rdi, {kernel.step}")
    if op == "triad":
        adv.append(f"add rdx, {kernel.step}")
    out += adv + ["dec rcx", "jnz 1b"]
    if nt:
        out.append("sfence")
    return "\n".join(out)


def _access(k: Kernel, o: int, u: int) -> list[str]:
    w, op, nt = k.width, k.op, k.nt
    if w == "scalar":
        acc = ("rax", "rbx", "r11", "r12")[u]
        st = "movnti" if nt else "mov"
        if op == "read":
            return [f"add {acc}, [rsi + {o}]"]
        if op == "write":
            return [f"{st} [rsi + {o}], rax"]
        if op == "copy":
            return [f"mov rax, [rsi + {o}]", f"{st} [rdi + {o}], rax"]
        x = f"xmm{u}"
        store = [f"movq rax, {x}", f"movnti [rdx + {o}], rax"] if nt else [f"movsd [rdx + {o}], {x}"]
        return [f"movsd {x}, [rdi + {o}]", f"mulsd {x}, xmm14", f"addsd {x}, [rsi + {o}]"] + store
    r = _regs(w, 4)[u]
    v = _v(w)
    if op == "read":
        return [f"paddq {r}, [rsi + {o}]"] if w == "sse" else [f"vpaddq {r}, {r}, [rsi + {o}]"]
    st_int = f"{v}movntdq" if nt else f"{v}movdqa" + ("64" if w == "avx512" else "")
    if op == "write":
        src = {"sse": "xmm15", "avx2": "ymm15", "avx512": "zmm15"}[w]
        return [f"{st_int} [rsi + {o}], {src}"]
    if op == "copy":
        ld = "movdqa" if w == "sse" else ("vmovdqa64" if w == "avx512" else "vmovdqa")
        return [f"{ld} {r}, [rsi + {o}]", f"{st_int} [rdi + {o}], {r}"]
    s = r[:3] + "14"
    st = f"{v}movntpd" if nt else f"{v}movapd"
    if w == "sse":
        return [f"movapd {r}, [rdi + {o}]", f"mulpd {r}, {s}", f"addpd {r}, [rsi + {o}]", f"{st} [rdx + {o}], {r}"]
    return [f"vmulpd {r}, {s}, [rdi + {o}]", f"vaddpd {r}, {r}, [rsi + {o}]", f"{st} [rdx + {o}], {r}"]


def verify(kernel: Kernel, size: int) -> str:
    """Code after a pass that executes ud2 unless the pass produced exactly its result."""
    q = size // 8
    if kernel.op == "read":
        if kernel.width == "scalar":
            red = ["add rax, rbx", "add rax, r11", "add rax, r12"]
        else:
            r = _regs(kernel.width, 4)
            v = _v(kernel.width)
            red = ([f"paddq {r[0]}, {r[i]}" for i in (1, 2, 3)] if kernel.width == "sse"
                   else [f"vpaddq {r[0]}, {r[0]}, {r[i]}" for i in (1, 2, 3)])
            if kernel.width == "avx512":
                red += ["vextracti64x4 ymm1, zmm0, 1", "vpaddq ymm0, ymm0, ymm1"]
            if kernel.width in ("avx2", "avx512"):
                red += ["vextracti128 xmm1, ymm0, 1", "vpaddq xmm0, xmm0, xmm1"]
            red += [f"{v}pextrq rax, xmm0, 0", f"{v}pextrq rdx, xmm0, 1", "add rax, rdx"]
        expect = q * (q - 1) // 2
        return "\n".join(red + [f"mov rdx, {expect}", "cmp rax, rdx", "je 8f", "ud2", "8:"])
    if kernel.op == "write":
        chk = [f"mov rax, {PATTERN}", "mov rdi, r8", f"mov rcx, {q}", "repe scasq"]
    elif kernel.op == "copy":
        chk = ["mov rsi, r8", "mov rdi, r9", f"mov rcx, {q}", "repe cmpsq"]
    else:
        chk = [f"mov rax, {F7}", "mov rdi, r10", f"mov rcx, {q}", "repe scasq"]
    return "\n".join(chk + ["je 8f", "ud2", "8:"])


def spoil(kernel: Kernel, size: int) -> str:
    """Code that overwrites the destination with junk (before a verified pass)."""
    dst = {"read": None, "write": "r8", "copy": "r9", "triad": "r10"}[kernel.op]
    if dst is None:
        return "nop"
    return "\n".join([f"mov rdi, {dst}", f"mov rcx, {size // 8}", "mov rax, 0x1111111111111111", "rep stosq"])
