package host

// The engine's answers in this package's types.

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
	"github.com/pathfinder-dev/pathfinder/internal/report"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// each converts every element of in, keeping a nil slice nil (as JSON shows it).
func each[T, U any](in []T, convert func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = convert(v)
	}
	return out
}

func (k Kind) abi() abi.Kind { return abi.Kind(k) }

func (p Platform) abi() abi.Platform { return abi.Platform(p) }

func platformOf(p abi.Platform) Platform { return Platform(p) }

func attemptsOf(in []report.Attempt) []Attempt {
	return each(in, func(a report.Attempt) Attempt { return Attempt(a) })
}

func ignoredOf(in []report.Ignored) []IgnoredInput {
	return each(in, func(i report.Ignored) IgnoredInput {
		return IgnoredInput{Name: i.Name, Value: i.Value, Reason: i.Reason}
	})
}

func libraryOf(l *engine.Library) *Library {
	return &Library{
		Name: l.Name, Kind: Kind(l.Kind), Path: l.Path, RealPath: l.RealPath, FoundVia: l.FoundVia, Step: l.Step,
		LoadProblem: l.LoadProblem, CUDAInfo: CUDAInfo(l.CUDAInfo), PassedOver: attemptsOf(l.PassedOver),
	}
}

func loadedOf(l *engine.LoadedLibrary) *LoadedLibrary {
	if l == nil {
		return nil
	}
	return &LoadedLibrary{
		Library: *libraryOf(&l.Library), AlreadyLoaded: l.AlreadyLoaded, Handle: l.Handle,
		Dependencies: each(l.Dependencies, loadedOf),
	}
}

func compatibilityOf(c *engine.CompatibilityTrace) *CompatibilityTrace {
	if c == nil {
		return nil
	}
	return &CompatibilityTrace{Mode: Compatibility(c.Mode), Driver: c.Driver, MaxCUDA: c.MaxCUDA, Anchor: c.Anchor, Notes: c.Notes}
}

func explanationOf(ex *engine.Explanation) *Explanation {
	return &Explanation{
		Name: ex.Name, Kind: Kind(ex.Kind), Duration: ex.Duration, Compatibility: compatibilityOf(ex.Compatibility),
		Result: loadedOf(ex.Result), Err: publicError(ex.Err), attempts: attemptsOf(ex.Attempts()),
		Steps: each(ex.Steps, func(st engine.StepTrace) StepTrace {
			return StepTrace{
				Step: st.Step, Outcome: Outcome(st.Outcome), Detail: st.Detail, Duration: st.Duration,
				Tried: attemptsOf(st.Tried), Ignored: ignoredOf(st.Ignored), Log: st.Log, Candidates: each(st.Candidates, candidateOf),
			}
		}),
	}
}

func candidateOf(c engine.CandidateTrace) CandidateTrace {
	return CandidateTrace{
		Path: c.Path, FoundVia: c.FoundVia, Taken: c.Taken, Refused: c.Refused, LoadProblem: c.LoadProblem,
		Note: c.Note, CUDAInfo: CUDAInfo(c.CUDAInfo), VersionDetail: c.VersionDetail,
		Incompatible: c.Incompatible, KeptBack: c.KeptBack,
		Links: each(c.Links, func(l sandboxfs.Link) Link { return Link(l) }),
	}
}

// publicError is err with the engine's and the configuration's typed errors in this package's types.
func publicError(err error) error {
	switch e := err.(type) {
	case *engine.SearchError:
		return &SearchError{Name: e.Name, Err: e.Err, d: e}
	case *engine.MixedToolkitsError:
		return &MixedToolkitsError{Names: e.Names, Missing: e.Missing, Mixed: e.Mixed}
	case *config.Error:
		return &ConfigError{File: e.File, Line: e.Line, Col: e.Col, Key: e.Key, Err: publicError(e.Err)}
	case *config.PluginError:
		return &PluginError{Plugin: e.Plugin, Op: e.Op, Err: e.Err}
	}
	return err
}
