#!/usr/bin/env bash
# Grades a class on a Slurm cluster: N array tasks (each one shard, on its own GPU node or
# GPUs), then the merge once they are all done.
#
#   docs/grading/slurm/submit.sh N COURSE SUBMISSIONS_FOLDER OUT [SBATCH OPTIONS...]
#
# Example: submit.sh 8 ~/cudalings ~/hw1/submissions ~/hw1/results --partition=gpu
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,7p' "$0" >&2
  exit 2
fi
n=$1 course=$2 submissions=$3 out=$4
shift 4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
array=$(sbatch --parsable --array=1-"$n" "$@" "$here/grade-shard.sbatch" "$course" "$submissions" "$out")
merge=$(sbatch --parsable --dependency=afterany:"$array" "$here/merge.sbatch" "$course" "$out")
echo "grading: array job $array ($n shards), merge job $merge; the class's results: $out/class"
