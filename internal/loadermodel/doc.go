// Package loadermodel answers "where would dlopen("libfoo.so.1") find this library?" without loading
// anything: a pure-Go model of the glibc dynamic loader's search (LD_LIBRARY_PATH, /etc/ld.so.cache,
// the default directories, the hwcaps subdirectories, and the ELF checks that make it skip a file).
package loadermodel

// testdata/ld.so.cache* are test data from the real ldconfig, not generated code: TestGoldenCaches
// proves they are current, and go test -run TestGoldenCaches -update rewrites them.
