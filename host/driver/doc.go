// Package driver tells, without cgo, what NVIDIA driver a machine runs, the highest CUDA toolkit that
// driver supports and each GPU with its compute capability, and says how it knows each fact. Probe
// tries device files, ioctls, NVML, libcuda (in a child process) and nvidia-smi in turn and merges
// their answers, so it also works in containers, on WSL2 and where NVML or nvidia-smi is missing.
package driver
