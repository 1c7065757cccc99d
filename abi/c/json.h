// JSON for the SDK: a parser into a tree of values and a writer, enough for the request, the
// response and the description (contract.c, generated, maps them onto the contract's types).
#ifndef PATHFINDER_JSON_H
#define PATHFINDER_JSON_H

#include <stddef.h>

#include "contract.h"

struct json {
	char type; // o(bject) a(rray) s(tring) n(umber) t(rue) f(alse) z (null)
	const char *s;
	long long num;
	struct json **items;
	const char **keys;
	int n, cap, capkeys;
};

// json_parse parses the whole of [p, p+n); NULL and *err on a syntax error or trailing data.
json *json_parse(const char *p, size_t n, const char **err);

// Members of an object, by key: NULL, "", 0, false or empty unless o is an object holding key with a
// value of that type.
const json *json_get(const json *o, const char *key);
const char *json_str(const json *o, const char *key);
int json_int(const json *o, const char *key);
bool json_bool(const json *o, const char *key);
strs json_strs(const json *o, const char *key);      // the array's strings; other values skipped
strmap json_strmap(const json *o, const char *key); // the object's string members; others skipped

// A growing output buffer, in the request's arena.
struct buffer {
	char *b;
	size_t n, cap;
};

void put_raw(buffer *o, const char *s);
void put_string(buffer *o, const char *s); // a JSON string, as encoding/json writes it; NULL is ""
void put_int(buffer *o, long long v);
void put_strs(buffer *o, strs l);
// PUT_ARRAY writes the n structs of items as a JSON array, each by encode (encode_candidate, ...): C
// has no generic function that could take every contract type's encoder.
#define PUT_ARRAY(o, items, n, encode)             \
	do {                                       \
		put_raw(o, "[");                   \
		for (int i_ = 0; i_ < (n); i_++) { \
			if (i_)                    \
				put_raw(o, ",");   \
			encode(o, &(items)[i_]);   \
		}                                  \
		put_raw(o, "]");                   \
	} while (0)
// put_key writes *sep ('{' before the first member, then ',') and "key":. put_end closes the object.
void put_key(buffer *o, char *sep, const char *key);
void put_end(buffer *o, char sep);

#endif
