//go:build ignore

// The programfiles step in C, as the builtin module ships it: programfiles.go is its reference
// (and documents the globs and the version order), and programfiles_c_test.go runs both over the
// same trees and fuzzes the globs. One difference by design: case folding on a Windows target is
// ASCII-only here (NVIDIA's names are ASCII), Unicode in Go.
// The build constraint keeps the go tool, which refuses C files in a package without cgo, off it.
#include "sdk.h"

#include <string.h>

// Go's path.Match, byte for byte: '*', '?', classes with ranges and '^'. On a bad pattern it returns -1.
static int decode_rune(const char *s, int *r) {
	const unsigned char *u = (const unsigned char *)s;
	int n = u[0] < 0x80 ? 1 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : u[0] >= 0xE0 && u[0] <= 0xEF ? 3 : u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : 0;
	for (int i = 1; i < n; i++)
		if ((u[i] & 0xC0) != 0x80)
			n = 0;
	if (n == 3 && ((u[0] == 0xE0 && u[1] < 0xA0) || (u[0] == 0xED && u[1] > 0x9F)))
		n = 0;
	if (n == 4 && ((u[0] == 0xF0 && u[1] < 0x90) || (u[0] == 0xF4 && u[1] > 0x8F)))
		n = 0;
	if (n == 0) {
		*r = 0xFFFD;
		return 1;
	}
	static const unsigned char mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
	*r = u[0] & mask[n];
	for (int i = 1; i < n; i++)
		*r = *r << 6 | (u[i] & 0x3F);
	return n;
}

// get_esc reads one class character; it returns false on a bad pattern.
static bool get_esc(const char **chunk, const char *end, int *r) {
	const char *c = *chunk;
	if (c >= end || *c == '-' || *c == ']')
		return false;
	if (*c == '\\' && ++c >= end)
		return false;
	bool invalid = (unsigned char)*c >= 0x80 && decode_rune(c, r) == 1;
	c += decode_rune(c, r);
	*chunk = c;
	return !invalid && c < end;
}

// match_chunk matches chunk [c, ce) at the start of s; *rest is what is left of s. -1: bad pattern.
static int match_chunk(const char *c, const char *ce, const char *s, const char **rest) {
	bool failed = false;
	while (c < ce) {
		failed = failed || !*s;
		if (*c == '[') {
			int r = 0;
			if (!failed)
				s += decode_rune(s, &r);
			c++;
			bool negated = c < ce && *c == '^', match = false;
			c += negated;
			for (int nrange = 0;; nrange++) {
				if (c < ce && *c == ']' && nrange > 0) {
					c++;
					break;
				}
				int lo, hi;
				if (!get_esc(&c, ce, &lo))
					return -1;
				hi = lo;
				if (*c == '-' && (c++, !get_esc(&c, ce, &hi)))
					return -1;
				match = match || (lo <= r && r <= hi);
			}
			failed = failed || match == negated;
		} else if (*c == '?') {
			if (!failed) {
				int r;
				failed = *s == '/';
				s += decode_rune(s, &r);
			}
			c++;
		} else {
			if (*c == '\\' && ++c >= ce)
				return -1;
			if (!failed) {
				failed = *c != *s;
				s++;
			}
			c++;
		}
	}
	if (failed)
		return 0;
	*rest = s;
	return 1;
}

// scan_chunk splits off the leading stars and the chunk up to the next star outside a class.
static const char *scan_chunk(const char *p, bool *star, const char **chunk_end) {
	*star = false;
	while (*p == '*')
		p++, *star = true;
	bool inrange = false;
	const char *i = p;
	for (; *i; i++) {
		if (*i == '\\' && i[1])
			i++;
		else if (*i == '[')
			inrange = true;
		else if (*i == ']')
			inrange = false;
		else if (*i == '*' && !inrange)
			break;
	}
	*chunk_end = i;
	return p;
}

static int glob_match(const char *pattern, const char *name) {
	while (*pattern) {
		bool star;
		const char *ce, *c = scan_chunk(pattern, &star, &ce), *t;
		pattern = ce;
		if (star && c == ce)
			return strchr(name, '/') == NULL;
		int ok = match_chunk(c, ce, name, &t);
		if (ok == 1 && (!*t || *pattern)) {
			name = t;
			continue;
		}
		if (ok < 0)
			return -1;
		if (star) {
			bool next = false;
			for (const char *i = name; *i && *i != '/'; i++) {
				ok = match_chunk(c, ce, i + 1, &t);
				if (ok == 1) {
					if (!*pattern && *t)
						continue;
					name = t;
					next = true;
					break;
				}
				if (ok < 0)
					return -1;
			}
			if (next)
				continue;
		}
		while (*pattern) { // the rest of the pattern must still be well formed
			c = scan_chunk(pattern, &star, &ce);
			pattern = ce;
			if (match_chunk(c, ce, "", &t) < 0)
				return -1;
		}
		return 0;
	}
	return !*name;
}

// Tokens of a name, in the order they sort at the first difference (see plugins/programfiles).
enum { tok_number, tok_dot, tok_end, tok_text };

static bool digit(char c) { return c >= '0' && c <= '9'; }

static int token(const char *s, int i, int *start, int *next) {
	*start = i;
	if (!s[i])
		return *next = i, tok_end;
	if (digit(s[i])) {
		while (digit(s[i]))
			i++;
		return *next = i, tok_number;
	}
	if (s[i] == '.' && digit(s[i + 1]))
		return *next = i + 1, tok_dot;
	return *next = i + 1, tok_text;
}

// newest_first is programfiles.NewestFirst: negative when a comes before b.
static int newest_first(const char *a, const char *b) {
	const char *la = lower(a), *lb = lower(b);
	for (int i = 0, j = 0;;) {
		int sa, sb, na, nb;
		int ka = token(la, i, &sa, &na), kb = token(lb, j, &sb, &nb);
		if (ka != kb)
			return ka - kb;
		if (ka == tok_end)
			return strcmp(a, b);
		if (ka == tok_number) {
			while (la[sa] == '0' && sa < na)
				sa++;
			while (lb[sb] == '0' && sb < nb)
				sb++;
			if (na - sa != nb - sb)
				return na - sa > nb - sb ? -1 : 1;
			int c = strncmp(la + sa, lb + sb, na - sa);
			if (c)
				return c > 0 ? -1 : 1;
		} else if (ka == tok_text && la[sa] != lb[sb]) {
			return (unsigned char)la[sa] < (unsigned char)lb[sb] ? -1 : 1;
		}
		i = na, j = nb;
	}
}

typedef struct {
	response *rs;
	bool fold;
	strs seen; // every directory found, in order: the dirs to search
} walker;

static bool seen(walker *w, const char *dir) {
	for (int i = 0; i < w->seen.n; i++)
		if (!strcmp(w->seen.v[i], dir))
			return true;
	return false;
}

static bool has_meta(const char *seg) { return strpbrk(seg, "*?[") != NULL; }

// parse splits a glob into its segments, or records why it is refused.
static bool parse_glob(walker *w, const char *g, strs *segs) {
	const char *why = NULL;
	*segs = (strs){0};
	if (!*g || !strcmp(g, "."))
		why = "empty";
	else if (strchr(g, '\\'))
		why = "has a backslash: separate directories with \"/\"";
	else if (path_is_abs(g))
		why = "an absolute path: globs are relative to the Program Files directory";
	else {
		char *copy = dup(g);
		bool dotdot = false;
		for (char *p = copy, *slash;; p = slash + 1) {
			slash = strchr(p, '/');
			if (slash)
				*slash = 0;
			dotdot = dotdot || !strcmp(p, "..");
			push(segs, p);
			if (!slash)
				break;
		}
		if (strcmp(path_clean(g), g) || dotdot)
			why = "not a clean relative path (no \"..\", \".\" or \"//\")";
		else if (glob_match(g, "") < 0)
			why = "a malformed pattern";
	}
	if (why) {
		add_tried(w->rs, g, cat("program_files_dirs_windows entry refused: ", why, NULL));
		return false;
	}
	return true;
}

static const char *child(walker *w, const char *base, const char *name) {
	const char *p = path_join(base, name);
	if (is_dir(p))
		return p;
	if (w->fold) {
		dirent_t *listing;
		const char *why;
		int n = list_dir(base, &listing, &why);
		for (int i = 0; i < n; i++)
			if (equal_fold(listing[i].name, name) && entry_is_dir(base, listing[i]))
				return path_join(base, listing[i].name);
	}
	add_tried(w->rs, p, "no such directory");
	return NULL;
}

// match lists the directories in base whose names match pattern, newest first.
static strs match(walker *w, const char *base, const char *pattern) {
	strs names = {0};
	dirent_t *listing;
	const char *why;
	int n = list_dir(base, &listing, &why);
	if (n < 0) {
		add_tried(w->rs, path_join(base, pattern), cat("cannot list ", base, ": ", why, NULL));
		return names;
	}
	const char *pat = w->fold ? lower(pattern) : pattern;
	for (int i = 0; i < n; i++) {
		const char *name = w->fold ? lower(listing[i].name) : listing[i].name;
		if (glob_match(pat, name) == 1 && entry_is_dir(base, listing[i]))
			push(&names, listing[i].name);
	}
	if (names.n == 0) {
		add_tried(w->rs, path_join(base, pattern), "no directory matches");
		return names;
	}
	for (int i = 1; i < names.n; i++) // insertion sort: stable, and the lists are short
		for (int j = i; j > 0 && newest_first(names.v[j - 1], names.v[j]) > 0; j--) {
			const char *t = names.v[j];
			names.v[j] = names.v[j - 1], names.v[j - 1] = t;
		}
	return names;
}

// walk expands entries (segment lists, in priority order) under base; consecutive entries with the
// same first segment share its expansion, so a newer match is searched with all of its layouts first.
static void walk(walker *w, const char *base, strs *entries, int n) {
	for (int i = 0; i < n;) {
		if (entries[i].n == 0) {
			if (!seen(w, base))
				push(&w->seen, base);
			i++;
			continue;
		}
		const char *seg = entries[i].v[0];
		int j = i + 1;
		while (j < n && entries[j].n > 0 && !strcmp(entries[j].v[0], seg))
			j++;
		strs *tails = alloc((j - i) * sizeof *tails);
		for (int k = i; k < j; k++)
			tails[k - i] = (strs){entries[k].v + 1, entries[k].n - 1, 0};
		int ntails = j - i;
		i = j;
		if (!has_meta(seg)) {
			const char *dir = child(w, base, seg);
			if (dir)
				walk(w, dir, tails, ntails);
			continue;
		}
		strs m = match(w, base, seg);
		for (int k = 0; k < m.n; k++)
			walk(w, path_join(base, m.v[k]), tails, ntails);
	}
}

void search_programfiles(const request *rq, response *rs) {
	strs globs = is_windows(rq) ? expand(rq->platform, rq->library.program_files_dirs_windows) : (strs){0};
	if (globs.n == 0) {
		logf_(cat("no Program Files directories to search for \"", rq->library.name, "\" on ", rq->platform.os, "/", rq->platform.arch, NULL));
		return;
	}
	const char *name = "ProgramW6432";
	if (!*lookup_env(name)) {
		add_tried(rs, "$ProgramW6432", "not set");
		name = "ProgramFiles";
	}
	const char *root = env_dir(rs, name);
	if (!root)
		return;
	walker w = {rs, is_windows(rq), {0}};
	strs *entries = alloc(globs.n * sizeof *entries);
	int n = 0;
	for (int i = 0; i < globs.n; i++)
		if (parse_glob(&w, globs.v[i], &entries[n]))
			n++;
	walk(&w, root, entries, n);
	find(rq, rs, w.seen);
}
