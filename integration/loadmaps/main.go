// Command loadmaps loads one library through pathfinder's Go API and prints, as one JSON object, what
// Load returned and every file of that library that /proc/self/maps shows in the process afterwards.
// The suite in integration/ runs it to see that a process never holds two copies of one library:
//
//	loadmaps NAME FILE-PREFIX      e.g. loadmaps cudart libcudart.so
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
)

// report is what loadmaps prints.
type report struct {
	Path          string   `json:"path,omitempty"`
	FoundVia      string   `json:"found_via,omitempty"`
	AlreadyLoaded bool     `json:"already_loaded"`
	Error         string   `json:"error,omitempty"`
	Maps          []string `json:"maps"` // "device inode path", once per file mapped
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: loadmaps NAME FILE-PREFIX")
		os.Exit(2)
	}
	var r report
	lib, err := host.Load(context.Background(), os.Args[1])
	if err != nil {
		r.Error = err.Error()
	} else {
		r.Path, r.FoundVia, r.AlreadyLoaded = lib.Path, lib.FoundVia, lib.AlreadyLoaded
	}
	r.Maps, err = mappedFiles(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadmaps:", err)
		os.Exit(2)
	}
	json.NewEncoder(os.Stdout).Encode(r)
	if r.Error != "" {
		os.Exit(1)
	}
}

// mappedFiles lists the files mapped into this process whose name starts with prefix, each once.
func mappedFiles(prefix string) ([]string, error) {
	listing, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	out := []string{}
	seen := map[string]bool{}
	for _, m := range loader.ParseMaps(string(listing)) {
		file := m.File + " " + m.Path
		if m.Path != "" && strings.HasPrefix(filepath.Base(m.Path), prefix) && !seen[file] {
			seen[file] = true
			out = append(out, file)
		}
	}
	return out, nil
}
