//go:build ignore

// The conda step in C, as the builtin module ships it: conda.go is its reference, and
// conda_c_test.go runs both over the same trees.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

// conda: the descriptor's directories under $CONDA_PREFIX; a dynamic library that declares none is
// searched as in a toolkit root, with its anchor directories (Windows: under Library).
void search_conda(const request *rq, response *rs) {
	const char *prefix = env_dir(rs, "CONDA_PREFIX");
	if (!prefix)
		return;
	const library *l = &rq->library;
	strs rels = is_windows(rq) ? l->conda_rel_dirs_windows : l->conda_rel_dirs_linux;
	if (rels.n == 0 && l->linux_files.n + l->windows_files.n == 0)
		find(rq, rs, under(is_windows(rq) ? path_join(prefix, "Library") : prefix, anchor_dirs(rq)), "conda");
	else
		find(rq, rs, under(prefix, expand(rq->platform, rels)), "conda");
}
