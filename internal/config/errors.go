package config

import "fmt"

// Error is a configuration that cannot be used: the file, and the position of the key at fault.
// host gives it to its callers as host.ConfigError.
type Error struct {
	File      string // the layer: a config file's absolute path, or "builtin:pathfinder.toml"; "" for none
	Line, Col int    // 1-based; 0 when the position cannot be told
	Key       string // the key at fault: "search.order", "plugin.site.sha256"; "" for a syntax error
	Err       error  // what is wrong; a *PluginError for a plugin that cannot be used
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("config %s:%d:%d: %v", e.File, e.Line, e.Col, e.Err)
	case e.File != "":
		return fmt.Sprintf("config %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("config: %v", e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// PluginError is a plugin that cannot be used, and what was being done with it. host gives it to
// its callers as host.PluginError.
type PluginError struct {
	Plugin string // the step's name
	Op     string // "config", "read", "pin", "load", "describe", "search"
	Err    error
}

func (e *PluginError) Error() string { return fmt.Sprintf("plugin %q: %v", e.Plugin, e.Err) }

func (e *PluginError) Unwrap() error { return e.Err }

// ErrorAt is err at the position where key was last set.
func (c *Config) ErrorAt(key string, err error) *Error {
	e := &Error{Key: key, Err: err}
	if s := c.origins[key]; s != nil {
		e.File, e.Line, e.Col = s.position()
	}
	return e
}

// pluginErrorAt is errorAt for a plugin's key, err a PluginError of the operation op.
func (c *Config) pluginErrorAt(p *Plugin, key, op string, err error) error {
	return c.ErrorAt("plugin."+p.Name+"."+key, &PluginError{Plugin: p.Name, Op: op, Err: fmt.Errorf("%w%s", err, c.usedInNote(p.Name))})
}
