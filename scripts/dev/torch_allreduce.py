#!/usr/bin/env python3
"""PyTorch's torch.distributed.all_reduce (NCCL backend) on the same GPUs, as
the reference for portalab's allreduce nccl rows: bus bandwidth as
nccl-tests defines it (busbw = algbw * 2(k-1)/k), median of the repetitions.

    mpirun -np 2 python3 scripts/dev/torch_allreduce.py [--sizes-mib 256 512 1024] [--json FILE]

Ranks come from mpirun's environment (OMPI_COMM_WORLD_*) or torchrun's
(RANK, WORLD_SIZE, LOCAL_RANK). Rank 0 prints one line per size and writes
--json. Needs PyTorch with CUDA: it says so and exits 2 when missing.
"""
import argparse
import json
import os
import statistics
import sys

# The user package (scripts/portalab/), one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from portalab import results as pr  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes-mib", type=int, nargs="+", default=[256, 512, 1024])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmups", type=int, default=5)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--json", help="write the figures here (rank 0)")
    args = p.parse_args()
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("torch_allreduce.py needs PyTorch (pip install torch); not found", file=sys.stderr)
        return 2
    env = os.environ
    rank = int(env.get("RANK", env.get("OMPI_COMM_WORLD_RANK", "0")))
    world = int(env.get("WORLD_SIZE", env.get("OMPI_COMM_WORLD_SIZE", "1")))
    local = int(env.get("LOCAL_RANK", env.get("OMPI_COMM_WORLD_LOCAL_RANK", "0")))
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", "29511")
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    dtype = getattr(torch, args.dtype)
    out = []
    for mib in args.sizes_mib:
        n = mib * (1 << 20) // torch.tensor([], dtype=dtype).element_size()
        x = torch.ones(n, dtype=dtype, device="cuda")
        times = []
        for i in range(args.warmups + args.reps):
            dist.barrier()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            dist.all_reduce(x)
            end.record()
            torch.cuda.synchronize()
            if i >= args.warmups:
                times.append(start.elapsed_time(end))
        # The slowest rank's median, as portalab times a group.
        t = torch.tensor([statistics.median(times)], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        ms = t.item()
        algbw = mib * (1 << 20) / (ms * 1e6)
        busbw = algbw * 2 * (world - 1) / world
        out.append({"bytes": mib << 20, "ms": ms, "algbw_gbps": algbw, "busbw_gbps": busbw})
        if rank == 0:
            print(f"torch all_reduce {args.dtype} {mib} MiB on {world} ranks: {ms:.3f} ms, "
                  f"algbw {algbw:.1f} GB/s, busbw {busbw:.1f} GB/s", flush=True)
    if rank == 0 and args.json:
        pr.save(args.json, json.dumps({"torch": torch.__version__,
                                       "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                                       "ranks": world, "dtype": args.dtype, "sizes": out}, indent=2))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
