package wasm

// memoryPages is the largest memory of the idle instances.
func (m *Module) memoryPages() uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pages uint32
	for _, pool := range m.idle {
		for _, inst := range pool {
			pages = max(pages, inst.mod.Memory().Size()/65536)
		}
	}
	return pages
}

// idleCount is the number of idle instances.
func (m *Module) idleCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, pool := range m.idle {
		n += len(pool)
	}
	return n
}
