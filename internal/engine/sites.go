// Site-packages discovery: an Engine's one answer to where the venv, conda and python site dirs are.

package engine

import (
	"sync"
	"sync/atomic"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/resultcache"
	"github.com/pathfinder-dev/pathfinder/internal/sitepackages"
)

// siteDiscovery is an Engine's one discovery of the site-packages directories, which every search
// it runs uses.
type siteDiscovery struct {
	once  sync.Once
	done  atomic.Bool           // a search, or a listing, used discovery
	sites []sitepackages.Site   // searched or left out, with why
	dirs  []string              // the sites searched, in order
	seen  []observe.Observation // what discovery looked at
	hash  string                // of seen: how result-cache entries name what discovery saw
}

// discovery runs site-packages discovery once.
func (f *Engine) discovery() *siteDiscovery {
	s := &f.sites
	s.once.Do(func() {
		own := &observe.Recorder{}
		s.sites = sitepackages.Host.Discover(f.cfg.SitePackages, own.Getenv(f.getenv), own)
		s.dirs = sitepackages.Searched(s.sites)
		s.seen = own.List()
		s.hash = resultcache.HashObservations(s.seen)
	})
	return s
}

// sitePackages is the site-packages directories for the wheels step, in search order; what
// discovery looked at is added to rec: a new venv is a new answer.
func (f *Engine) sitePackages(rec *observe.Recorder) []string { return f.usedDiscovery(rec).dirs }

// usedDiscovery is the Engine's discovery, with what it looked at added to rec.
func (f *Engine) usedDiscovery(rec *observe.Recorder) *siteDiscovery {
	d := f.discovery()
	d.done.Store(true)
	rec.AddAll(d.seen)
	return d
}
