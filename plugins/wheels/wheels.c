//go:build ignore

// The wheels step in C, as the builtin module ships it: wheels.go is its reference, and
// wheels_c_test.go runs both over the same trees.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

#include <string.h>

// wheels: the descriptor's sub-directories of each granted site-packages directory, sub-directory
// first, so nvidia/cu13/lib in any site directory beats nvidia/cuda_runtime/lib in the first.
void search_wheels(const request *rq, response *rs) {
	strs sites = {0}, dirs = {0};
	for (int i = 0; i < rq->nroots; i++)
		if (!strcmp(rq->roots[i].role, ROLE_SITE_PACKAGES))
			push(&sites, rq->roots[i].path);
	if (sites.n == 0) {
		add_tried(rs, "", "no site-packages directory found");
		return;
	}
	strs subs = site_packages_dirs(rq);
	for (int s = 0; s < subs.n; s++)
		for (int i = 0; i < sites.n; i++)
			push(&dirs, path_join(sites.v[i], subs.v[s]));
	find(rq, rs, dirs);
}
