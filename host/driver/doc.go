// Package driver tells, without cgo, what state a machine's NVIDIA driver is in (working, not
// installed, installed but not loaded, a kernel/user-space mismatch, …) with both versions, the
// highest CUDA toolkit the driver supports, whether it runs CUDA 11, 12 and 13 (Report.Runs, and
// the wheel-variant provider's configs), and each GPU with its compute capability, and says how it
// knows each fact. Probe reads device files, kernel files, ioctls and the driver's libraries as the
// loader would find them, and runs NVML, libcuda (in a child process) and nvidia-smi only where the
// kernel driver and its device nodes are already in place: it never changes the machine.
package driver
