#!/usr/bin/env python3
"""Capacity study with the syncsim Python module (docs/python.md): MFU against GPU count.

How far does a data-parallel job scale on a spine-leaf cluster, and what do faster NICs buy? The
fabric of scenarios/capacity-gpus.yaml (its comment explains it) cut to 32 leaves (1024 H100, 8
per host, a NIC per GPU, 800G leaf-spine links), running the bucket-size study's GPT-3 2.7B with
DDP (micro-batch 4, PyTorch's 25 MiB buckets): a small model, so the gradient all-reduces are long
next to the compute and the NIC speed shows. 64 .. 1024 GPUs with 100G and 400G NICs, each point
one flow-level simulation in its own Python thread (the simulation releases the GIL, so two
points use two cores); syncsim.sweep(jobs=N) does the same in one call. About 25 s on two cores
(41 s of CPU; `ci` build, 2026-12-05).
Prints the table; with matplotlib (Debian: python3-matplotlib) it draws MFU against GPUs into
capacity_study.png (or the file named as the first argument).

  PYTHONPATH=build/release/python python3 examples/capacity_study.py [OUT.png]
"""

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import syncsim

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "capacity-gpus.yaml")
GPUS = [64, 128, 256, 512, 1024]
NICS = ["100Gbps", "400Gbps"]
# The changes to scenarios/capacity-gpus.yaml (see the docstring).
BASE = {
    "fabric.spine_leaf.leaves": 32,
    "workload.model": "gpt3-2.7b",
    "workload.micro_batch": 4,
}


def point(gpus, nic):
    scenario = syncsim.load(
        SCENARIO,
        set=dict(BASE, **{"workload.data_parallel": gpus, "fabric.links.host.bandwidth": nic}),
    )
    result = syncsim.run(scenario)
    return {"gpus": gpus, "nic": nic, "mfu": result["mfu"],
            "step_s": result["step_time_s"], "exposed_s": result["exposed_comm_s"]}


def main(out="capacity_study.png"):
    grid = [(g, n) for n in NICS for g in GPUS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda p: point(*p), grid))
    print("%6s %8s %8s %10s %14s" % ("GPUs", "NIC", "MFU %", "step ms", "exposed ms"))
    for r in rows:
        print(
            "%6d %8s %8.1f %10.1f %14.1f"
            % (r["gpus"], r["nic"], r["mfu"] * 100, r["step_s"] * 1e3, r["exposed_s"] * 1e3)
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return rows
    fig, ax = plt.subplots(figsize=(6, 4))
    for nic in NICS:
        line = [r for r in rows if r["nic"] == nic]
        ax.plot([r["gpus"] for r in line], [r["mfu"] * 100 for r in line], "o-", label=nic + " NICs")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("GPUs (data parallel)")
    ax.set_ylabel("MFU %")
    ax.set_title("GPT-3 2.7B, DDP on H100: MFU against GPUs")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)
    print("plot: %s" % out)
    return rows


if __name__ == "__main__":
    main(*sys.argv[1:2])
