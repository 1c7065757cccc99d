#!/usr/bin/env bash
# fetch.sh [DIR]: download NVIDIA's own CUDA and driver libraries from Debian's archive and unpack them
# (never install them) under DIR, default ${PATHFINDER_REALNV_DIR:-$HOME/.cache/pathfinder-realnv}.
#
# apt runs with a private state under DIR/apt: the machine's sources, lists and pins are left as they
# were, nothing is installed, and the only thing written outside DIR is nothing. Each package lands
# in DIR/<suite>/<package>/ as dpkg-deb -x unpacks it; DIR/manifest.tsv lists suite, package, version
# and directory. A package already unpacked at the archive's current version is not fetched again.
# Exit status 3 means the archive could not be reached (the suite that needs it says skipped and why).
set -euo pipefail
dir=${1:-${PATHFINDER_REALNV_DIR:-$HOME/.cache/pathfinder-realnv}}
mirror=${PATHFINDER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs"
dir=$(cd "$dir" && pwd)

# suite: the packages taken from it. trixie carries CUDA 12.4 and the 550 driver; bookworm the 535
# driver and CUDA 11.8 (for the 11.8 nvvm behind an 11.8 cudart).
trixie="libcudart12 libcublas12 libcublaslt12 libnvrtc12 libnvrtc-builtins12.4 libnvjitlink12 libnvvm4
  libcupti12 libcurand10 libnvtoolsext1 libnvjpeg12 libnccl2 libcuda1 libnvidia-ml1 nvidia-smi"
bookworm="libcudart11.0 libnvvm4 libcuda1 libnvidia-ml1 nvidia-smi"

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] && signed="[signed-by=$keyring]" || signed="[trusted=yes]"
cat >"$dir/apt/sources.list" <<SOURCES
deb $signed $mirror trixie main contrib non-free
deb $signed $mirror bookworm main contrib non-free
SOURCES
apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::State::Status=/dev/null" -o "Dir::Cache=$dir/apt/cache"
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root -o APT::Architecture=amd64 -o Acquire::Retries=3)

if ! apt-get "${apt_opts[@]}" -qq update >"$dir/apt/update.log" 2>&1; then
  echo "realnv: cannot read Debian's archive at $mirror (see $dir/apt/update.log)" >&2
  exit 3
fi

manifest="$dir/manifest.tsv.new"
: >"$manifest"
fetch() { # suite package
  local suite=$1 pkg=$2 ver out
  ver=$(apt-cache "${apt_opts[@]}" show "$pkg/$suite" 2>/dev/null | awk '/^Version:/{print $2; exit}')
  if [ -z "$ver" ]; then echo "realnv: $pkg is not in $suite" >&2; return 1; fi
  out="$dir/$suite/$pkg"
  if [ "$(cat "$out/.version" 2>/dev/null)" != "$ver" ]; then
    rm -rf "$out" "$dir/debs/$suite-$pkg"
    mkdir -p "$dir/debs/$suite-$pkg" "$out"
    (cd "$dir/debs/$suite-$pkg" && apt-get "${apt_opts[@]}" -qq download "$pkg/$suite" >/dev/null)
    dpkg-deb -x "$dir/debs/$suite-$pkg"/*.deb "$out"
    rm -rf "$dir/debs/$suite-$pkg"
    echo "$ver" >"$out/.version"
    echo "realnv: $suite $pkg $ver"
  fi
  printf '%s\t%s\t%s\t%s\n' "$suite" "$pkg" "$ver" "$out" >>"$manifest"
}
for p in $trixie; do fetch trixie "$p"; done
for p in $bookworm; do fetch bookworm "$p"; done
mv "$manifest" "$dir/manifest.tsv"
echo "realnv: $(wc -l <"$dir/manifest.tsv") packages under $dir"
