"""Synthetic portalab runs for the results store's tests and benchmark:
results.json documents with the provenance, calibration and rows the store
reads, made in memory (no run needed), each with a provenance of its own."""
import json
import os

HOST_SPACES = ("Serial", "OpenMP", "Threads")


def row(experiment="stream_copy", variant="deep_copy", dtype="float64", n=1000000,
        space="Cuda", copies="none", ms=1.0, spread=0.005, check="PASS", reps=10,
        library="native", threads=1, gbps=None, throttled=None, sm_mhz=None, path=None):
    """One result row; ms the median of total (and kernel), its repetitions
    within +-spread; path its code path (left out where None, as version 2
    files leave it)."""
    stats = {"median_ms": ms, "min_ms": ms * (1 - spread), "max_ms": ms * (1 + spread),
             "std_ms": ms * spread / 2}
    zero = {"median_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0, "std_ms": 0.0}
    bytes_ = 16.0 * n
    r = {"experiment": experiment, "variant": variant, "dtype": dtype, "n": n, "space": space,
         "copies": copies, "library": library, "threads": threads, "check": check, "reps": reps,
         "h2d_ms": 0.0, "kernel_ms": ms, "d2h_ms": 0.0, "total_ms": ms,
         "stats": {"h2d": zero, "kernel": stats, "d2h": zero, "total": dict(stats)},
         "bytes": bytes_, "flops": 0.0, "ranks": 1, "per_rank": [],
         "gbps": gbps if gbps is not None else bytes_ / (ms * 1e-3) / 1e9, "gflops": 0.0,
         "pct_of_limit": None,
         "energy": {"cpu": {"not_available": "synthetic"}, "start_unix_s": 0.0, "end_unix_s": 0.0,
                    "gflop_per_j": None, "gb_per_j": None}}
    # The rest of a row as schema/results.schema.json asks (the store checks it).
    r.update({"library_threads": 0, "warmups": 1, "cold_ms": None, "first_in_process": False,
              "copies_alias": False, "h2d_gbps": None, "d2h_gbps": None, "limit": None,
              "h2d_pct_of_limit": None, "d2h_pct_of_limit": None, "speedup": None,
              "baseline": "", "rel_error": None, "tolerance": None, "note": "", "launches": 1,
              "us_per_launch": 0.0, "parameters": {}, "timed_by": "instance fence",
              "rank_kernel_min_ms": None, "rank_kernel_max_ms": None, "imbalance": None,
              "metrics": {}})
    if path is not None:
        r["path"] = path
    if throttled is not None or sm_mhz is not None:
        r["energy"].update({"gpu": {"joules": 1.0, "joules_per_rep": 0.1, "kernel_joules": 1.0,
                                     "kernel_joules_per_rep": 0.1, "seconds": 0.01,
                                     "mean_power_w": 300.0, "reps": reps, "reps_counted": reps}, "sm_clock_mhz": sm_mhz or 1980,
                            "mem_clock_mhz": 2619, "power_w": 300.0, "temperature_c": 50.0,
                            "clock_event_reasons": ["sw_power_cap"] if throttled else [],
                            "throttled": bool(throttled)})
    return r


def repeated(r, kernel_ms, total_ms=None, noise_target=None, stopped_by="reps", noisy=False,
             rel_ci95=0.01, passes=None):
    """Row r as results schema 5 writes it: its repetitions (kernel_ms, and
    total_ms, the kernel's where None) in the order run, its kernel and total
    statistics from them, and how the count was chosen; `passes`, each
    pass's median (kernel and total alike), where it ran in passes."""
    total_ms = kernel_ms if total_ms is None else total_ms
    for phase, times in (("kernel", kernel_ms), ("total", total_ms)):
        ordered = sorted(times)
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        mean = sum(times) / len(times)
        std = (sum((t - mean) ** 2 for t in times) / max(1, len(times) - 1)) ** 0.5
        r["stats"][phase] = {"median_ms": median, "min_ms": ordered[0], "max_ms": ordered[-1],
                             "std_ms": std}
        r[f"{phase}_ms"] = median
    r.update({"reps": len(kernel_ms), "repetitions": {"kernel_ms": list(kernel_ms),
                                                      "total_ms": list(total_ms)},
              "median_ci_low_ms": r["kernel_ms"] * (1 - rel_ci95),
              "median_ci_high_ms": r["kernel_ms"] * (1 + rel_ci95), "rel_ci95": rel_ci95,
              "noise_target": noise_target, "stopped_by": stopped_by, "noisy": noisy})
    if passes:
        r["repetitions"].update({"pass_kernel_ms": list(passes), "pass_total_ms": list(passes)})
    return r


# What else a calibrated space holds (schema/limits.schema.json), the same for every one.
SPACE_REST = {"stream_bytes": 1 << 28, "cache_bytes": 1 << 25, "gemm_library": {},
              "gemm_kernels": "", "gemm_kernels_warning": "", "gemm_n": 1024, "unsteady": []}


def gpu_limits(triad=2994.0, h2d=48.8, d2h=55.0):
    return {"space": "Cuda", "host": False, "memory_gbps": triad, "copy_kernel_gbps": 2790.0,
            "copy_deep_copy_gbps": 2932.0, "triad_gbps": triad, "read_gbps": 3000.0,
            "launch_us": 14.6, "gemm_gflops": {"float32": 51200.0, "float64": 64300.0},
            "transfers": {"h2d_pinned": {"best_gbps": h2d, "sweep": []},
                          "d2h_pinned": {"best_gbps": d2h, "sweep": []}}, **SPACE_REST}


def host_limits(space="OpenMP", triad=60.0):
    return {"space": space, "host": True, "memory_gbps": triad, "copy_kernel_gbps": triad * 0.8,
            "copy_deep_copy_gbps": triad * 0.9, "triad_gbps": triad, "read_gbps": triad,
            "launch_us": 5.0, "gemm_gflops": {"float64": 200.0}, "transfers": {}, **SPACE_REST}


def run(rows, host="node1", started="2026-11-20T10:00:00Z", job="", portalab="aaaaaaa",
        driver=580, gpu=None, limits=None, tag="", version=2):
    """A results document of schema_version `version`. gpu: {"uuid", "name",
    pcie_link_width, ...}: the one GPU of a run on one rank; limits:
    calibration spaces."""
    settings = {k: v for k, v in (gpu or {}).items() if k not in ("uuid", "name", "pci_bus_id")}
    devices = [{"space": "OpenMP", "name": "Xeon", "concurrency": 16}]
    rank = {"rank": 0, "ranks": 1, "local_rank": 0, "local_ranks": 1, "host": host, "cpus": "0-15",
            "mpi": False, "energy": {"gpu": settings}}
    if gpu:
        device = {"space": "Cuda", "name": gpu.get("name", "NVIDIA H100 80GB HBM3"),
                  "device_id": 0, "uuid": gpu["uuid"], "concurrency": 270336,
                  "pci_bus_id": gpu.get("pci_bus_id", "00000000:1b:00.0"),
                  "cuda_driver": driver, "cuda_runtime": 13000}
        devices.append(device)
        rank["device"] = device
    provenance = {
        "portalab": {"git_commit": portalab}, "started_at": started,
        "command": ["portalab", "run", "synthetic", tag],
        "kokkos": {"version": "4.6.1", "spaces": ["Serial", "OpenMP"] + ["Cuda"] * bool(gpu),
                   "default_execution_space": "Cuda" if gpu else "OpenMP"}, "kokkos_kernels": {"version": "4.6.2", "tpls": []},
        "build": {"compiler_id": "GNU", "compiler_version": "12.2.0"},
        "devices": devices,
        "host": {"hostname": host, "cpu_model": "Xeon", "blas": "OpenBLAS", "hardware_threads": 16,
                 "host_space_threads": 16},
        "slurm": {"job_id": job, "array_task_id": "", "nodelist": "", "partition": ""},
        "ranks": [rank],
        "calibration": {"mode": "quick", "seconds": 1.0,
                        "spaces": limits if limits is not None else [host_limits()]},
        "deck": {"path": "synthetic.toml", "hash": "fnv1a64:0"}}
    if version >= 4:  # version 4's name of a row's speedup
        rows = [dict({k: v for k, v in r.items() if k != "speedup"},
                     speedup_over_baseline=r.get("speedup")) for r in rows]
    return {"schema_version": version, "provenance": provenance, "summary": {"entries": len(rows)},
            "results": rows}


def on_ranks(doc, uuids, triads):
    """doc as a run on len(uuids) ranks of one node, rank k on GPU uuids[k]
    with its own calibration (triad triads[k]); rows the slowest rank's."""
    p = doc["provenance"]
    ranks = []
    for k, (uuid, triad) in enumerate(zip(uuids, triads)):
        r = json.loads(json.dumps(p["ranks"][0]))
        r.update(rank=k, ranks=len(uuids), local_rank=k, local_ranks=len(uuids), mpi=True)
        r["device"] = dict(r.get("device", {}), uuid=uuid, device_id=k)
        r["calibration"] = {"mode": "quick", "seconds": 1.0,
                            "spaces": [gpu_limits(triad=triad), host_limits()]}
        ranks.append(r)
    p["ranks"] = ranks
    p["calibration"] = ranks[0]["calibration"]
    for row in doc["results"]:
        row["ranks"] = len(uuids)
    return doc


def write(doc, folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "results.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def day(i, hour=10):
    """An ISO time i days after 2026-11-01."""
    return f"2026-11-{1 + i:02d}T{hour:02d}:00:00Z"
