package config

import (
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
)

func TestPlugin_DescribeProblems(t *testing.T) {
	cat, err := catalog.New(catalog.Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    Plugin
		d    abi.Description
		want string // the problems, joined by " | "
	}{
		{"all granted", Plugin{Name: "site", Source: Source{File: "/x.wasm"}, Env: []string{"SITE_ROOT"}},
			abi.Description{ABI: abi.Version, Names: []string{"site"}, Env: []string{"SITE_ROOT"}}, ""},
		{"env not granted", Plugin{Name: "site", Source: Source{File: "/x.wasm"}, Env: []string{"A"}},
			abi.Description{ABI: abi.Version, Names: []string{"site"}, Env: []string{"A", "SITE_ROOT", "B"}},
			`asks for env SITE_ROOT, B (its describe export), which [plugin.site] env does not grant: it would read as unset; grant it with env = ["A", "SITE_ROOT", "B"]`},
		{"install roots grant the catalog's install-root variables", Plugin{Name: "site", Source: Source{File: "/x.wasm"}, Env: []string{InstallRootVars}},
			abi.Description{ABI: abi.Version, Names: []string{"site"}, Env: []string{"CUDNN_PATH"}}, ""},
		{"install roots are not every variable", Plugin{Name: "site", Source: Source{File: "/x.wasm"}, Env: []string{InstallRootVars}},
			abi.Description{ABI: abi.Version, Names: []string{"site"}, Env: []string{"HOME"}}, "asks for env HOME"},
		{"another ABI", Plugin{Name: "site", Source: Source{File: "/x.wasm"}},
			abi.Description{ABI: 1, Names: []string{"site"}}, "describes itself as ABI 1: host 2, plugin 1: the plugin was built for an older pathfinder: rebuild it"},
		{"several searches, none with the step's name", Plugin{Name: "site", Source: Source{File: "/x.wasm"}},
			abi.Description{ABI: abi.Version, Names: []string{"a", "b"}}, `registers the searches a, b, none named "site"`},
		{"one search answers to any step name", Plugin{Name: "site", Source: Source{File: "/x.wasm"}},
			abi.Description{ABI: abi.Version, Names: []string{"other"}}, ""},
		{"the builtin module describes every builtin step together", Plugin{Name: "wheels", Source: Source{Builtin: "wheels"}},
			abi.Description{ABI: abi.Version, Names: []string{"conda", "wheels"}, Env: []string{"CONDA_PREFIX"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var problems []string
			for _, err := range tt.p.DescribeProblems(&tt.d, cat) {
				problems = append(problems, err.Error())
			}
			got := strings.Join(problems, " | ")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("problems %q, want %q", got, tt.want)
			}
		})
	}
}
