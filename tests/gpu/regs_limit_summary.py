#!/usr/bin/env python3
"""Summarizes the register-limit experiment (tests/gpu/regs_limit.sh): one
JSON outcome a line from `gpuprobe regs-limit --variant`, into a table and a
verdict on each hypothesis of probes/regs_limit.h, in markdown on stdout.

usage: regs_limit_summary.py VARIANTS.jsonl EXPECTED_COUNT
Exit status 0 when both controls ran and every expected variant gave an
outcome, 1 otherwise. A verdict is only as good as the variants behind it:
each names them, and a variant that could not run leaves it "not decided".
"""
import json
import sys


def main():
    rows = {}
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if line:
                d = json.loads(line)
                rows[d["variant"]] = d
    expected = int(sys.argv[2]) if len(sys.argv) > 2 else len(rows)

    def o(name):
        return rows.get(name, {}).get("outcome")

    def reg(name):
        return rows.get(name, {}).get("register")

    any_row = next(iter(rows.values()), {})
    dev = any_row.get("device", {})
    print("# Register-limit experiment\n")
    print(f"Device: {dev.get('name', '?')} ({dev.get('uuid', '?')}), driver "
          f"{any_row.get('driver_version', '?')}; {len(rows)} of {expected} variants gave an "
          "outcome.\n")
    print("| variant | register | declared count | compiled count | highest destination "
          "| other instructions naming it | outcome | CUDA error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, d in rows.items():
        r = d["register"]
        print(f"| {name} | {'-' if r < 0 else 'R%d' % r} | {d['declared_count']} | "
              f"{d['compiled_count']} | R{d['highest_destination']} | "
              f"{d.get('other_instructions_naming_register', 0)} | {d['outcome']} | "
              f"{d['cuda_error'] or '-'} |")
    print()
    ok = o("wide.none") == "ok" and o("small.none") == "ok"
    verdicts = []
    if not ok:
        verdicts.append("INVALID: a control (wide.none, small.none) did not run cleanly; "
                        "nothing below can be trusted")

    # (a) fewer registers than the reported count, in a small kernel too
    a = [o(f"small.ffma.ra.{p}") for p in ("count-3", "count-2", "count-1")]
    small_n = rows.get("small.none", {}).get("compiled_count")
    if a == ["ok", "fault", "fault"]:
        verdicts.append(f"(a) SUPPORTED: in the small kernel (count {small_n}) R{small_n - 2} "
                        f"and R{small_n - 1} fault as R253/R254 do at 255: a kernel may name "
                        "only the registers below its count minus 2 (the compiler's highest "
                        "destination + 1); the two the count adds are not its own")
    elif a == ["ok", "ok", "ok"]:
        verdicts.append(f"(a) REJECTED for small kernels: R{small_n - 2} and R{small_n - 1} "
                        f"run in a kernel of count {small_n}")
    else:
        verdicts.append(f"(a) not decided: small.ffma.ra count-3/-2/-1 gave {a}")
    places = ["count-3", "count-2", "count-1", "count", "alloc-1", "alloc"]
    small_run = [(p, reg(f"small.ffma.ra.{p}"), o(f"small.ffma.ra.{p}")) for p in places]
    verdicts.append("small kernel, FFMA Ra: " +
                    ", ".join(f"R{r} {x}" for p, r, x in small_run if r is not None))

    # (b) R253/R254 reserved encodings
    wide = {p: o(f"wide.ffma.ra.{p}") for p in ("count-3", "count-2", "count-1")}
    c255 = {p: o(f"small-c255.ffma.ra.{p}") for p in ("count-3", "count-2", "count-1")}
    if wide["count-2"] == "fault" and a[1] == "ok":
        extra = ""
        if c255["count-2"] == "fault" and c255["count-3"] == "ok":
            extra = ("; R253 also faults in the small kernel declared with 255 registers while "
                     "R252 runs there: the register numbers themselves")
        elif c255["count-2"] == "ok":
            extra = ("; but R253 runs in the small kernel declared with 255: not the number, "
                     "something of the wide kernel")
        verdicts.append("(b) SUPPORTED: R253 faults in the 255-register kernel while a small "
                        "kernel names R(count-2) without fault" + extra)
    elif wide["count-2"] == "fault" and a[1] == "fault":
        verdicts.append("(b) not needed: R(count-2) faults in every kernel tried, (a) explains "
                        "R253/R254")
    else:
        verdicts.append(f"(b) not decided: wide {wide}, small count-2 {a[1]}, "
                        f"small-c255 {c255}")

    # (c) destination vs source, (d) FFMA vs IADD3: pairs that differ
    def pairs(key_a, key_b):
        diff, same = [], 0
        for name, d in rows.items():
            if key_a not in name:
                continue
            other = name.replace(key_a, key_b)
            if other in rows:
                if d["outcome"] == rows[other]["outcome"]:
                    same += 1
                else:
                    diff.append(f"{name} {d['outcome']} / {other} {rows[other]['outcome']}")
        return diff, same
    for label, ka, kb in (("(c) destination vs source", ".ra.", ".rd."),
                          ("(d) FFMA vs IADD3", ".ffma.", ".iadd3.")):
        diff, same = pairs(ka, kb)
        if not diff and same:
            verdicts.append(f"{label}: REJECTED, {same} pairs fault or run alike")
        elif diff:
            verdicts.append(f"{label}: SUPPORTED where {'; '.join(diff)} ({same} pairs alike)")
        else:
            verdicts.append(f"{label}: not decided (no pair ran)")

    # does the driver allocate by the declared count? R(n+5), count-3 of
    # the count raised by 8, lies past the small kernel's allocation when
    # n + 5 >= its granule's end: usable under (a) too if the raise counts.
    r_alloc = reg("small.ffma.ra.alloc")
    twin = "small-c+8.ffma.ra.count-3"
    if o("small.ffma.ra.alloc") == "ok":
        verdicts.append(f"past the allocation: R{r_alloc} runs in the small kernel although "
                        "past its allocation: an out-of-range register is not checked there")
    elif o(twin) is None or r_alloc is None or reg(twin) < r_alloc:
        verdicts.append("declared count: not decided (the raised kernel's R(count-3) is not "
                        "past the small kernel's allocation, or did not run)")
    elif o(twin) == "ok":
        verdicts.append(f"declared count honoured: R{r_alloc} faults in the small kernel, "
                        f"R{reg(twin)} runs with the count raised by 8 ({twin})")
    else:
        verdicts.append(f"declared count not honoured: R{reg(twin)} faults with the count "
                        f"raised by 8 ({twin}), as R{r_alloc} does without")
    suspicious = [n for n, d in rows.items()
                  if d["outcome"] == "fault" and d.get("other_instructions_naming_register")]
    if suspicious:
        verdicts.append("caution: these faults edited a register other instructions also "
                        "name (an address or counter may have been clobbered): " +
                        ", ".join(suspicious))
    print("## Verdicts\n")
    for v in verdicts:
        print(f"- {v}")
    return 0 if ok and len(rows) == expected else 1


if __name__ == "__main__":
    sys.exit(main())
