#!/usr/bin/env python3
"""Writes the Markdown summary of a gpu-check run from the files it left."""
import datetime
import json
import sys
from pathlib import Path

out = Path(sys.argv[1])
devs = json.load(open(out / "devices.json"))
ready = json.load(open(out / "readyz.json"))
print(f"# gpu-check summary\n")
print(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}")
print(f"- gpuprobe: {(out / 'version.txt').read_text().strip()}")
print(f"- driver: {devs['driver_version']} (CUDA driver API {devs['cuda_driver_version']})")
print(f"- readyz: ready={ready['ready']} devices={ready['devices']}\n")
keys = ["index", "name", "uuid", "compute_capability", "sm_count", "clock_khz",
        "memory_clock_khz", "memory_bytes", "memory_bus_width_bits", "l2_bytes",
        "registers_per_sm", "shared_memory_per_sm", "shared_memory_per_block_optin",
        "max_threads_per_sm", "max_warps_per_sm", "max_blocks_per_sm", "pci_bus_id"]
for d in devs["devices"]:
    print("| attribute | value |\n|---|---|")
    for k in keys:
        print(f"| {k} | {d[k]} |")
    print()
