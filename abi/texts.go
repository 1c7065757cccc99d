package abi

//go:generate go run ./internal/cgen

// What the SDK writes into a response or the trace, word for word the same in both SDKs: the C SDK's
// copy (abi/c/contract.h and contract.c) is generated from these by go generate ./abi. Verbs: %s, %q
// and %d only.
const (
	textVersionMismatch = "abi version mismatch: host %d, plugin %d"
	textNoSuchSearch    = "no search named %q in this plugin"
	textNoSuchSearchHas = "no search named %q in this plugin (has %s)"
	textBadRequest      = "bad request: %s"
	textNotGranted      = "not granted by the host's config"
	textEmptyName       = "empty name"
	textLoaderNotFound  = "the system loader would not find it"
	textHostAnswered    = "host answered %d"
	textNotSet          = "not set"
	textRelativeEnvDir  = "$%s is a relative path: refused, never resolved against the working directory"
	textNoSuchDirectory = "no such directory"
	textIsDirectory     = "is a directory"
	textNoneOf          = "none of %s"
	textItHolds         = "; it holds %s"
	textAndMore         = ", and %d more"
	textItIsEmpty       = "; it is empty"
	textSearched        = "searched %s"
)
