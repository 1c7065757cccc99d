package driver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"golang.org/x/sys/unix"
)

func TestProbe_ioctl(t *testing.T) {
	fifoRoot := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fifoRoot, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifoRoot, "dev/nvidiactl"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		root    string
		outcome Outcome
		detail  []string
	}{
		{name: "no device node", root: filetree.New(t, nil), outcome: OutcomeUnavailable, detail: []string{"no /dev/nvidiactl"}},
		// A fake root's nvidiactl is a file: the ioctl answers ENOTTY, a clean failure.
		{name: "regular file", root: filetree.New(t, map[string]string{"/dev/nvidiactl": ""}), outcome: OutcomeFailed,
			detail: []string{"does not answer the NVIDIA ioctls", "inappropriate ioctl for device", "regular file"}},
		// A character device that is not NVIDIA's.
		{name: "other char device", root: filetree.New(t, map[string]string{"/dev/nvidiactl": "-> /dev/null"}), outcome: OutcomeFailed,
			detail: []string{"inappropriate ioctl for device"}},
		{name: "fifo is not opened", root: fifoRoot, outcome: OutcomeFailed, detail: []string{"is not a character device"}},
		{name: "directory", root: filetree.New(t, map[string]string{"/dev/nvidiactl": "dir"}), outcome: OutcomeFailed, detail: []string{"is not a character device"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := probe(t, tc.root, []string{methodIoctl}, nil)
			wantOutcome(t, r, methodIoctl, tc.outcome, tc.detail...)
			if r.DriverVersion != "" || len(r.GPUs) != 0 {
				t.Fatalf("a failed ioctl produced facts: %+v", r)
			}
		})
	}
}

// fakeDriver plays the control device for queryVersion and queryCardInfo: it knows gpus GPUs and,
// like nvidia_read_card_info, refuses with EINVAL a buffer too small for all of them.
func fakeDriver(t *testing.T, version string, gpus int, calls *[]int) ioctlFunc {
	return func(req uintptr, arg unsafe.Pointer) unix.Errno {
		size := int(req>>16) & (1<<iocSizeBits(runtime.GOARCH) - 1)
		*calls = append(*calls, size)
		switch byte(req) {
		case nvEscCheckVersionStr:
			v := (*rmAPIVersion)(arg)
			if size != 72 || v.Cmd != rmAPIVersionCmdQuery {
				t.Errorf("version ioctl size %d cmd %d", size, v.Cmd)
			}
			v.Reply = rmAPIVersionReplyRecognized
			copy(v.VersionString[:], version)
			return 0
		case nvEscCardInfo:
			if size/cardInfoSize < gpus {
				return unix.EINVAL
			}
			buf := unsafe.Slice((*byte)(arg), size)
			for i := 0; i < gpus; i++ {
				e := buf[i*cardInfoSize:]
				e[0] = 1                                      // valid
				e[8] = byte(i)                                // bus
				binary.NativeEndian.PutUint16(e[12:], 0x10de) // vendor
				binary.NativeEndian.PutUint16(e[14:], 0x2330) // device
			}
			return 0
		}
		return unix.ENOTTY
	}
}

func Test_queryCardInfo(t *testing.T) {
	tests := []struct {
		name  string
		gpus  int
		sizes []int // buffer sizes tried, in entries
		err   bool
	}{
		{name: "two GPUs", gpus: 2, sizes: []int{32}},
		{name: "forty GPUs need a second try", gpus: 40, sizes: []int{32, 64}},
		{name: "two hundred", gpus: 200, sizes: []int{32, 64, 128, 227}},
		{name: "more than the ioctl can describe", gpus: 300, sizes: []int{32, 64, 128, 227}, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []int
			gpus, err := queryCardInfo(fakeDriver(t, "", tc.gpus, &calls))
			var tried []int
			for _, c := range calls {
				tried = append(tried, c/cardInfoSize)
			}
			if fmt.Sprint(tried) != fmt.Sprint(tc.sizes) {
				t.Errorf("tried %v entries, want %v", tried, tc.sizes)
			}
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "room for 227 GPUs: invalid argument") {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err != nil || len(gpus) != tc.gpus || gpus[1].busID != "0000:01:00.0" || gpus[1].deviceID != "0x2330" {
				t.Fatalf("%d GPUs, %v: %+v", len(gpus), err, gpus[:min(2, len(gpus))])
			}
		})
	}
}

func Test_queryVersion(t *testing.T) {
	var calls []int
	if v, err := queryVersion(fakeDriver(t, "580.65.06", 0, &calls)); v != "580.65.06" || err != nil {
		t.Fatalf("%q, %v", v, err)
	}
	if _, err := queryVersion(fakeDriver(t, "", 0, &calls)); !errors.Is(err, errEmptyVersionReply) {
		t.Fatalf("pre-530 answer: %v", err)
	}
	enotty := func(uintptr, unsafe.Pointer) unix.Errno { return unix.ENOTTY }
	if _, err := queryVersion(enotty); !errors.Is(err, unix.ENOTTY) {
		t.Fatalf("ENOTTY: %v", err)
	}
}
