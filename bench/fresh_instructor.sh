#!/usr/bin/env bash
# The instructor guide's section 1 ("From a fresh machine to a graded class") on a fresh Debian 12
# machine, as written: each command printed with its exit code, its wall and CPU time and the
# lines an instructor reads.
#
#   sudo bench/fresh_instructor.sh
#
# Makes a Debian 12 root with debootstrap (minbase), installs in it, with apt, exactly the
# packages of the guide's Debian 12 "Install" line, binds this machine's CUDA toolkit into it
# read-only (the guide's "plus the CUDA toolkit"), clones the course's committed HEAD to
# ~/cudalings there, and runs the guide's commands: the build, the sandbox check (an empty folder
# graded), `grade new-secret`, then `grade` of three pretend students (made from the course's own
# files, one per layout of the guide) with CUDALINGS_SEED_FILE and `--format csv,junit`.
#
# The root is entered as a machine of its own (its own mount namespace, pivot_root, not chroot:
# the kernel refuses a new user namespace, which bwrap makes, to a chrooted process); every mount
# ends with this script. Times are bash's `time` (children's CPU included): /usr/bin/time is the
# `time` package, which the guide does not install. Without a GPU here, the checker emulates.
# Needs root and Debian's archive; the root lives in ${FRESH_ROOT:-/var/tmp/cudalings-fresh-instructor}
# (FRESH_NEW=1 makes it again from nothing).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd -P)"
. "$here/bench/fresh_root.sh"
root="${FRESH_ROOT:-/var/tmp/cudalings-fresh-instructor}"
cuda="$(readlink -f "${CUDA_HOME:-/usr/local/cuda}")"
# The guide's commands, word for word, from its section 1 (docs/instructor-guide.md).
section1="$(sed -n '/^## 1\./,/^## 2\./p' "$here/docs/instructor-guide.md")"
guide_packages="$(grep -m1 '^apt install ' <<<"$section1" | sed 's/^apt install //')"
mapfile -t build_cmds < <(sed -n '/^git clone <your copy/,/^```/p' <<<"$section1" | sed '1d;$d')
sandbox_cmd="$(grep -m1 '^mkdir -p /tmp/nobody' <<<"$section1")"
secret_cmd="$(grep -m1 '^cudalings grade new-secret' <<<"$section1" | sed 's/ *#.*//')"
seed_cmd="$(grep -m1 '^export CUDALINGS_SEED_FILE=' <<<"$section1")"
grade_cmd="$(grep -m1 '^cudalings --root .* grade submissions' <<<"$section1")"

[ "$(id -u)" = 0 ] || { echo "$0: needs root (debootstrap, mount, pivot_root)" >&2; exit 2; }
[ -x "$cuda/bin/nvcc" ] || { echo "$0: no CUDA toolkit at $cuda (set CUDA_HOME)" >&2; exit 2; }
for c in guide_packages build_cmds sandbox_cmd secret_cmd seed_cmd grade_cmd; do
  [ -n "${!c}" ] || { echo "$0: the guide's section 1 has no command for $c" >&2; exit 2; }
done
if [ -z "${FRESH_INSTRUCTOR_NS:-}" ]; then  # a mount namespace of our own: no mount outlives us
  exec unshare --mount --propagation private -- env FRESH_INSTRUCTOR_NS=1 "$0" "$@"
fi

[ "${FRESH_NEW:-0}" = 1 ] && rm -rf "$root"
if [ ! -e "$root/usr/bin/apt-get" ]; then made="made now"
elif [ ! -e "$root/usr/bin/g++" ]; then made="made earlier, none of the guide's packages in it yet"
else made="reused: the guide's packages were installed by an earlier run; FRESH_NEW=1 for a new one"
fi
fresh_root_make "$root" usr/bin/apt-get || exit 1
trap 'fresh_root_cleanup "$root"; umount "$root/sys/fs/cgroup" "$root/sys" "$root" 2>/dev/null || true' EXIT
mount --bind "$root" "$root"                  # a mount point, for pivot_root
fresh_root_mount "$root" "$cuda"
mount -t sysfs sysfs "$root/sys"              # as on a machine: /sys and the cgroups (memory limits)
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup" 2>/dev/null || true

# run bash -c "$1" as root on the fresh machine: nothing of this one is left in it
on_fresh() {
  unshare --mount --propagation private --fork -- /bin/bash -c '
    cd "$1" && mkdir -p .host && pivot_root . .host && cd / && umount -l /.host && rmdir /.host &&
    exec env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      bash -c "$2"' on_fresh "$root" "$1"
}

echo "== fresh Debian 12 root (debootstrap minbase, $made): $root; this machine: $(nproc) cores," \
  "$(command -v nvidia-smi >/dev/null && nvidia-smi -L | head -1 || echo 'no GPU: the checker emulates')"
echo "== install: apt install $guide_packages   (with apt update first and -y: a debootstrap root has no package lists, and no one answers apt's question)"
on_fresh "export DEBIAN_FRONTEND=noninteractive
  TIMEFORMAT='   %R s wall, %U s user + %S s sys'
  time { apt-get update -q >/tmp/apt.log 2>&1 && apt install -y -q $guide_packages >>/tmp/apt.log 2>&1; echo \"   exit \$?\"; }
  tail -1 /tmp/apt.log | sed 's/^/   /'"

rm -rf "$root/root/cudalings" "$root/root/submissions" "$root/root/results" "$root/root/cudalings-secret" \
  "$root/tmp/nobody" "$root/tmp/try"
git clone -q "$here" "$root/root/cudalings"
echo "== git clone <the course's committed HEAD> ~/cudalings  (done from outside the root: the course is this machine's repository)"
echo "== course $(git -C "$root/root/cudalings" log --oneline -1 | cut -c1-80)"

on_fresh "$(declare -p build_cmds sandbox_cmd secret_cmd seed_cmd grade_cmd)"'
cd ~/cudalings
echo "== $(cmake --version | head -1); $(g++ --version | head -1); $(/usr/local/cuda/bin/nvcc --version | tail -2 | head -1); bwrap $(bwrap --version | cut -d" " -f2); $(nproc) cores; $(date -u +%F)"
TIMEFORMAT="%R s wall, %U s user + %S s sys"
n=0
# step TITLE COMMAND: print it, run it, its exit code and times; its output is in /tmp/step$n.log
step() {
  n=$((n + 1)); echo; echo "\$ $1"
  local t; t=$( { time bash -c "$1" >/tmp/step$n.log 2>&1; echo "exit $?" >/tmp/step$n.rc; } 2>&1 )
  echo "   $(cat /tmp/step$n.rc), $t"
}
say() { sed "s/^/   | /" /tmp/step$n.log | grep -E "$1" | head -"${2:-20}" || true; }

# The guide says "plus the CUDA toolkit"; NVIDIA'"'"'s installs it at /usr/local/cuda, with nvcc on PATH.
export PATH=/usr/local/cuda/bin:$PATH
for c in "${build_cmds[@]}"; do
  step "$c"
  say "rror|arning:|Built target cudalings($|-tools|-runner)" 25
  [ "$(cat /tmp/step$n.rc)" = "exit 0" ] || { tail -30 /tmp/step$n.log; exit 1; }
done

echo; echo "(the guide: \"Below, cudalings means build/cudalings\": PATH=~/cudalings/build:\$PATH)"
export PATH=~/cudalings/build:$PATH
step "$sandbox_cmd"
say "." 12
step "$secret_cmd"
say "." 5
echo "   $(stat -c "%A %U %s bytes" ~/cudalings-secret 2>/dev/null)"

echo; echo "== three pretend students, one per layout of the guide, from the course'"'"'s own files (not a guide command):"
mkdir -p ~/submissions/alice/lessons/01_vector_add ~/submissions/bob/01_vector_add ~/submissions/carol
s=~/cudalings/solutions/01_vector_add l=~/cudalings/lessons/01_vector_add
cp $s/*.cu ~/submissions/alice/lessons/01_vector_add/
cp $s/01_one_thread_per_element.cu $s/02_grid_stride_loop.cu ~/submissions/bob/01_vector_add/
cp $l/03_float4.cu ~/submissions/bob/01_vector_add/
sed "0,/vector_add_kernel(/s//vector_add_kernel(int oops, /" $s/01_one_thread_per_element.cu \
  >~/submissions/carol/01_one_thread_per_element.cu
cp $l/02_grid_stride_loop.cu ~/submissions/carol/
echo "   alice: a copy of the course, lesson 01 solved (3 steps)"
echo "   bob:   lesson folders, steps 1 and 2 solved, step 3 the skeleton as given"
echo "   carol: loose step files, step 1 solved but with a wrong kernel signature, step 2 the skeleton"
cd ~ && (cd submissions && find . -type f | sort | sed "s/^/   /")

cd ~
echo; echo "\$ $seed_cmd"
eval "$seed_cmd"
step "$grade_cmd"
say "^   \\| \\[|mulat|GPU|sandbox|rror" 20
echo "   results/: $(cd results 2>/dev/null && find . -type f | sed s,^./,, | sort | tr "\n" " ")"
echo "   grades.csv:"; sed "s/^/   | /" results/grades.csv 2>/dev/null | cut -c1-160 | head -8
'
