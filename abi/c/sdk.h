// The guest side of pathfinder's plugin ABI in C against wasi-libc: the shared search (find), paths,
// the sandbox's file system and environment, memory, and the exports (sdk.c). The Go SDK in abi/ is
// the reference; what this copies from it (the version, the request's and response's types and
// JSON, the texts) is generated into contract.h and contract.c by go generate ./abi. A runtime this
// small lets a fresh process compile and start the module in milliseconds (docs/performance.md).
#ifndef PATHFINDER_SDK_H
#define PATHFINDER_SDK_H

#include <stdbool.h>
#include <stddef.h>

#include "contract.h"

// A registered search, as abi.Plugin.
typedef struct {
	const char *name, *version;
	const char *const *env; // the variables it reads; NULL-terminated, or NULL
	void (*search)(const request *, response *);
} plugin;

// The searches this module registers, sorted by name, NULL-terminated. For the builtin module
// go generate ./builtin writes them (builtin/steps_gen.c) from each step's abi.Plugin in Go.
extern const plugin *const plugins[];

// Memory: everything below is allocated from an arena that lives until the next request.
void *alloc(size_t n);
void *grow(void *v, int n, int *cap, size_t elem); // v with room for one more of n elements
char *dup(const char *s);
char *cat(const char *s, ...); // concatenation of NULL-terminated arguments
const char *decimal(long long v);
const char *quote(const char *s); // as Go's %q for ASCII; other valid UTF-8 is kept as is
void push(strs *l, const char *s);
const char *joined(strs l, const char *sep);

// Paths, as Go's package path: "/"-separated, cleaned.
char *path_join(const char *a, const char *b);
char *path_clean(const char *p);
char *path_dir(const char *p);
bool path_is_abs(const char *p);
strs under(const char *root, strs rels); // root joined with each of rels

// The request's platform and descriptor, as abi.Platform's and abi.Descriptor's methods.
bool is_windows(const request *rq);
const char *triple(platform p);
strs expand(platform p, strs dirs); // "{triple}" replaced
strs file_names(const request *rq);
strs anchor_dirs(const request *rq);
strs install_root_dirs(const request *rq);  // abi.Descriptor.InstallRootDirs
strs site_packages_dirs(const request *rq); // abi.Descriptor.SitePackagesDirs
strs conda_dirs(const request *rq);         // abi.Descriptor.CondaDirs

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

void add_candidate(response *rs, const char *path);
void add_tried(response *rs, const char *path, const char *reason);
void add_ignored(response *rs, const char *var, const char *reason); // a granted variable set aside

// find is abi.Find: each dir in order, each declared file name newest first; a dir holding none
// of them is recorded with what it holds.
void find(const request *rq, response *rs, strs dirs);

bool equal_fold(const char *a, const char *b); // ASCII letters fold
char *lower(const char *s);                   // ASCII letters

#endif
