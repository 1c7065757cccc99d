//go:build ignore

// The canary step in C, as the builtin module ships it: canary.go is its reference, and
// canary_c_test.go runs both over the same trees.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

#include <string.h>

// canary: the anchor directories of each canary root the host granted, in its order.
void search_canary(const request *rq, response *rs) {
	const descriptor *l = &rq->library;
	if (l->ctk_root_canary_anchor_libnames.n == 0) {
		add_tried(rs, "", "the descriptor names no canary library");
		return;
	}
	bool granted = false;
	for (int i = 0; i < rq->nroots; i++) {
		if (strcmp(rq->roots[i].role, ROLE_CANARY_ROOT))
			continue;
		granted = true;
		find(rq, rs, under(rq->roots[i].path, anchor_dirs(rq)));
	}
	if (!granted)
		add_tried(rs, "", cat("no canary root granted (", joined(l->ctk_root_canary_anchor_libnames, ", "), ")", NULL));
}
