// The ABI's exports, the request decoder, the response encoder and the shared helpers of sdk.h.
#define _POSIX_C_SOURCE 200809L // stpcpy
#include "sdk.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ABI_VERSION 1

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

static void *grow(void *v, int n, int *cap, size_t elem) {
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

void add_candidate(response *rs, const char *path, const char *found_via, const char *note) {
	rs->candidates = grow(rs->candidates, rs->ncandidates, &rs->capcandidates, sizeof *rs->candidates);
	rs->candidates[rs->ncandidates++] = (candidate){path, found_via, note};
}

void add_tried(response *rs, const char *path, const char *reason) {
	rs->tried = grow(rs->tried, rs->ntried, &rs->captried, sizeof *rs->tried);
	rs->tried[rs->ntried++] = (attempt){path, reason};
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

strs file_names(const request *rq) {
	const library *l = &rq->library;
	strs out = {0};
	const strs *a = is_windows(rq) ? &l->windows_dlls : &l->linux_sonames;
	const strs *b = is_windows(rq) ? &l->windows_files : &l->linux_files;
	for (int i = 0; i < a->n; i++)
		push(&out, a->v[i]);
	for (int i = 0; i < b->n; i++)
		push(&out, b->v[i]);
	return out;
}

strs anchor_dirs(const request *rq) {
	const library *l = &rq->library;
	return expand(rq->platform, is_windows(rq) ? l->anchor_rel_dirs_windows : l->anchor_rel_dirs_linux);
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
		add_tried(rs, cat("$", name, NULL), "not set");
		return NULL;
	}
	if (!path_is_abs(v)) {
		add_tried(rs, v, cat("$", name, " is a relative path: refused, never resolved against the working directory", NULL));
		return NULL;
	}
	return path_clean(v);
}

__attribute__((import_module("pathfinder"), import_name("log"))) void host_log(const char *p, size_t n);
__attribute__((import_module("pathfinder"), import_name("system_resolve"))) int host_system_resolve(const char *name, size_t n, char *out, size_t cap);

void logf_(const char *s) { host_log(s, strlen(s)); }

static const char *itoa_(long long v) {
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

const char *system_resolve(const char *name, const char **why) {
	enum { denied = -1, not_found = -2 };
	if (!*name) {
		*why = "empty name";
		return NULL;
	}
	char *out = alloc(4096);
	int n = host_system_resolve(name, strlen(name), out, 4096);
	if (n == denied)
		*why = "not granted by the host's config";
	else if (n == not_found)
		*why = "the system loader would not find it";
	else if (n < 0 || n > 4096)
		*why = cat("host answered ", itoa_(n), NULL);
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

void find(const request *rq, response *rs, strs dirs, const char *found_via) {
	strs names = file_names(rq);
	bool header = strcmp(rq->kind, "header-dir") == 0;
	for (int d = 0; d < dirs.n; d++) {
		const char *dir = dirs.v[d];
		if (!is_dir(dir)) {
			add_tried(rs, dir, "no such directory");
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
				add_tried(rs, p, "is a directory");
				continue;
			}
			if (header)
				add_candidate(rs, dir, found_via, cat("holds ", names.v[i], NULL));
			else
				add_candidate(rs, p, found_via, NULL);
			found = true;
		}
		if (!found)
			add_tried(rs, dir, cat("none of ", joined(names, ", "), NULL));
		logf_(cat("searched ", dir, NULL));
	}
}

// ---- JSON: just what the request and the response need ----

typedef struct json {
	char type; // o(bject) a(rray) s(tring) n(umber) t(rue) f(alse) z (null)
	const char *s;
	long long num;
	struct json **items;
	const char **keys;
	int n, cap, capkeys;
} json;

typedef struct {
	const char *p, *end;
	const char *err;
} parser;

static void skip_space(parser *ps) {
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	c = fold(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *put_rune(char *w, uint32_t r) {
	if (r < 0x80) {
		*w++ = r;
	} else if (r < 0x800) {
		*w++ = 0xC0 | r >> 6, *w++ = 0x80 | (r & 0x3F);
	} else if (r < 0x10000) {
		*w++ = 0xE0 | r >> 12, *w++ = 0x80 | (r >> 6 & 0x3F), *w++ = 0x80 | (r & 0x3F);
	} else {
		*w++ = 0xF0 | r >> 18, *w++ = 0x80 | (r >> 12 & 0x3F), *w++ = 0x80 | (r >> 6 & 0x3F), *w++ = 0x80 | (r & 0x3F);
	}
	return w;
}

static int hex4(parser *ps) {
	if (ps->end - ps->p < 4)
		return -1;
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(ps->p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	ps->p += 4;
	return v;
}

static const char *parse_string(parser *ps) {
	ps->p++; // the opening quote
	const char *q = ps->p;
	while (q < ps->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	char *out = alloc((q < ps->end ? q : ps->end) - ps->p + 1), *w = out; // escapes only shrink
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = *ps->p++;
		if (c < 0x20) {
			ps->err = "control character in string";
			return NULL;
		}
		if (c != '\\') {
			*w++ = c;
			continue;
		}
		if (ps->p >= ps->end)
			break;
		switch (c = *ps->p++) {
		case '"': case '\\': case '/':
			*w++ = c;
			break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u': {
			int r = hex4(ps);
			if (r < 0) {
				ps->err = "bad \\u escape";
				return NULL;
			}
			if (r >= 0xD800 && r < 0xDC00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
				const char *save = ps->p;
				ps->p += 2;
				int lo = hex4(ps);
				if (lo >= 0xDC00 && lo < 0xE000)
					r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
				else
					ps->p = save, r = 0xFFFD;
			} else if (r >= 0xD800 && r < 0xE000) {
				r = 0xFFFD;
			}
			w = put_rune(w, r);
			break;
		}
		default:
			ps->err = "bad escape in string";
			return NULL;
		}
	}
	if (ps->p >= ps->end) {
		ps->err = "unterminated string";
		return NULL;
	}
	ps->p++;
	return out;
}

static json *parse_value(parser *ps, int depth);

static json *parse_container(parser *ps, int depth, char type) {
	json *v = alloc(sizeof *v);
	v->type = type;
	char close = type == 'o' ? '}' : ']';
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return v;
	}
	for (;;) {
		skip_space(ps);
		if (type == 'o') {
			if (ps->p >= ps->end || *ps->p != '"') {
				ps->err = "expected an object key";
				return NULL;
			}
			const char *key = parse_string(ps);
			if (!key)
				return NULL;
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p++ != ':') {
				ps->err = "expected ':'";
				return NULL;
			}
			int capkeys = v->capkeys;
			v->keys = grow(v->keys, v->n, &capkeys, sizeof *v->keys);
			v->capkeys = capkeys;
			v->keys[v->n] = key;
		}
		json *item = parse_value(ps, depth + 1);
		if (!item)
			return NULL;
		v->items = grow(v->items, v->n, &v->cap, sizeof *v->items);
		v->items[v->n++] = item;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return v;
		}
		ps->err = type == 'o' ? "expected ',' or '}'" : "expected ',' or ']'";
		return NULL;
	}
}

static bool literal(parser *ps, const char *word) {
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static json *parse_value(parser *ps, int depth) {
	if (depth > 32) {
		ps->err = "nested too deeply";
		return NULL;
	}
	skip_space(ps);
	if (ps->p >= ps->end) {
		ps->err = "unexpected end of input";
		return NULL;
	}
	json *v;
	switch (*ps->p) {
	case '{':
	case '[':
		return parse_container(ps, depth, *ps->p == '{' ? 'o' : 'a');
	case '"':
		v = alloc(sizeof *v);
		v->type = 's';
		v->s = parse_string(ps);
		return v->s ? v : NULL;
	}
	v = alloc(sizeof *v);
	if (literal(ps, "true"))
		v->type = 't';
	else if (literal(ps, "false"))
		v->type = 'f';
	else if (literal(ps, "null"))
		v->type = 'z';
	else if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
		v->type = 'n';
		bool neg = *ps->p == '-';
		ps->p += neg;
		long long n = 0;
		bool integral = true;
		for (; ps->p < ps->end && *ps->p && strchr("0123456789.eE+-", *ps->p); ps->p++) {
			integral = integral && *ps->p >= '0' && *ps->p <= '9';
			if (integral && n < 1000000000)
				n = n * 10 + (*ps->p - '0');
		}
		v->num = neg ? -n : n;
	} else {
		ps->err = "unexpected character";
		return NULL;
	}
	return v;
}

static json *get(const json *o, const char *key) {
	if (!o || o->type != 'o')
		return NULL;
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

static const char *get_str(const json *o, const char *key) {
	json *v = get(o, key);
	return v && v->type == 's' ? v->s : "";
}

static strs get_strs(const json *o, const char *key) {
	strs out = {0};
	json *v = get(o, key);
	if (v && v->type == 'a')
		for (int i = 0; i < v->n; i++)
			if (v->items[i]->type == 's')
				push(&out, v->items[i]->s);
	return out;
}

static void decode_request(const json *j, request *rq) {
	json *abi = get(j, "abi");
	rq->abi = abi && abi->type == 'n' ? (int)abi->num : 0;
	rq->step = get_str(j, "step");
	rq->entry = get_str(j, "entry");
	rq->kind = get_str(j, "kind");
	json *pl = get(j, "platform");
	rq->platform = (platform){get_str(pl, "os"), get_str(pl, "arch")};
	json *l = get(j, "library");
	library *lib = &rq->library;
	lib->name = get_str(l, "name");
	lib->linux_sonames = get_strs(l, "linux_sonames");
	lib->windows_dlls = get_strs(l, "windows_dlls");
	lib->linux_files = get_strs(l, "linux_files");
	lib->windows_files = get_strs(l, "windows_files");
	lib->conda_rel_dirs_linux = get_strs(l, "conda_rel_dirs_linux");
	lib->conda_rel_dirs_windows = get_strs(l, "conda_rel_dirs_windows");
	lib->site_packages_linux = get_strs(l, "site_packages_linux");
	lib->site_packages_windows = get_strs(l, "site_packages_windows");
	lib->anchor_rel_dirs_linux = get_strs(l, "anchor_rel_dirs_linux");
	lib->anchor_rel_dirs_windows = get_strs(l, "anchor_rel_dirs_windows");
	lib->install_root_env_vars = get_strs(l, "install_root_env_vars");
	lib->install_root_rel_dirs = get_strs(l, "install_root_rel_dirs");
	lib->canary_anchors = get_strs(l, "ctk_root_canary_anchor_libnames");
	lib->program_files_dirs_windows = get_strs(l, "program_files_dirs_windows");
	json *roots = get(j, "roots");
	if (roots && roots->type == 'a') {
		rq->roots = alloc(roots->n * sizeof *rq->roots);
		for (int i = 0; i < roots->n; i++)
			rq->roots[rq->nroots++] = (root){get_str(roots->items[i], "path"), get_str(roots->items[i], "role")};
	}
}

// A growing output buffer.
typedef struct {
	char *b;
	size_t n, cap;
} buffer;

static void put(buffer *o, const char *s, size_t n) {
	if (o->n + n > o->cap) {
		size_t c = o->cap ? o->cap : 4096;
		while (c < o->n + n)
			c *= 2;
		char *nb = alloc(c);
		memcpy(nb, o->b, o->n);
		o->b = nb, o->cap = c;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
}

static void puts_(buffer *o, const char *s) { put(o, s, strlen(s)); }

// utf8_len is the length of the valid UTF-8 sequence at s, or 0 (Go's json replaces such bytes with U+FFFD).
static int utf8_len(const unsigned char *s) {
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		return (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		unsigned lo = s[0] == 0xE0 ? 0xA0 : 0x80, hi = s[0] == 0xED ? 0x9F : 0xBF;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
	}
	if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		unsigned lo = s[0] == 0xF0 ? 0x90 : 0x80, hi = s[0] == 0xF4 ? 0x8F : 0xBF;
		return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
	}
	return 0;
}

static void put_string(buffer *o, const char *s) {
	static const char hex[] = "0123456789abcdef";
	put(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		if (*p == '"' || *p == '\\') {
			char e[2] = {'\\', *p++};
			put(o, e, 2);
		} else if (*p < 0x20) {
			char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
			put(o, e, 6);
			p++;
		} else {
			int n = utf8_len(p);
			if (n == 0)
				puts_(o, "\\ufffd"), n = 1;
			else
				put(o, (const char *)p, n);
			p += n;
		}
	}
	put(o, "\"", 1);
}

static void put_field(buffer *o, const char *key, const char *value, bool comma) {
	if (comma)
		put(o, ",", 1);
	put_string(o, key);
	put(o, ":", 1);
	put_string(o, value);
}

static buffer encode_response(const response *rs) {
	buffer o = {0};
	puts_(&o, "{");
	bool comma = false;
	if (rs->ncandidates) {
		puts_(&o, "\"candidates\":[");
		for (int i = 0; i < rs->ncandidates; i++) {
			const candidate *c = &rs->candidates[i];
			puts_(&o, i ? ",{" : "{");
			put_field(&o, "path", c->path, false);
			put_field(&o, "found_via", c->found_via, true);
			if (c->note && *c->note)
				put_field(&o, "note", c->note, true);
			puts_(&o, "}");
		}
		puts_(&o, "]");
		comma = true;
	}
	if (rs->ntried) {
		puts_(&o, comma ? ",\"tried\":[" : "\"tried\":[");
		for (int i = 0; i < rs->ntried; i++) {
			puts_(&o, i ? ",{" : "{");
			put_field(&o, "path", rs->tried[i].path, false);
			put_field(&o, "reason", rs->tried[i].reason, true);
			puts_(&o, "}");
		}
		puts_(&o, "]");
		comma = true;
	}
	if (rs->error && *rs->error)
		put_field(&o, "error", rs->error, comma);
	puts_(&o, "}");
	return o;
}

// ---- the exports ----

static uint64_t reply(buffer o) { return (uint64_t)(uintptr_t)o.b << 32 | o.n; }

__attribute__((export_name("pathfinder_abi_version"))) int pathfinder_abi_version(void) { return ABI_VERSION; }

__attribute__((export_name("pathfinder_alloc"))) void *pathfinder_alloc(size_t size) {
	arena_reset(); // the previous request and response are the host's now
	return size ? alloc(size) : NULL;
}

static const plugin *lookup(const request *rq, const char **err) {
	const char *want = *rq->entry ? rq->entry : rq->step;
	for (int i = 0; plugins[i]; i++)
		if (!strcmp(plugins[i]->name, want))
			return plugins[i];
	if (*rq->entry) {
		*err = cat("no search named \"", rq->entry, "\" in this plugin", NULL);
		return NULL;
	}
	strs names = {0};
	for (int i = 0; plugins[i]; i++)
		push(&names, plugins[i]->name);
	*err = cat("no search named \"", rq->step, "\" in this plugin (has ", joined(names, ", "), ")", NULL);
	return NULL;
}

__attribute__((export_name("pathfinder_search"))) uint64_t pathfinder_search(const char *ptr, size_t size) {
	response rs = {0};
	parser ps = {ptr, ptr + size, NULL};
	json *j = parse_value(&ps, 0);
	if (j && (skip_space(&ps), ps.p != ps.end))
		j = NULL, ps.err = "data after the top-level value";
	if (!j || j->type != 'o') {
		rs.error = cat("bad request: ", ps.err ? ps.err : "not an object", NULL);
		return reply(encode_response(&rs));
	}
	request rq = {0};
	decode_request(j, &rq);
	const plugin *p;
	const char *err = NULL;
	if (rq.abi != ABI_VERSION)
		rs.error = cat("abi version mismatch: host ", itoa_(rq.abi), ", plugin ", itoa_(ABI_VERSION), NULL);
	else if ((p = lookup(&rq, &err)))
		p->search(&rq, &rs);
	else
		rs.error = err;
	return reply(encode_response(&rs));
}

static int by_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

__attribute__((export_name("pathfinder_describe"))) uint64_t pathfinder_describe(void) {
	arena_reset();
	strs names = {0}, env = {0};
	for (int i = 0; plugins[i]; i++) {
		push(&names, plugins[i]->name);
		for (const char *const *e = plugins[i]->env; e && *e; e++)
			push(&env, *e);
	}
	qsort(names.v, names.n, sizeof *names.v, by_str);
	qsort(env.v, env.n, sizeof *env.v, by_str);
	buffer o = {0};
	puts_(&o, "{\"abi\":1,\"names\":[");
	for (int i = 0; i < names.n; i++) {
		if (i)
			puts_(&o, ",");
		put_string(&o, names.v[i]);
	}
	puts_(&o, "],\"version\":\"1\",\"env\":[");
	for (int i = 0; i < env.n; i++) {
		if (i)
			puts_(&o, ",");
		put_string(&o, env.v[i]);
	}
	puts_(&o, "]}");
	return reply(o);
}
