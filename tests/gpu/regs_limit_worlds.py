#!/usr/bin/env python3
"""Synthetic outcomes for the register-limit summary's own test (t_cli.sh):
given the variant names (`gpuprobe regs-limit --list` on stdin) and a world,
prints one outcome line per variant as `gpuprobe regs-limit --variant` would
in that world, so the summary can be checked to name the right hypothesis.

usage: regs_limit_worlds.py a|b  < names
  a: a kernel of count n may name registers below n - 2 only (R(n-2) and
     R(n-1) fault everywhere), the declared count is honoured;
  b: R253 and R254 fault whatever the kernel; in a small kernel everything
     up to its allocation runs, past it faults.
Counts: the wide kernel 255 (highest destination R252), the small one 12
(R9), as ptxas 13.0 compiles them.
"""
import json
import sys

world = sys.argv[1]
for name in sys.stdin.read().split():
    kernel, place = name.split(".")[0], name.split(".")[-1]
    compiled = 255 if kernel == "wide" else 12
    declared = {"wide": 255, "small": 12, "small-c255": 255, "small-c+8": 20}[kernel]
    alloc = (declared + 7) // 8 * 8
    reg = {"none": -1, "count-3": declared - 3, "count-2": declared - 2,
           "count-1": declared - 1, "count": declared, "alloc-1": alloc - 1,
           "alloc": alloc}[place]
    if reg < 0:
        fault = False
    elif world == "a":
        fault = reg >= declared - 2
    else:
        fault = reg in (253, 254) or reg >= alloc
    print(json.dumps({
        "variant": name, "kernel": kernel, "register": reg, "declared_count": declared,
        "compiled_count": compiled, "highest_destination": compiled - 3,
        "other_instructions_naming_register": 0,
        "outcome": "fault" if fault else "ok",
        "error": "kernel execution: CUDA_ERROR_ILLEGAL_INSTRUCTION" if fault else "",
        "cuda_error": "CUDA_ERROR_ILLEGAL_INSTRUCTION" if fault else "",
        "driver_version": "synthetic", "device": {"name": "synthetic", "uuid": "-"}}))
