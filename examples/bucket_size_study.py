#!/usr/bin/env python3
"""DDP bucket size study with the syncsim Python module (docs/python.md).

GPT-3 2.7B trained with PyTorch DDP on 32 H100 (scenarios/bucket-size-study.yaml explains the
set-up): one point per `bucket_cap_mb`, run on two threads. Small buckets pay each all-reduce's
latency many times; huge ones start late and leave a long tail after backward. Prints the table and,
where matplotlib is installed (Debian: python3-matplotlib), draws step time and exposed
communication against the bucket size into bucket_size_study.png (or the file named as the first
argument).

  PYTHONPATH=build/release/python python3 examples/bucket_size_study.py [OUT.png]
"""

import os
import sys

import syncsim

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "bucket-size-study.yaml")
BUCKETS_MB = [1, 4, 16, 25, 64, 256, 1024]  # 25: PyTorch DDP's default bucket_cap_mb


def main(out="bucket_size_study.png"):
    scenario = syncsim.load(SCENARIO)
    rows = syncsim.sweep(
        scenario,
        vary={"workload.ddp.bucket_cap_mb": BUCKETS_MB},
        jobs=2,
        progress=lambda done, total: print("  %d/%d points" % (done, total), file=sys.stderr),
    )
    print("%10s %12s %16s %10s %8s" % ("bucket MB", "step ms", "exposed comm ms", "tail ms", "MFU %"))
    for r in rows:
        print(
            "%10d %12.2f %16.2f %10.2f %8.1f"
            % (
                r["workload.ddp.bucket_cap_mb"],
                r["step_time_s"] * 1e3,
                r["exposed_comm_s"] * 1e3,
                r["tail_s"] * 1e3,
                r["mfu"] * 100,
            )
        )
    best = min(rows, key=lambda r: r["step_time_s"])
    print("shortest step: bucket_cap_mb = %d" % best["workload.ddp.bucket_cap_mb"])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return rows
    mb = [r["workload.ddp.bucket_cap_mb"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(mb, [r["step_time_s"] * 1e3 for r in rows], "o-", label="step")
    ax.plot(mb, [r["exposed_comm_s"] * 1e3 for r in rows], "s-", label="exposed communication")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("DDP bucket_cap_mb")
    ax.set_ylabel("ms")
    ax.set_title("GPT-3 2.7B, DDP on 32 H100: bucket size")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)
    print("plot: %s" % out)
    return rows


if __name__ == "__main__":
    main(*sys.argv[1:2])
