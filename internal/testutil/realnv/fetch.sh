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

# suite: the packages taken from it, all in non-free (main, the biggest list, is not read). trixie
# carries CUDA 12.4 and the 550 driver; bookworm the 535 driver and CUDA 11.8 (libcudart.so.11.0 and
# its 11.8 nvvm, a toolkit no descriptor's canary matches).
trixie="libcudart12 libcublas12 libcublaslt12 libnvrtc12 libnvrtc-builtins12.4 libnvjitlink12 libnvvm4
  libcupti12 libcurand10 libnvtoolsext1 libnvjpeg12 libnccl2 libcuda1 libnvidia-ml1 nvidia-smi
  nvidia-cuda-toolkit"
bookworm="libcudart11.0 libnvvm4 libcuda1 libnvidia-ml1 nvidia-smi"

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] && signed="[signed-by=$keyring]" || signed="[trusted=yes]"
cat >"$dir/apt/sources.list" <<SOURCES
deb $signed $mirror trixie contrib non-free
deb $signed $mirror bookworm contrib non-free
SOURCES
apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
  -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::State::Status=/dev/null" -o "Dir::Cache=$dir/apt/cache"
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root -o APT::Architecture=amd64 -o Acquire::Retries=3
  -o Acquire::Languages=none -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
  -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
  -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
  -o Acquire::IndexTargets::deb::CNF::DefaultEnabled=false)   # only the package lists are needed

if ! apt-get "${apt_opts[@]}" -qq update >"$dir/apt/update.log" 2>&1; then
  echo "realnv: cannot read Debian's archive at $mirror (see $dir/apt/update.log)" >&2
  exit 3
fi

# One apt-cache call answers every version (each call re-reads the lists, about a second).
declare -A version
while read -r pkg ver suite; do # madison: "pkg | version | mirror suite/component arch Packages"
  [ -n "${version[$suite/$pkg]:-}" ] || version[$suite/$pkg]=$ver
done < <(apt-cache "${apt_opts[@]}" madison $(printf '%s\n' $trixie $bookworm | sort -u) |
  awk -F' *[|] *' '{ split($3, w, " "); split(w[2], s, "/"); gsub(/ /, "", $1); print $1, $2, s[1] }')

wanted=() missing=()
for p in $trixie; do wanted+=("trixie/$p"); done
for p in $bookworm; do wanted+=("bookworm/$p"); done
for sp in "${wanted[@]}"; do
  if [ -z "${version[$sp]:-}" ]; then echo "realnv: ${sp#*/} is not in ${sp%%/*}" >&2; exit 1; fi
  [ "$(cat "$dir/$sp/.version" 2>/dev/null)" = "${version[$sp]}" ] || missing+=("$sp")
done

for sp in ${missing[@]+"${missing[@]}"}; do
  suite=${sp%%/*} pkg=${sp#*/}
  rm -rf "${dir:?}/$sp" "$dir/debs/$suite-$pkg"
  mkdir -p "$dir/debs/$suite-$pkg" "$dir/$sp"
  (cd "$dir/debs/$suite-$pkg" && apt-get "${apt_opts[@]}" -qq download "$pkg/$suite" >/dev/null)
  dpkg-deb -x "$dir/debs/$suite-$pkg"/*.deb "$dir/$sp"
  rm -rf "$dir/debs/$suite-$pkg"
  echo "${version[$sp]}" >"$dir/$sp/.version"
  echo "realnv: $suite $pkg ${version[$sp]}"
done

manifest="$dir/manifest.tsv.new"
: >"$manifest"
for sp in "${wanted[@]}"; do
  printf '%s\t%s\t%s\t%s\n' "${sp%%/*}" "${sp#*/}" "${version[$sp]}" "$dir/$sp" >>"$manifest"
done
mv "$manifest" "$dir/manifest.tsv"
echo "realnv: ${#wanted[@]} packages under $dir (${#missing[@]} fetched now)"
