// JSON for the SDK (json.h): what the request and the response need, in the request's arena.
#include "json.h"

#include <stdint.h>
#include <string.h>

#include "sdk.h"

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
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
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

json *json_parse(const char *p, size_t n, const char **err) {
	parser ps = {p, p + n, NULL};
	json *j = parse_value(&ps, 0);
	if (j && (skip_space(&ps), ps.p != ps.end))
		j = NULL, ps.err = "data after the top-level value";
	*err = ps.err;
	return j;
}

const json *json_get(const json *o, const char *key) {
	if (!o || o->type != 'o')
		return NULL;
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

const char *json_str(const json *o, const char *key) {
	const json *v = json_get(o, key);
	return v && v->type == 's' ? v->s : "";
}

int json_int(const json *o, const char *key) {
	const json *v = json_get(o, key);
	return v && v->type == 'n' ? (int)v->num : 0;
}

bool json_bool(const json *o, const char *key) {
	const json *v = json_get(o, key);
	return v && v->type == 't';
}

strs json_strs(const json *o, const char *key) {
	strs out = {0};
	const json *v = json_get(o, key);
	if (v && v->type == 'a')
		for (int i = 0; i < v->n; i++)
			if (v->items[i]->type == 's')
				push(&out, v->items[i]->s);
	return out;
}

strmap json_strmap(const json *o, const char *key) {
	strmap out = {0};
	const json *v = json_get(o, key);
	if (v && v->type == 'o')
		for (int i = 0; i < v->n; i++)
			if (v->items[i]->type == 's')
				push(&out.keys, v->keys[i]), push(&out.values, v->items[i]->s);
	return out;
}

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

void put_raw(buffer *o, const char *s) { put(o, s, strlen(s)); }

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

void put_string(buffer *o, const char *s) {
	static const char hex[] = "0123456789abcdef";
	put(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
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
				put_raw(o, "\\ufffd"), n = 1;
			else
				put(o, (const char *)p, n);
			p += n;
		}
	}
	put(o, "\"", 1);
}

// quote is Go's strconv.Quote for ASCII and for invalid UTF-8 (as \x escapes); other characters are
// kept as they are, where Go escapes the few that Unicode calls unprintable.
const char *quote(const char *s) {
	static const char hex[] = "0123456789abcdef", named[] = "\a\b\f\n\r\t\v", letters[] = "abfnrtv";
	char *out = alloc(4 * strlen(s) + 3), *w = out;
	*w++ = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		const char *e = strchr(named, *p);
		int n = utf8_len(p);
		if (*p == '"' || *p == '\\')
			*w++ = '\\', *w++ = *p++;
		else if (e)
			*w++ = '\\', *w++ = letters[e - named], p++;
		else if (*p < 0x20 || *p == 0x7f || n == 0)
			*w++ = '\\', *w++ = 'x', *w++ = hex[*p >> 4], *w++ = hex[*p & 15], p++;
		else
			while (n--)
				*w++ = *p++;
	}
	*w++ = '"';
	return out;
}

void put_int(buffer *o, long long v) { put_raw(o, decimal(v)); }

void put_strs(buffer *o, strs l) {
	put(o, "[", 1);
	for (int i = 0; i < l.n; i++) {
		if (i)
			put(o, ",", 1);
		put_string(o, l.v[i]);
	}
	put(o, "]", 1);
}

void put_key(buffer *o, char *sep, const char *key) {
	put(o, sep, 1);
	*sep = ',';
	put(o, "\"", 1);
	put_raw(o, key);
	put(o, "\":", 2);
}

void put_end(buffer *o, char sep) { put_raw(o, sep == '{' ? "{}" : "}"); }
