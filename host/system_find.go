package host

import "github.com/pathfinder-dev/pathfinder/abi"

// systemModel answers the system step for find: where dlopen would find each soname.
func (r *run) systemModel(st *StepTrace, names []string) *LoadedLibrary {
	st.Outcome, st.Detail = "skipped", "the loader model is not wired yet"
	_ = abi.Attempt{}
	return nil
}
