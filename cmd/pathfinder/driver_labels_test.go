package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

// TestLabelLoop runs the --interval loop on a clock the test holds, never sleeping: the labels are
// written at once, again only when they change or when the refresh is due (each time with an expiry
// four intervals on), and SIGTERM ends the loop cleanly.
func TestLabelLoop(t *testing.T) {
	t.Parallel()
	const interval = time.Minute
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	reports, ticks, stop := make(chan *driver.Report), make(chan time.Time), make(chan os.Signal, 1)
	node := func(version string) *driver.Report {
		return &driver.Report{State: driver.StateNoDevices, Setup: driver.SetupContainerNoGPU, DriverVersion: version}
	}
	type write struct {
		expires time.Time
		version string
	}
	var writes []write
	changes := 0
	loop := labelLoop{
		probe: func() *driver.Report { return <-reports },
		publish: func(l driver.NodeLabels, expires time.Time) error {
			writes = append(writes, write{expires, l.Labels["nvidia.com/cuda.driver-version.full"]})
			return nil
		},
		changed: func(*driver.Report, driver.NodeLabels) { changes++ },
		expiry:  expiryIntervals * interval, refresh: refreshIntervals * interval,
		now: func() time.Time { return start }, ticks: ticks, stop: stop,
	}
	done := make(chan error)
	go func() { done <- loop.run(context.Background()) }()
	// The loop takes a tick only once it has finished the round before, and each round's probe
	// waits for the node the test gives it: the rounds run in the test's order, on its clock.
	at := start
	round := func(d time.Duration, r *driver.Report) {
		if d > 0 {
			at = at.Add(d)
			ticks <- at
		}
		reports <- r
	}
	round(0, node("550.144.03"))              // written at once
	round(interval, node("550.144.03"))       // unchanged, one interval on: nothing written
	round(30*time.Second, node("550.163.01")) // a driver upgrade and reboot: written at once
	round(interval, node("550.163.01"))       // unchanged
	round(interval, node("550.163.01"))       // unchanged, two intervals since the last write: written again
	round(interval, node("550.163.01"))
	stop <- syscall.SIGTERM
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	want := []write{
		{start.Add(4 * interval), "550.144.03"},
		{start.Add(90*time.Second + 4*interval), "550.163.01"},
		{start.Add(210*time.Second + 4*interval), "550.163.01"},
	}
	if len(writes) != len(want) || changes != 2 {
		t.Fatalf("writes %v, %d changes; want %v, 2", writes, changes, want)
	}
	for i := range want {
		if writes[i] != want[i] {
			t.Errorf("write %d: %+v, want %+v", i, writes[i], want[i])
		}
	}
}

// TestLabelLoop_nodeFeature: objects, which do not expire, are written only when the labels change,
// each YAML object a document of its own; a failed write ends the loop with its error.
func TestLabelLoop_nodeFeature(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	out := labelOutput{format: "nodefeature", node: "n", stream: true}
	ticks, stop := make(chan time.Time), make(chan os.Signal, 1)
	now := time.Now()
	fail := false // set only while no loop runs
	loop := labelLoop{
		probe: func() *driver.Report { return &driver.Report{State: driver.StateWSL2, Setup: driver.SetupWSL2} },
		publish: func(l driver.NodeLabels, expires time.Time) error {
			if fail {
				return os.ErrPermission
			}
			if !expires.IsZero() {
				t.Errorf("an object with an expiry %v", expires)
			}
			return out.publish(&b, l, expires)
		},
		changed: func(*driver.Report, driver.NodeLabels) {},
		now:     func() time.Time { return now }, ticks: ticks, stop: stop,
	}
	done := make(chan error)
	go func() { done <- loop.run(context.Background()) }()
	for i := range 5 {
		ticks <- now.Add(time.Duration(i+1) * time.Hour)
	}
	stop <- os.Interrupt
	if err := <-done; err != nil || strings.Count(b.String(), "---\nkind") != 0 || strings.Count(b.String(), "---\napiVersion: nfd.k8s-sigs.io/v1alpha1\n") != 1 {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	fail = true
	loop.probe = func() *driver.Report { return &driver.Report{State: driver.StateTegra, Setup: driver.SetupTegra} }
	go func() { done <- loop.run(context.Background()) }()
	if err := <-done; err != os.ErrPermission {
		t.Fatalf("a failed write: %v", err)
	}
}
