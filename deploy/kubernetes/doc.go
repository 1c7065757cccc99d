// Package kubernetes holds pathfinder's Kubernetes deployment: the DaemonSet that labels GPU nodes
// beside node-feature-discovery, and the Containerfile of its image. It is a module of its own, so
// the library's importers do not inherit k8s.io/api, which only its test uses.
package kubernetes
