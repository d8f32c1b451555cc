#!/usr/bin/env bash
# Submits a portalab job script with this site's settings (site.sh):
#   scripts/slurm/submit.sh [sbatch options] JOB_SCRIPT [job arguments]
# e.g. scripts/slurm/submit.sh scripts/slurm/run_deck.sbatch lab6-vector
# Prints the job id (sbatch --parsable). Options given here win over site.sh.
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,5p' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/site.sh"
# The job scripts find common.sh through this (a batch script runs from a copy
# in Slurm's spool, so it cannot find its own folder).
export PORTALAB_SLURM_DIR=$here
exec sbatch --parsable "$@"
