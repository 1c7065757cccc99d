//go:build ignore

// The envroots step in C, as the builtin module ships it: envroots.go is its reference, and
// envroots_c_test.go runs both over the same trees.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

// envroots: the descriptor's install-root variables in order, then CUDA_PATH, else CUDA_HOME.
void search_envroots(const request *rq, response *rs) {
	const descriptor *l = &rq->library;
	strs rels = install_root_dirs(rq);
	for (int i = 0; i < l->install_root_env_vars.n; i++) {
		const char *name = l->install_root_env_vars.v[i], *root = env_dir(rs, name);
		if (root)
			find(rq, rs, under(root, rels), name);
	}
	const char *name = "CUDA_PATH";
	if (!*lookup_env(name)) {
		add_tried(rs, "$CUDA_PATH", "not set");
		name = "CUDA_HOME";
	}
	const char *root = env_dir(rs, name);
	if (root)
		find(rq, rs, under(root, anchor_dirs(rq)), name);
}
