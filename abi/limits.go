package abi

import "time"

// What the host allows a plugin, each enforced by the host; docs/abi.md names every one, and
// TestContractDoc holds the document to these values.
const (
	MaxModuleBytes   = 32 << 20 // a module's size; a larger one is refused unread
	PageBytes        = 65536    // a wasm memory page; a plugin's memory cap is counted in them
	MaxMemoryPages   = 65536    // the most pages any cap allows (4 GiB)
	MaxResponseBytes = 16 << 20 // a response or a description; a longer one fails the call
	MaxCandidates    = 1000     // candidates in one response; more refuses the response whole
	MaxTried         = 1000     // tried entries kept; the rest are counted in one last entry
	MaxIgnored       = 100      // ignored entries kept; the rest are dropped
	MaxPathBytes     = 4096     // a candidate's path; a longer one is refused
	MaxLogLines      = 1000     // log lines one call keeps, the host's lines about it included
	MaxLogBytes      = 64 << 10 // the bytes of those lines
	MaxLogLineBytes  = 4096     // what one call of ImportLog passes; the rest is cut
	MaxOutputBytes   = 64 << 10 // what a plugin prints, on each of stdout and stderr
	MaxResolveName   = 256      // the bytes of a name ImportSystemResolve reads
	MaxIdleInstances = 4        // instances kept for reuse, per set of grants
)

// What a step gets when its configuration does not say: [plugin.NAME] memory and timeout.
const (
	DefaultMemoryBytes = 64 << 20
	DefaultTimeout     = 5 * time.Second
)
