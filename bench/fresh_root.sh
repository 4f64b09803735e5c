# A fresh Debian 12 root for the bench/fresh_*.sh scripts (sourced, not run): made with
# debootstrap (minbase), this machine's CUDA toolkit bound into it read-only, /proc and /dev.
# Needs root and Debian's archive.
#
#   fresh_root_make ROOT MARKER [PACKAGES]  debootstrap bookworm into ROOT unless ROOT/MARKER is
#                                           there; PACKAGES (comma-separated) go to --include
#   fresh_root_mount ROOT CUDA              bind CUDA at ROOT/usr/local/cuda (read-only), mount
#                                           /proc and /dev; fresh_root_cleanup undoes it (the
#                                           caller sets the trap)

fresh_root_make() {
  local root="$1" marker="$2" include="${3:-}"
  [ -e "$root/$marker" ] && return 0
  debootstrap --variant=minbase ${include:+--include="$include"} \
    bookworm "$root" http://deb.debian.org/debian >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log"; return 1; }
}

fresh_root_mount() {
  local root="$1" cuda="$2"
  mkdir -p "$root/usr/local/cuda"
  mount --bind "$cuda" "$root/usr/local/cuda" && mount -o remount,bind,ro "$root/usr/local/cuda"
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
}

fresh_root_cleanup() {
  local root="$1"
  umount "$root/usr/local/cuda" "$root/proc" "$root/dev" 2>/dev/null || true
}
