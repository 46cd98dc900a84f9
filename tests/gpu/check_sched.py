#!/usr/bin/env python3
"""The issue-order experiment (probes/issue_order.h) of the control-code
probe, checked on a GPU.

Usage: check_sched.py BASE_URL TOKEN UUID OUT_DIR   (through a daemon)
       check_sched.py --doc CONTROL_CODES.json OUT_DIR   (a probe's document,
                                                          e.g. `gpuprobe probe
                                                          control-codes --json`)

Through a daemon it submits a control-codes job, waits for it and reads the
served /control-codes?job= answer: the "scheduler" meaning must be there,
equal to the job's own. On either document it checks:
- experiments.scheduler ran (no "error"), its kernel's machine code was read
  (16 clock reads, every one a CS2R, else a warning);
- every experiment at every warp count computed the unedited kernel's
  answer ("correct") and produced traces;
- no segment took fewer cycles than its 16 FFMAs (one warp issues at most
  one instruction a cycle: fewer would mean the clocks are not issue times);
- the meaning's verdicts are the ones its counts imply (recomputed here with
  the same thresholds as probes/issue_order_policy.c).
Writes sched.json (the experiment and its meaning) and sched-summary.md
(the table of decisions per experiment, the overlap within and across
%warpid mod 4 groups, the rule), and prints the summary. Exit status 0 when
the checks pass (the rule may be "not determined": the summary says so).
"""
import json
import sys

MIN_DECISIONS, MATCH, MAX_OVERLAP = 8, 0.9, 0.1      # probes/issue_order.h
POLICIES = ["youngest", "oldest", "round-robin", "lowest-id"]
FFMA_PER_SEGMENT = 16


def verdict(c):
    """The policies the counts support, as io_verdict computes them."""
    if c.get("decisions", 0) < MIN_DECISIONS or not c.get("pairs") or \
            c.get("overlapped", 0) > MAX_OVERLAP * c["pairs"]:
        return None
    rule = [p for p in POLICIES if c["hits"].get(p, 0) >= MATCH * c["decisions"]]
    return rule or None


def check(doc, meaning, problems):
    sched = doc.get("experiments", {}).get("scheduler")
    if not isinstance(sched, dict):
        problems.append("no experiments.scheduler in the document")
        return None
    if "error" in sched:
        problems.append("the issue-order experiment failed: " + sched["error"])
        return sched
    lay = sched["layout"]
    if lay["reads_not_cs2r"]:
        print("warning: %d clock reads are not CS2R (they wait on a scoreboard)" % lay["reads_not_cs2r"])
    for e in sched["experiments"]:
        tag = "%s, %d warps" % (e["name"], e["warps"])
        if not e["correct"]:
            problems.append(tag + ": the accumulators differ from the unedited kernel's")
        if e["counts"]["traces"] < 1:
            problems.append(tag + ": no traces")
    for name, c in sched["by_experiment"].items():
        seg = c.get("segment_cycles")
        if not seg or seg["min"] < FFMA_PER_SEGMENT:
            problems.append("%s: a segment of %d FFMAs took %s cycles" % (
                name, FFMA_PER_SEGMENT, seg and seg["min"]))
        if verdict(c) != c.get("rule"):
            problems.append("%s: rule %s, the counts imply %s" % (name, c.get("rule"), verdict(c)))
    if not isinstance(meaning, dict) or not meaning.get("text") or "rule" not in meaning:
        problems.append("no scheduler meaning with a text and a rule")
    return sched


def summary(doc, sched, meaning):
    dev = doc.get("device", {})
    yield "# Issue order after a stall or yield, %s (%s)" % (dev.get("name"), dev.get("uuid"))
    yield ""
    if not isinstance(sched, dict) or "error" in sched:
        yield "**not run**: %s" % (sched or {}).get("error", "no experiment")
        return
    yield "**%s**" % meaning.get("rule")
    yield ""
    yield meaning.get("text", "")
    yield ""
    yield "| experiment | edit | decisions | youngest | oldest | round-robin | lowest-id | overlapping | segment cycles | switches | breaks | kept at edited ends | rule |"
    yield "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    for name, c in sched["by_experiment"].items():
        seg = c.get("segment_cycles") or {}
        yield "| %s | %s | %d | %s | %d/%d | %s | %d | %d | %d/%d | %s |" % (
            name, c.get("edit", ""), c["decisions"],
            " | ".join(str(c["hits"][p]) for p in POLICIES),
            c["overlapped"], c["pairs"], "%.0f [%.0f-%.0f]" % (seg["median"], seg["min"], seg["max"]) if seg else "-",
            c["switches"], c["breaks"], c.get("held", 0), c.get("events", 0),
            " or ".join(c["rule"]) if c.get("rule") else "not determined")
    s = sched["subpartitions"]
    yield ""
    yield "Segment pairs overlapping in time: within a %%warpid mod 4 group %d of %d, across groups %d of %d." % (
        s["same_group_overlapping"], s["same_group_pairs"], s["cross_group_overlapping"], s["cross_group_pairs"])
    lay = sched["layout"]
    yield "Machine code: reads at instructions %d..%d, %d FFMAs, compiled end-read stall %d yield %d, FFMA stall <= %d, %d reads not CS2R." % (
        lay["first_read"], lay["last_read"], lay["ffma"], lay["compiled_end_stall"], lay["compiled_end_yield"],
        lay["compiled_ffma_stall_max"], lay["reads_not_cs2r"])
    for e in sched["experiments"]:
        if e["warps"] == 4:
            yield "- %s, 4 warps, first launch, group 0 order (warp index per segment): %s" % (
                e["name"], " ".join(map(str, e["order_sample"])))


def main():
    problems = []
    if sys.argv[1] == "--doc":
        doc, out = json.load(open(sys.argv[2])), sys.argv[3]
        meaning = doc.get("meanings", {}).get("scheduler")
    else:
        from api import client, job_runner
        base, token, uuid, out = sys.argv[1:5]
        call = client(base, token)
        submit, wait = job_runner(call, uuid)
        job = wait(submit("control-codes"))
        if job["state"] != "succeeded":
            print("control-codes job %s %s: %s" % (job["id"], job["state"], job.get("error")))
            sys.exit(1)
        doc = job["result"]
        meaning = doc.get("meanings", {}).get("scheduler")
        status, served = call("GET", "/api/v1/devices/%s/control-codes?job=%d" % (uuid, job["id"]))
        if status != 200:
            problems.append("GET /control-codes?job=: %s" % status)
        elif served.get("meanings", {}).get("scheduler") != meaning:
            problems.append("the served scheduler meaning differs from the job's")
    sched = check(doc, meaning, problems)
    json.dump({"scheduler": sched, "meaning": meaning}, open(out + "/sched.json", "w"), indent=1)
    text = "\n".join(summary(doc, sched, meaning or {})) + "\n"
    open(out + "/sched-summary.md", "w").write(text)
    print(text)
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
