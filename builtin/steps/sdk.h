// The guest side of pathfinder's plugin ABI (version 1) in C against wasi-libc: the request and
// response, the shared search (find), paths, the sandbox's file system and environment. The Go SDK in
// abi/ is the reference; this is the same contract with a runtime small enough that a fresh process
// compiles and starts it in milliseconds (docs/performance.md).
#ifndef PATHFINDER_SDK_H
#define PATHFINDER_SDK_H

#include <stdbool.h>
#include <stddef.h>

// A list of strings, in order.
typedef struct {
	const char **v;
	int n, cap;
} strs;

typedef struct {
	const char *os, *arch; // GOOS and GOARCH spellings
} platform;

// A descriptor; field names follow abi.Library.
typedef struct {
	const char *name;
	strs linux_sonames, windows_dlls, linux_files, windows_files;
	strs conda_rel_dirs_linux, conda_rel_dirs_windows;
	strs site_packages_linux, site_packages_windows;
	strs anchor_rel_dirs_linux, anchor_rel_dirs_windows;
	strs install_root_env_vars, install_root_rel_dirs;
	strs canary_anchors, program_files_dirs_windows;
} library;

typedef struct {
	const char *path, *role;
} root;

typedef struct {
	int abi;
	const char *step, *entry, *kind;
	platform platform;
	library library;
	root *roots;
	int nroots;
} request;

typedef struct {
	const char *path, *found_via, *note;
} candidate;

typedef struct {
	const char *path, *reason;
} attempt;

typedef struct {
	candidate *candidates;
	int ncandidates, capcandidates;
	attempt *tried;
	int ntried, captried;
	const char *error;
} response;

// A registered search, as abi.Plugin.
typedef struct {
	const char *name;
	const char *const *env; // NULL-terminated
	void (*search)(const request *, response *);
} plugin;

// The searches this module registers (steps.c), sorted by name, NULL-terminated.
extern const plugin *const plugins[];

// Memory: everything below is allocated from an arena that lives until the next request.
void *alloc(size_t n);
char *dup(const char *s);
char *cat(const char *s, ...); // concatenation of NULL-terminated arguments
void push(strs *l, const char *s);
const char *joined(strs l, const char *sep);

// Paths, as Go's package path: "/"-separated, cleaned.
char *path_join(const char *a, const char *b);
char *path_clean(const char *p);
char *path_dir(const char *p);
bool path_is_abs(const char *p);

bool is_windows(const request *rq);
const char *triple(platform p);
strs expand(platform p, strs dirs); // "{triple}" replaced
strs file_names(const request *rq);
strs anchor_dirs(const request *rq);

// The sandbox.
bool is_dir(const char *p);
typedef struct {
	const char *name;
	unsigned char type; // a DT_ value
} dirent_t;
// list_dir lists p sorted by name; on failure it returns -1 and sets *why ("no such file or directory").
int list_dir(const char *p, dirent_t **out, const char **why);
bool entry_is_dir(const char *base, dirent_t e);
const char *lookup_env(const char *name); // "" when unset
// env_dir returns the directory named by the variable, or NULL after recording why not (abi.Env.EnvDir).
const char *env_dir(response *rs, const char *name);
// system_resolve asks the host where the OS loader would find name; NULL and *why on failure.
const char *system_resolve(const char *name, const char **why);
void logf_(const char *s); // one line to the host's trace

void add_candidate(response *rs, const char *path, const char *found_via, const char *note);
void add_tried(response *rs, const char *path, const char *reason);

// find is abi.Find: each dir in order, each declared file name newest first.
void find(const request *rq, response *rs, strs dirs, const char *found_via);

bool equal_fold(const char *a, const char *b); // ASCII letters fold
char *lower(const char *s);                   // ASCII letters

#endif
