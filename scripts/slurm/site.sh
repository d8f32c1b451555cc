# shellcheck shell=bash
# portalab's Slurm site settings: THE ONE PLACE TO EDIT for a new cluster.
# scripts/slurm/submit.sh sources this before sbatch (or `source` it in your
# shell before calling sbatch yourself). sbatch reads the SBATCH_* variables as
# if they were #SBATCH lines, and they win over the job scripts' own lines, so
# the scripts stay the same on every site. A variable already set in your
# environment wins over the value here.

# An installed copy (<prefix>/share/portalab/scripts/slurm) runs <prefix>/bin/portalab.
portalab_site_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $portalab_site_here in
  */share/portalab/scripts/slurm) portalab_default_build=${portalab_site_here%/share/portalab/scripts/slurm}/bin ;;
  *) portalab_default_build=build/cuda ;;
esac

# ===== edit below ==========================================================
export SBATCH_PARTITION=${SBATCH_PARTITION:-gpu}         # a partition with GPU nodes
: "${PORTALAB_ACCOUNT:=}"                                # project to charge; empty: your default
export SBATCH_TIMELIMIT=${SBATCH_TIMELIMIT:-00:30:00}    # per job (and per array task)
export SBATCH_CPUS_PER_GPU=${SBATCH_CPUS_PER_GPU:-16}    # CPU cores that come with one GPU
# Modules loaded in each job before running portalab ("" for none).
export PORTALAB_MODULES=${PORTALAB_MODULES-"cuda kokkos kokkos-kernels"}
# The folder of the portalab the jobs run (absolute, or relative to where you
# submit): a build folder, or an installed <prefix>/bin (the default when
# these scripts are the installed ones; build/cuda otherwise).
export PORTALAB_BUILD=${PORTALAB_BUILD:-$portalab_default_build}
# Each run's report.html (scripts/report.py) needs a python3 with matplotlib
# and jinja2 (after the modules); PORTALAB_REPORT=no writes none.
export PORTALAB_PYTHON=${PORTALAB_PYTHON:-python3}
export PORTALAB_REPORT=${PORTALAB_REPORT:-yes}
# The results store (`portalab db`): where set, each job imports its runs
# at its end, from one task; empty: none (import by hand, or import.sbatch).
PORTALAB_DB=${PORTALAB_DB-}
# ===== edit above ==========================================================

# sbatch rejects an empty account: set it only when there is one.
if [ -n "$PORTALAB_ACCOUNT" ]; then export SBATCH_ACCOUNT=$PORTALAB_ACCOUNT; fi
# portalab refuses a PORTALAB_* variable set empty: export the store only
# when there is one.
if [ -n "$PORTALAB_DB" ]; then export PORTALAB_DB; else unset PORTALAB_DB; fi
# A report switch of another word would read as yes: refused before sbatch.
case $PORTALAB_REPORT in
  yes | no) ;;
  *) echo "portalab: PORTALAB_REPORT='$PORTALAB_REPORT': expected yes or no" >&2
     return 2 ;;
esac
