"""Provenance: where, how and with what each run was made."""
from portalab.report.blocks import num, section, table


def provenance_section(runs):
    blocks = []
    for path, doc, rows in runs:
        p = doc["provenance"]
        host, kk, build = p.get("host", {}), p.get("kokkos", {}), p.get("build", {})
        deck, kernels = p.get("deck", {}), p.get("kokkos_kernels", {})
        slurm = p.get("slurm", {})
        devices = "; ".join(f"{d['space']}: {d.get('name', '')}" + (
            f" ({d['multiprocessors']} SMs, {num(d['memory_bytes'] / 2**30)} GiB)"
            if d.get("multiprocessors") else "") for d in p.get("devices", []))
        ranks = p.get("ranks") or []
        cal = p.get("calibration")
        items = [
            ("results", path),
            ("started", p.get("started_at", "")),
            ("command", " ".join(p["command"]) if isinstance(p.get("command"), list)
             else str(p.get("command", ""))),
            ("deck", f"{deck.get('path', '-')} (hash {deck.get('hash', '-')})"),
            ("machine", f"{host.get('hostname', '')}: {host.get('cpu_model', '')}, "
                        f"{host.get('hardware_threads', '')} hardware threads, host space on "
                        f"{host.get('host_space_threads', '')}"),
            ("devices", devices),
            ("Kokkos", f"{kk.get('version', '')}, spaces {', '.join(kk.get('spaces', []))}, "
                       f"default {kk.get('default_execution_space', '')}"),
            ("Kokkos Kernels", f"{kernels.get('version', '')}, TPLs "
                               f"{', '.join(kernels.get('tpls', [])) or 'none'}"),
            ("BLAS / LAPACK", f"{host.get('blas', '')} / {host.get('lapack', '')}; threads: "
                              f"{host.get('blas_threads', '')}"),
            ("build", f"{build.get('compiler_id', '')} {build.get('compiler_version', '')} "
                      f"{build.get('build_type', '')}: {build.get('flags', '')}"),
            ("git", p.get("portalab", {}).get("git_commit", "")),
            ("OMP_* / KOKKOS_*", " ".join(f"{k}={v}" for k, v in sorted(
                {**host.get("omp_env", {}), **host.get("kokkos_env", {})}.items())) or "none set"),
            ("Slurm", f"job {slurm['job_id']}"
                      + (f" task {slurm['array_task_id']}" if slurm.get("array_task_id") else "")
                      + f" on {slurm.get('nodelist', '')} ({slurm.get('partition', '')})"
             if slurm.get("job_id") else "not a Slurm job"),
            ("ranks", f"{len(ranks)}: " + "; ".join(
                f"rank {x.get('rank')} on {x.get('host')} device {x.get('device_id', '-')}"
                for x in ranks) if ranks else "1 (no MPI)"),
            ("calibration", f"{cal.get('mode')} ({num(cal.get('seconds'))} s)" if cal
             else "none"),
            ("entries", f"{len(rows)}"),
        ]
        blocks.append(table(["", ""], [[k, v] for k, v in items], f"Run {path}", numeric=set()))
    return section("provenance", "Provenance", *blocks)
