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
	find(rq, rs, under(prefix, conda_dirs(rq)));
}
