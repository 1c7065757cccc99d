// The ABI's exports and the shared helpers of sdk.h.
#define _POSIX_C_SOURCE 200809L // stpcpy
#include "sdk.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"

// ---- arena: one per request, released when the host allocates the next one ----

typedef struct block {
	struct block *next;
	size_t used, size;
	max_align_t data[];
} block;

static block *arena;

static void arena_reset(void) {
	while (arena) {
		block *next = arena->next;
		free(arena);
		arena = next;
	}
}

void *alloc(size_t n) {
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!arena || arena->size - arena->used < n) {
		size_t size = n > 32 << 10 ? n : 32 << 10;
		block *b = malloc(sizeof(block) + size);
		if (!b)
			__builtin_trap(); // the host reports the trap; nothing sensible is left to do
		b->next = arena, b->used = 0, b->size = size;
		arena = b;
	}
	void *p = (char *)arena->data + arena->used;
	arena->used += n;
	memset(p, 0, n);
	return p;
}

char *dup(const char *s) {
	size_t n = strlen(s);
	char *d = alloc(n + 1);
	memcpy(d, s, n);
	return d;
}

char *cat(const char *s, ...) {
	va_list ap;
	size_t n = 0;
	va_start(ap, s);
	for (const char *p = s; p; p = va_arg(ap, const char *))
		n += strlen(p);
	va_end(ap);
	char *out = alloc(n + 1), *w = out;
	va_start(ap, s);
	for (const char *p = s; p; p = va_arg(ap, const char *)) {
		size_t k = strlen(p);
		memcpy(w, p, k);
		w += k;
	}
	va_end(ap);
	return out;
}

const char *decimal(long long v) {
	char buf[24], *p = buf + sizeof buf;
	bool neg = v < 0;
	unsigned long long u = neg ? -(unsigned long long)v : (unsigned long long)v;
	*--p = 0;
	do
		*--p = '0' + u % 10;
	while (u /= 10);
	if (neg)
		*--p = '-';
	return dup(p);
}

void *grow(void *v, int n, int *cap, size_t elem) {
	if (n < *cap)
		return v;
	int c = *cap ? *cap * 2 : 8;
	void *nv = alloc(c * elem);
	if (n)
		memcpy(nv, v, n * elem);
	*cap = c;
	return nv;
}

void push(strs *l, const char *s) {
	l->v = grow(l->v, l->n, &l->cap, sizeof *l->v);
	l->v[l->n++] = s;
}

const char *joined(strs l, const char *sep) {
	size_t n = 1;
	for (int i = 0; i < l.n; i++)
		n += strlen(l.v[i]) + strlen(sep);
	char *out = alloc(n), *w = out;
	for (int i = 0; i < l.n; i++) {
		if (i)
			w = stpcpy(w, sep);
		w = stpcpy(w, l.v[i]);
	}
	return out;
}

void add_candidate(response *rs, const char *path) {
	rs->candidates = grow(rs->candidates, rs->ncandidates, &rs->capcandidates, sizeof *rs->candidates);
	rs->candidates[rs->ncandidates++] = (candidate){.path = path};
}

void add_tried(response *rs, const char *path, const char *reason) {
	rs->tried = grow(rs->tried, rs->ntried, &rs->captried, sizeof *rs->tried);
	rs->tried[rs->ntried++] = (attempt){.path = path, .reason = reason};
}

void add_ignored(response *rs, const char *var, const char *reason) {
	rs->ignored = grow(rs->ignored, rs->nignored, &rs->capignored, sizeof *rs->ignored);
	rs->ignored[rs->nignored++] = (ignoredvar){.var = var, .reason = reason};
}

// ---- paths, as Go's package path ----

char *path_clean(const char *p) {
	size_t n = strlen(p);
	if (n == 0)
		return dup(".");
	bool rooted = p[0] == '/';
	char *out = alloc(n + 2);
	size_t w = 0, r = 0, dotdot = 0;
	if (rooted)
		out[w++] = '/', r = 1, dotdot = 1;
	while (r < n) {
		if (p[r] == '/') {
			r++;
		} else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/')) {
			r++;
		} else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out[w] != '/')
					w--;
			} else if (!rooted) {
				if (w > 0)
					out[w++] = '/';
				out[w++] = '.', out[w++] = '.';
				dotdot = w;
			}
		} else {
			if ((rooted && w != 1) || (!rooted && w != 0))
				out[w++] = '/';
			for (; r < n && p[r] != '/'; r++)
				out[w++] = p[r];
		}
	}
	if (w == 0)
		return dup(".");
	out[w] = 0;
	return out;
}

char *path_join(const char *a, const char *b) {
	if (!*a)
		return *b ? path_clean(b) : dup("");
	if (!*b)
		return path_clean(a);
	return path_clean(cat(a, "/", b, NULL));
}

char *path_dir(const char *p) {
	const char *slash = strrchr(p, '/');
	if (!slash)
		return dup(".");
	size_t n = slash - p + 1;
	char *d = alloc(n + 1);
	memcpy(d, p, n);
	return path_clean(d);
}

bool path_is_abs(const char *p) { return p[0] == '/'; }

strs under(const char *root, strs rels) {
	strs out = {0};
	for (int i = 0; i < rels.n; i++)
		push(&out, path_join(root, rels.v[i]));
	return out;
}

// ---- platform and descriptor ----

bool is_windows(const request *rq) { return strcmp(rq->platform.os, "windows") == 0; }

const char *triple(platform p) {
	bool win = strcmp(p.os, "windows") == 0;
	if (win && strcmp(p.arch, "arm64") == 0)
		return "arm64";
	if (win)
		return "x64";
	if (strcmp(p.arch, "arm64") == 0)
		return "sbsa-linux";
	if (strcmp(p.arch, "ppc64le") == 0)
		return "ppc64le-linux";
	return "x86_64-linux";
}

strs expand(platform p, strs dirs) {
	static const char key[] = "{triple}";
	strs out = {0};
	const char *t = triple(p);
	for (int i = 0; i < dirs.n; i++) {
		const char *d = dirs.v[i], *hit;
		char *s = dup("");
		while ((hit = strstr(d, key))) {
			char *head = alloc(hit - d + 1);
			memcpy(head, d, hit - d);
			s = cat(s, head, t, NULL);
			d = hit + sizeof key - 1;
		}
		push(&out, cat(s, d, NULL));
	}
	return out;
}

static bool contains(strs l, const char *s) {
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.v[i], s))
			return true;
	return false;
}

strs file_names(const request *rq) {
	const descriptor *l = &rq->library;
	strs out = {0};
	if (is_windows(rq) && l->supported_windows_arch.n && !contains(l->supported_windows_arch, triple(rq->platform)))
		return out;
	const strs *a = is_windows(rq) ? &l->windows_dlls : &l->linux_sonames;
	const strs *b = is_windows(rq) ? &l->windows_files : &l->linux_files;
	for (int i = 0; i < a->n; i++)
		push(&out, a->v[i]);
	for (int i = 0; i < b->n; i++)
		push(&out, b->v[i]);
	return out;
}

strs anchor_dirs(const request *rq) {
	const descriptor *l = &rq->library;
	return expand(rq->platform, is_windows(rq) ? l->anchor_rel_dirs_windows : l->anchor_rel_dirs_linux);
}

static bool is_windows_arm64(const request *rq) { return is_windows(rq) && !strcmp(rq->platform.arch, "arm64"); }

strs site_packages_dirs(const request *rq) {
	const descriptor *l = &rq->library;
	if (is_windows_arm64(rq) && l->site_packages_windows_arm64.n)
		return expand(rq->platform, l->site_packages_windows_arm64);
	return expand(rq->platform, is_windows(rq) ? l->site_packages_windows : l->site_packages_linux);
}

strs install_root_dirs(const request *rq) {
	const descriptor *l = &rq->library;
	strs dirs = l->install_root_rel_dirs;
	if (is_windows(rq) && l->install_root_rel_dirs_windows.n)
		dirs = l->install_root_rel_dirs_windows;
	if (is_windows_arm64(rq) && l->install_root_rel_dirs_windows_arm64.n)
		dirs = l->install_root_rel_dirs_windows_arm64;
	return dirs.n ? expand(rq->platform, dirs) : anchor_dirs(rq);
}

strs conda_dirs(const request *rq) {
	const descriptor *l = &rq->library;
	strs dirs = is_windows(rq) ? l->conda_rel_dirs_windows : l->conda_rel_dirs_linux;
	if (is_windows_arm64(rq) && l->conda_rel_dirs_windows_arm64.n)
		dirs = l->conda_rel_dirs_windows_arm64;
	if (dirs.n || l->linux_files.n + l->windows_files.n)
		return expand(rq->platform, dirs);
	strs anchors = anchor_dirs(rq);
	return is_windows(rq) ? under("Library", anchors) : anchors;
}

static char fold(char c) { return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c; }

bool equal_fold(const char *a, const char *b) {
	for (; *a && *b; a++, b++)
		if (fold(*a) != fold(*b))
			return false;
	return *a == *b;
}

char *lower(const char *s) {
	char *out = dup(s);
	for (char *p = out; *p; p++)
		*p = fold(*p);
	return out;
}

// ---- the sandbox ----

bool is_dir(const char *p) {
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool entry_is_dir(const char *base, dirent_t e) {
	if (e.type == DT_DIR)
		return true;
	return (e.type == DT_LNK || e.type == DT_UNKNOWN) && is_dir(path_join(base, e.name));
}

static int by_name(const void *a, const void *b) {
	return strcmp(((const dirent_t *)a)->name, ((const dirent_t *)b)->name);
}

// errno_text is Go's text for the errors a listing meets, so both SDKs explain a failure alike.
static const char *errno_text(int e) {
	switch (e) {
	case ENOENT:
		return "no such file or directory";
	case ENOTDIR:
		return "not a directory";
	case EACCES:
		return "permission denied";
	case ENOTCAPABLE:
		return "capabilities insufficient";
	}
	char *s = dup(strerror(e));
	s[0] = fold(s[0]);
	return s;
}

int list_dir(const char *p, dirent_t **out, const char **why) {
	DIR *d = opendir(p);
	if (!d) {
		*why = errno_text(errno);
		return -1;
	}
	dirent_t *v = NULL;
	int n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		v = grow(v, n, &cap, sizeof *v);
		v[n++] = (dirent_t){dup(e->d_name), e->d_type};
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, by_name);
	*out = v;
	return n;
}

const char *lookup_env(const char *name) {
	const char *v = getenv(name);
	return v ? v : "";
}

const char *env_dir(response *rs, const char *name) {
	const char *v = lookup_env(name);
	if (!*v) {
		add_tried(rs, cat("$", name, NULL), TEXT_NOT_SET);
		return NULL;
	}
	if (!path_is_abs(v)) {
		add_tried(rs, v, text_relative_env_dir(name));
		return NULL;
	}
	return path_clean(v);
}

__attribute__((import_module(IMPORT_MODULE), import_name(IMPORT_LOG))) void host_log(const char *p, size_t n);
__attribute__((import_module(IMPORT_MODULE), import_name(IMPORT_SYSTEM_RESOLVE))) int host_system_resolve(const char *name, size_t n, char *out, size_t cap);

void logf_(const char *s) { host_log(s, strlen(s)); }

const char *system_resolve(const char *name, const char **why) {
	if (!*name) {
		*why = TEXT_EMPTY_NAME;
		return NULL;
	}
	char *out = alloc(MAX_PATH_BYTES);
	int n = host_system_resolve(name, strlen(name), out, MAX_PATH_BYTES);
	if (n == RESOLVE_DENIED)
		*why = TEXT_NOT_GRANTED;
	else if (n == RESOLVE_NOT_FOUND)
		*why = TEXT_LOADER_NOT_FOUND;
	else if (n < 0 || n > MAX_PATH_BYTES)
		*why = text_host_answered(n);
	else {
		char *p = alloc(n + 1);
		memcpy(p, out, n);
		return p;
	}
	return NULL;
}

// fold_name is the entry of listing equal to name, else the first equal under case folding, else name.
static const char *fold_name(dirent_t *listing, int n, const char *name) {
	for (int i = 0; i < n; i++)
		if (!strcmp(listing[i].name, name))
			return name;
	for (int i = 0; i < n; i++)
		if (equal_fold(listing[i].name, name))
			return listing[i].name;
	return name;
}

// holding is what the directory dir holds, its first MAX_LISTED names; "" when it cannot be listed.
static const char *holding(const char *dir) {
	dirent_t *listing;
	const char *why;
	int n = list_dir(dir, &listing, &why);
	if (n < 0)
		return "";
	if (n == 0)
		return TEXT_IT_IS_EMPTY;
	strs names = {0};
	for (int i = 0; i < n && i < MAX_LISTED; i++)
		push(&names, listing[i].name);
	const char *s = joined(names, ", ");
	if (n > MAX_LISTED)
		s = cat(s, text_and_more(n - MAX_LISTED), NULL);
	return text_it_holds(s);
}

void find(const request *rq, response *rs, strs dirs) {
	strs names = file_names(rq);
	bool header = strcmp(rq->kind, KIND_HEADER_DIR) == 0;
	for (int d = 0; d < dirs.n; d++) {
		const char *dir = dirs.v[d];
		if (!is_dir(dir)) {
			add_tried(rs, dir, TEXT_NO_SUCH_DIRECTORY);
			continue;
		}
		dirent_t *listing = NULL;
		int nlisting = 0;
		if (is_windows(rq)) {
			const char *why;
			nlisting = list_dir(dir, &listing, &why);
			if (nlisting < 0)
				nlisting = 0;
		}
		bool found = false;
		for (int i = 0; i < names.n; i++) {
			const char *p = path_join(dir, fold_name(listing, nlisting, names.v[i]));
			struct stat st;
			if (stat(p, &st) != 0)
				continue;
			if (S_ISDIR(st.st_mode)) {
				add_tried(rs, p, TEXT_IS_DIRECTORY);
				continue;
			}
			add_candidate(rs, header ? dir : p);
			found = true;
		}
		if (!found)
			add_tried(rs, dir, cat(text_none_of(joined(names, ", ")), holding(dir), NULL));
		logf_(text_searched(dir));
	}
}

// ---- the exports ----

static uint64_t reply(buffer o) { return (uint64_t)(uintptr_t)o.b << 32 | o.n; }

__attribute__((export_name(EXPORT_VERSION))) int pathfinder_abi_version(void) { return ABI_VERSION; }

__attribute__((export_name(EXPORT_ALLOC))) void *pathfinder_alloc(size_t size) {
	arena_reset(); // the previous request and response are the host's now
	return size ? alloc(size) : NULL;
}

// lookup is abi's: by entry, else the only search, else by step.
static const plugin *lookup(const request *rq, const char **err) {
	if (*rq->entry) {
		for (int i = 0; plugins[i]; i++)
			if (!strcmp(plugins[i]->name, rq->entry))
				return plugins[i];
		*err = text_no_such_search(rq->entry);
		return NULL;
	}
	strs names = {0};
	for (int i = 0; plugins[i]; i++)
		push(&names, plugins[i]->name);
	if (names.n == 1)
		return plugins[0];
	for (int i = 0; plugins[i]; i++)
		if (!strcmp(plugins[i]->name, rq->step))
			return plugins[i];
	*err = text_no_such_search_has(rq->step, joined(names, ", "));
	return NULL;
}

__attribute__((export_name(EXPORT_SEARCH))) uint64_t pathfinder_search(const char *ptr, size_t size) {
	response rs = {0};
	buffer o = {0};
	const char *err = NULL;
	json *j = json_parse(ptr, size, &err);
	if (!j || j->type != 'o') {
		rs.error = text_bad_request(err ? err : "not an object");
		encode_response(&o, &rs);
		return reply(o);
	}
	request rq = {0};
	decode_request(j, &rq);
	const plugin *p;
	if (rq.abi != ABI_VERSION)
		rs.error = text_version_mismatch(rq.abi, ABI_VERSION);
	else if ((p = lookup(&rq, &err)))
		p->search(&rq, &rs);
	else
		rs.error = err;
	encode_response(&o, &rs);
	return reply(o);
}

static int by_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

__attribute__((export_name(EXPORT_DESCRIBE))) uint64_t pathfinder_describe(void) {
	arena_reset();
	description d = {.abi = ABI_VERSION};
	for (int i = 0; plugins[i]; i++) {
		push(&d.names, plugins[i]->name);
		for (const char *const *e = plugins[i]->env; e && *e; e++)
			push(&d.env, *e);
		if (!d.version || !*d.version)
			d.version = plugins[i]->version;
	}
	qsort(d.names.v, d.names.n, sizeof *d.names.v, by_str);
	qsort(d.env.v, d.env.n, sizeof *d.env.v, by_str);
	buffer o = {0};
	encode_description(&o, &d);
	return reply(o);
}
