//go:build ignore

// The envroots step in C, as the builtin module ships it: envroots.go is its reference, and
// envroots_c_test.go runs both over the same trees.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

#include <string.h>
#include <sys/stat.h>

// same_dir: one absolute path, or two paths to one directory (os.SameFile: device and inode).
static bool same_dir(const char *a, const char *b) {
	if (!path_is_abs(a) || !path_is_abs(b))
		return false;
	if (!strcmp(path_clean(a), path_clean(b)))
		return true;
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// envroots: the descriptor's install-root variables in order, then CUDA_PATH, else CUDA_HOME (a
// CUDA_HOME naming another directory than CUDA_PATH reported as passed over).
void search_envroots(const request *rq, response *rs) {
	const descriptor *l = &rq->library;
	strs rels = install_root_dirs(rq);
	for (int i = 0; i < l->install_root_env_vars.n; i++) {
		const char *root = env_dir(rs, l->install_root_env_vars.v[i]);
		if (root)
			find(rq, rs, under(root, rels));
	}
	const char *name = "CUDA_PATH", *cuda_path = lookup_env(name), *cuda_home = lookup_env("CUDA_HOME");
	if (!*cuda_path) {
		add_tried(rs, "$CUDA_PATH", "not set");
		name = "CUDA_HOME";
	} else if (*cuda_home && !same_dir(cuda_path, cuda_home))
		add_ignored(rs, "CUDA_HOME", "CUDA_PATH is set, and CUDA_HOME is read only when CUDA_PATH is not");
	const char *root = env_dir(rs, name);
	if (root)
		find(rq, rs, under(root, anchor_dirs(rq)));
}
