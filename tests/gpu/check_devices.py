#!/usr/bin/env python3
"""Checks gpuprobe's device JSON against nvidia-smi's view of the same GPUs.

Usage: check_devices.py DEVICES_JSON NVIDIA_SMI_CSV
The CSV is nvidia-smi --query-gpu=index,uuid,name,memory.total,clocks.max.sm,
driver_version,pci.bus_id --format=csv,noheader,nounits. Every GPU there must
appear with the same UUID, name, driver and bus id, a memory size within 1%,
and attributes that a GPU must have (SMs, warps, registers, L2).
"""
import json
import sys


def main():
    doc = json.load(open(sys.argv[1]))
    rows = [[c.strip() for c in line.split(",")] for line in open(sys.argv[2]) if line.strip()]
    # the daemon also lists GPUs only stored here (the reference results),
    # attached false: the discovered ones are the attached ones
    devs = {d["uuid"]: d for d in doc["devices"] if d.get("attached", True)}
    problems = []
    if not rows:
        problems.append("nvidia-smi listed no GPU")
    if len(devs) != len(rows):
        problems.append(f"gpuprobe lists {len(devs)} devices, nvidia-smi {len(rows)}")
    for index, uuid, name, mem_mib, _clock, driver, bus in rows:
        d = devs.get(uuid)
        if d is None:
            problems.append(f"{uuid} missing from gpuprobe's list")
            continue
        if d["name"] != name:
            problems.append(f"{uuid}: name {d['name']!r} != {name!r}")
        if d["driver_version"] != driver:
            problems.append(f"{uuid}: driver {d['driver_version']!r} != {driver!r}")
        if d["pci_bus_id"].lower() != bus.lower()[-len(d["pci_bus_id"]):]:
            problems.append(f"{uuid}: bus {d['pci_bus_id']} != {bus}")
        if abs(d["memory_bytes"] / 2**20 - float(mem_mib)) > 0.01 * float(mem_mib):
            problems.append(f"{uuid}: memory {d['memory_bytes']} B vs {mem_mib} MiB")
        for key in ("sm_count", "max_warps_per_sm", "registers_per_sm", "l2_bytes",
                    "clock_khz", "shared_memory_per_sm", "max_blocks_per_sm"):
            if not isinstance(d.get(key), int) or d[key] <= 0:
                problems.append(f"{uuid}: {key} = {d.get(key)!r}")
        if d.get("warp_size") != 32:
            problems.append(f"{uuid}: warp_size = {d.get('warp_size')!r}")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
