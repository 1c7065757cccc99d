package config

import "fmt"

// Error is a configuration that cannot be used: the file, and the position of the key at fault.
// host gives it to its callers as host.ConfigError, whose fields these are and which says what each
// holds.
type Error struct {
	File      string
	Line, Col int
	Key       string
	Err       error
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
// its callers as host.PluginError, whose fields these are and which says what each holds.
type PluginError struct {
	Plugin string
	Op     string
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
