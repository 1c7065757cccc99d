#!/usr/bin/env bash
# gpu-check.sh: the check for pathfinder's first run on a machine with an NVIDIA GPU (docs/driver.md).
# It builds the dynamic and the static (-tags pathfinder_static) pathfinder and scripts/gpucheck, runs
# `driver --json` with every method and with each method alone, `driver --format nfd` and `doctor`,
# NVIDIA's own `nvidia-smi -q -x` and `nvidia-smi --query-gpu=...`, loads libcuda through pathfinder's
# Go API and asks it (cuInit, cuDriverGetVersion, cuDeviceGetCount, each device's compute capability)
# through purego in a process of its own, and prints one table: each fact as pathfinder's methods
# report it beside what the driver's own tools say, then every disagreement. All in 5 minutes at most.
#
# usage: scripts/gpu-check.sh [--root DIR] [--out DIR] [--bin DIR] [--build-only | --no-build]
#   --root DIR    probe a captured machine (a fake root, as the tests use) instead of this one; the
#                 driver's tools are then whatever nvidia-smi is on PATH and libcuda.so.1 the loader finds
#   --out DIR     keep every output there (default: a new temporary directory, named at the end)
#   --bin DIR     where the binaries are built, or were built by --build-only (default: OUT/bin)
#   --build-only  build into --bin and stop: for a machine that has the GPU but no Go toolchain
#   --no-build    use the binaries in --bin as they are
# Exit status: 0 when nothing disagrees, 1 when something does, 2 when it could not run.
set -u

limit=300 # seconds, for everything
if [ -z "${GPU_CHECK_BOUNDED:-}" ]; then
	GPU_CHECK_BOUNDED=1 exec timeout --kill-after=5 "$limit" bash "$0" "$@"
fi
deadline=$((SECONDS + limit - 20)) # the table needs a moment after the last step

root=/ out= bin= build=yes
while [ $# -gt 0 ]; do
	case $1 in
	--root | --out | --bin)
		if [ $# -lt 2 ]; then
			echo "gpu-check.sh: $1 needs a directory" >&2
			exit 2
		fi
		case $1 in --root) root=$2 ;; --out) out=$2 ;; --bin) bin=$2 ;; esac
		shift 2
		;;
	--build-only) build=only && shift ;;
	--no-build) build=no && shift ;;
	-h | --help)
		sed -n '2,/^# Exit status/s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		echo "gpu-check.sh: unknown argument \"$1\" (see --help)" >&2
		exit 2
		;;
	esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
bin=${bin:-$out/bin}
mkdir -p "$bin" || exit 2
bin=$(cd "$bin" && pwd)

if [ "$build" != no ]; then
	echo "building pathfinder, pathfinder (static) and gpucheck into $bin" >&2
	(
		cd "$repo" &&
			CGO_ENABLED=0 go build -o "$bin/pathfinder" ./cmd/pathfinder &&
			CGO_ENABLED=0 go build -tags pathfinder_static -o "$bin/pathfinder-static" ./cmd/pathfinder &&
			CGO_ENABLED=0 go build -o "$bin/gpucheck" ./scripts/gpucheck
	) || {
		echo "gpu-check.sh: the build failed" >&2
		exit 2
	}
	[ "$build" = only ] && exit 0
fi
for b in pathfinder pathfinder-static gpucheck; do
	if [ ! -x "$bin/$b" ]; then
		echo "gpu-check.sh: $bin/$b is missing (build it with --build-only --bin $bin)" >&2
		exit 2
	fi
done

# run FILE SECONDS COMMAND...: the command's stdout into OUT/FILE, its stderr into OUT/FILE.err and
# its exit status into OUT/FILE.rc, never longer than SECONDS nor past the deadline.
run() {
	local file=$1 secs=$2
	shift 2
	local left=$((deadline - SECONDS))
	if [ "$left" -lt 5 ]; then
		echo "not run: the 5 minutes were spent" >"$out/$file.err"
		return
	fi
	[ "$secs" -gt "$left" ] && secs=$left
	timeout --kill-after=2 "$secs" "$@" >"$out/$file" 2>"$out/$file.err"
	local rc=$?
	echo "$rc" >"$out/$file.rc"
	[ "$rc" -eq 124 ] && echo "timed out after ${secs}s" >>"$out/$file.err"
}

# Every method of host/driver, in its order (driver.MethodNames; a test holds them equal).
methods="setup override ioctl sysfs procfs userspace pci nvml libcuda nvidia-smi"
every=${methods// /,}
rootflag=()
[ "$root" != / ] && rootflag=(--root "$root")

run driver.json 60 "$bin/pathfinder" driver --json --methods "$every" ${rootflag[@]+"${rootflag[@]}"}
run driver-static.json 60 "$bin/pathfinder-static" driver --json --methods "$every" ${rootflag[@]+"${rootflag[@]}"}
for m in ${methods#setup }; do
	run "driver-$m.json" 30 "$bin/pathfinder" driver --json --methods "$m" ${rootflag[@]+"${rootflag[@]}"}
done
run nfd.txt 60 "$bin/pathfinder" driver --format nfd ${rootflag[@]+"${rootflag[@]}"}
run doctor.txt 60 "$bin/pathfinder" doctor ${rootflag[@]+"${rootflag[@]}"}

smi=$(command -v nvidia-smi)
[ -z "$smi" ] && [ -x /usr/lib/wsl/lib/nvidia-smi ] && smi=/usr/lib/wsl/lib/nvidia-smi
if [ -n "$smi" ]; then
	run nvidia-smi-q.xml 60 "$smi" -q -x
	query=index,pci.bus_id,name,uuid,driver_version,compute_cap
	run nvidia-smi-query.csv 60 "$smi" --query-gpu=$query --format=csv,noheader
	if [ "$(cat "$out/nvidia-smi-query.csv.rc" 2>/dev/null)" != 0 ]; then # drivers before 510 lack compute_cap
		run nvidia-smi-query.csv 60 "$smi" --query-gpu=${query%,compute_cap} --format=csv,noheader
	fi
else
	echo "nvidia-smi is not on PATH" >"$out/nvidia-smi-q.xml.err"
	echo "nvidia-smi is not on PATH" >"$out/nvidia-smi-query.csv.err"
fi
CUDA_DEVICE_ORDER=PCI_BUS_ID run cuda.json 90 "$bin/gpucheck" cuda

"$bin/gpucheck" table "$out"
rc=$?
echo "outputs: $out"
exit "$rc"
