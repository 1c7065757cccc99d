//go:build !linux

package driver

func probeIoctl(p *prober) methodResult {
	return unavailable("the NVIDIA control-device ioctls are implemented for Linux only")
}
