//go:build ignore

// The canary step in C, as the builtin module ships it: canary.go is its reference, and
// canary_c_test.go runs both over the same trees.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

// canary: where the host's model of the system loader finds each canary, the toolkit root around it,
// and the anchor directories there.
void search_canary(const request *rq, response *rs) {
	const descriptor *l = &rq->library;
	if (l->ctk_root_canary_anchor_libnames.n == 0) {
		add_tried(rs, "", "the descriptor names no canary library");
		return;
	}
	for (int i = 0; i < l->ctk_root_canary_anchor_libnames.n; i++) {
		const char *name = l->ctk_root_canary_anchor_libnames.v[i], *why = NULL;
		const char *p = system_resolve(name, &why);
		if (!p) {
			add_tried(rs, name, cat("canary: ", why, NULL));
			continue;
		}
		const char *root = toolkit_root(p);
		if (!root) {
			add_tried(rs, p, cat("canary ", name, " is not in a toolkit layout (lib64, lib, targets/<triple>/lib, bin): no root to derive", NULL));
			continue;
		}
		logf_(cat("canary ", name, " at ", p, ": toolkit root ", root, NULL));
		find(rq, rs, under(root, anchor_dirs(rq)));
	}
}
