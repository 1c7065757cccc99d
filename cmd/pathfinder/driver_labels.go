package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

// A feature file written by driver --interval expires four intervals after it is written, so a dead
// labeller's labels go, and is written again, unchanged, two intervals after, so a live one's stay.
const (
	expiryIntervals  = 4
	refreshIntervals = 2
)

// labelOutput is where driver --format nfd or nodefeature says the node's labels.
type labelOutput struct {
	format string // "nfd" or "nodefeature"; the other formats say no labels
	dir    string // nfd: --output DIR, where the feature file goes; "" prints it
	node   string // nodefeature: the node's name
	json   bool   // nodefeature: as JSON
	stream bool   // nodefeature in a loop: each YAML object a document of its own
}

func (o labelOutput) labels() bool { return o.format == "nfd" || o.format == "nodefeature" }

// check says what is wrong with the flags that go with the labels; the node's name comes from
// $NODE_NAME where --node does not give it.
func (o *labelOutput) check(interval time.Duration, oneshot bool, getenv func(string) string) error {
	switch {
	case o.dir != "" && o.format != "nfd":
		return errors.New("--output is for --format nfd")
	case (interval != 0 || oneshot) && !o.labels():
		return errors.New("--interval and --oneshot are for --format nfd and nodefeature")
	case interval != 0 && oneshot:
		return errors.New("--oneshot and --interval exclude each other: --oneshot writes the labels once, --interval every DURATION")
	case interval < 0:
		return fmt.Errorf("--interval %v: not a positive duration", interval)
	case interval > 0 && o.format == "nfd" && o.dir == "":
		return errors.New("--interval with --format nfd needs --output DIR, the feature file it keeps current")
	case o.node != "" && o.format != "nodefeature":
		return errors.New("--node is for --format nodefeature")
	}
	if o.format != "nodefeature" {
		return nil
	}
	if o.node == "" {
		o.node = getenv("NODE_NAME")
	}
	if o.node == "" {
		return errors.New("--format nodefeature needs the node's name: --node NAME, or $NODE_NAME")
	}
	if _, err := (driver.NodeLabels{}).NodeFeature(o.node); err != nil {
		return fmt.Errorf("--node: %v", err)
	}
	return nil
}

// publish writes the labels once: the feature file, with its expiry when expires is set, or the
// NodeFeature object.
func (o labelOutput) publish(w io.Writer, l driver.NodeLabels, expires time.Time) error {
	if o.format == "nodefeature" {
		obj, err := l.NodeFeature(o.node)
		switch {
		case err != nil:
			return err
		case o.json:
			return writeJSONDocument(w, obj)
		case o.stream:
			io.WriteString(w, "---\n")
		}
		return obj.WriteYAML(w)
	}
	data, err := l.FeatureFile(expires)
	switch {
	case err != nil:
		return err
	case o.dir != "":
		return driver.WriteFeatureFile(o.dir, data)
	}
	_, err = w.Write(data)
	return err
}

// where names what publish writes, for the messages.
func (o labelOutput) where() string {
	switch {
	case o.format == "nodefeature":
		return "the NodeFeature"
	case o.dir != "":
		return "the feature file in " + o.dir
	}
	return "standard output"
}

// label writes the node's labels once, or with interval > 0 every interval until SIGTERM or SIGINT.
func (c *cli) label(ctx context.Context, out labelOutput, opts driver.Options, interval time.Duration) int {
	probe := func() *driver.Report { return driver.Probe(ctx, opts) }
	if interval == 0 {
		r := probe()
		l := r.NodeLabels()
		if err := out.publish(c.stdout, l, time.Time{}); err != nil {
			c.fail(err)
			return exitUsage
		}
		c.sayLabels(out, r, l)
		if r.NodeUsable() {
			return exitOK
		}
		return exitNotFound
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(stop)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	out.stream = true
	loop := labelLoop{probe: probe, now: time.Now, ticks: ticker.C, stop: stop,
		publish: func(l driver.NodeLabels, expires time.Time) error { return out.publish(c.stdout, l, expires) },
		changed: func(r *driver.Report, l driver.NodeLabels) {
			c.sayLabels(out, r, l)
			c.errorf("wrote %s: %d labels, driver state %s", out.where(), len(l.Labels), r.State)
		},
	}
	if out.format == "nfd" {
		loop.expiry, loop.refresh = expiryIntervals*interval, refreshIntervals*interval
	}
	if err := loop.run(ctx); err != nil {
		c.fail(err)
		return exitUsage
	}
	return exitOK
}

// sayLabels tells on stderr each label left out and why, and why a node whose driver is not
// usable has no labels or only its state.
func (c *cli) sayLabels(out labelOutput, r *driver.Report, l driver.NodeLabels) {
	for _, o := range l.Omitted {
		c.errorf("not labelled: %s", o)
	}
	switch {
	case r.NodeUsable():
	case len(l.Labels) == 0:
		c.errorf("no NVIDIA kernel driver (%s: %s): %s has no labels", r.State, r.Summary, out.where())
	default:
		c.errorf("the NVIDIA driver does not work (%s: %s): %s has only its state", r.State, r.Summary, out.where())
	}
}

// labelLoop keeps the labels current: it probes at once and at each tick, and publishes when the
// labels changed and, where they expire, again once refresh has passed since the last write. Its
// clock (now for the start, then the ticks' times) and its stop signal are fields, so a test holds them.
type labelLoop struct {
	probe           func() *driver.Report
	publish         func(l driver.NodeLabels, expires time.Time) error
	changed         func(r *driver.Report, l driver.NodeLabels) // after a write of new labels
	expiry, refresh time.Duration                               // 0: the labels do not expire
	now             func() time.Time
	ticks           <-chan time.Time
	stop            <-chan os.Signal
}

func (l *labelLoop) run(ctx context.Context) error {
	var last map[string]string
	var written time.Time
	now := l.now() // then each tick's time
	for first := true; ; first = false {
		r := l.probe()
		labels := r.NodeLabels()
		changed := first || !maps.Equal(labels.Labels, last)
		if changed || l.refresh > 0 && now.Sub(written) >= l.refresh {
			var expires time.Time
			if l.expiry > 0 {
				expires = now.Add(l.expiry)
			}
			if err := l.publish(labels, expires); err != nil {
				return err
			}
			last, written = labels.Labels, now
			if changed {
				l.changed(r, labels)
			}
		}
		select {
		case <-l.stop:
			return nil
		case <-ctx.Done():
			return nil
		case now = <-l.ticks:
		}
	}
}
