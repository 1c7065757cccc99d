//go:build !pathfinder_static

package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// stubs caches built libraries by soname, source and defines for the whole test binary: several
// tests load the same stub, and gcc is the slow part. They live in stubDir, which TestMain removes.
var stubs struct {
	sync.Mutex
	paths map[string]string
}

// buildStub compiles C source into a shared library named soname with gcc, the way a driver's
// library is built (-shared -fPIC, DT_SONAME set), so the probe loads it for real through purego.
// Callers must not change the file it returns.
func buildStub(t testing.TB, soname, src string, defines ...string) string {
	t.Helper()
	stubs.Lock()
	defer stubs.Unlock()
	key := soname + "\x00" + src + "\x00" + strings.Join(defines, "\x00")
	if p, ok := stubs.paths[key]; ok {
		return p
	}
	if stubs.paths == nil {
		stubs.paths = map[string]string{}
	}
	out := filepath.Join(stubDir, fmt.Sprint(len(stubs.paths)), soname)
	args := []string{"-O1", "-Wall", "-Werror"}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	elfso.Build(t, out, soname, src, args...)
	stubs.paths[key] = out
	return out
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(to), 0o755)
	}
	if err == nil {
		err = os.WriteFile(to, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// nvmlStubC is a libnvidia-ml.so.1 with the entry points the probe calls. Macros choose its answers:
// DRIVER, CUDA, NAME, DEVID, CC_MAJOR/CC_MINOR, COUNT GPUs on buses BUS0, BUS1, …; INIT_RET makes
// nvmlInit_v2 fail, LOST_INDEX loses one GPU, LACK_INIT / LACK_CC leave a symbol out, HANG blocks init.
const nvmlStubC = `
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef DRIVER
#define DRIVER "550.54.14"
#endif
#ifndef CUDA
#define CUDA 12040
#endif
#ifndef NAME
#define NAME "NVIDIA H100 80GB HBM3"
#endif
#ifndef DEVID
#define DEVID 0x2330
#endif
#ifndef CC_MAJOR
#define CC_MAJOR 9
#endif
#ifndef CC_MINOR
#define CC_MINOR 0
#endif
#ifndef COUNT
#define COUNT 2
#endif
#ifndef INIT_RET
#define INIT_RET 0
#endif
#ifndef LOST_INDEX
#define LOST_INDEX -1
#endif

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

static const unsigned int buses[] = {0x18, 0x65, 0x9a, 0xb3};
static int handles[4];
static int inited;

static int index_of(nvmlDevice_t d) { return (int)((int *)d - handles); }

#ifndef LACK_INIT
int nvmlInit_v2(void) {
#ifdef HANG
	sleep(3);
#endif
	if (INIT_RET) return INIT_RET;
	inited = 1;
	return 0;
}
#endif
int nvmlShutdown(void) { inited = 0; return 0; }
int nvmlSystemGetDriverVersion(char *buf, unsigned int len) {
	if (!inited) return 1;
	snprintf(buf, len, "%s", DRIVER);
	return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = CUDA; return inited ? 0 : 1; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = COUNT; return inited ? 0 : 1; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
	if (!inited) return 1;
	if (i >= COUNT) return 2;
	if ((int)i == LOST_INDEX) return 15;
	*d = (nvmlDevice_t)&handles[i];
	return 0;
}
int nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned int len) { snprintf(buf, len, "%s", NAME); return 0; }
int nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned int len) {
	snprintf(buf, len, "GPU-%08d-1111-2222-3333-444455556666", index_of(d));
	return 0;
}
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) {
	memset(p, 0xff, sizeof *p); /* poison: every field the probe reads must be written */
	p->domain = 0;
	p->bus = buses[index_of(d)];
	p->device = 0;
	p->pciDeviceId = ((unsigned int)DEVID << 16) | 0x10de;
	p->pciSubSystemId = 0x16c110de;
	snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
	snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
	return 0;
}
#ifndef LACK_CC
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor) {
	*major = CC_MAJOR;
	*minor = CC_MINOR;
	return 0;
}
#endif
`

// cudaStubC is a libcuda.so.1: DEVICES GPUs on buses 0x18, 0x65, …; VERSION from cuDriverGetVersion;
// INIT_RET fails cuInit; an empty-but-set CUDA_VISIBLE_DEVICES fails it with CUDA_ERROR_NO_DEVICE
// as the real library does; LACK_INIT leaves cuInit out; HANG blocks it.
const cudaStubC = `
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef VERSION
#define VERSION 12080
#endif
#ifndef DEVICES
#define DEVICES 2
#endif
#ifndef INIT_RET
#define INIT_RET 0
#endif
#ifndef NAME
#define NAME "NVIDIA H100 80GB HBM3"
#endif

static const unsigned int buses[] = {0x18, 0x65, 0x9a, 0xb3};
static int inited;

#ifndef LACK_INIT
int cuInit(unsigned int flags) {
#ifdef HANG
	sleep(30);
#endif
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	if (flags != 0) return 1;
	if (v != NULL && v[0] == 0) return 100;
	if (INIT_RET) return INIT_RET;
	inited = 1;
	return 0;
}
#endif
int cuDriverGetVersion(int *v) { *v = VERSION; return 0; }
int cuDeviceGetCount(int *n) { if (!inited) return 3; *n = DEVICES; return 0; }
int cuDeviceGet(int *dev, int ordinal) { if (ordinal < 0 || ordinal >= DEVICES) return 101; *dev = ordinal; return 0; }
int cuDeviceGetName(char *buf, int len, int dev) { snprintf(buf, len, "%s", NAME); return 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) {
	if (attr == 75) { *v = 9; return 0; }
	if (attr == 76) { *v = 0; return 0; }
	return 1;
}
int cuDeviceGetPCIBusId(char *buf, int len, int dev) { snprintf(buf, len, "0000:%02x:00.0", buses[dev]); return 0; }
`

func nvmlStubForBench(b *testing.B) string { return buildStub(b, "libnvidia-ml.so.1", nvmlStubC) }
func cudaStubForBench(b *testing.B) string { return buildStub(b, "libcuda.so.1", cudaStubC) }
