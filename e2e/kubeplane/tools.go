//go:build tools

// Package kubeplane pins the Kubernetes control plane the manifest test
// runs: kube-apiserver and kube-controller-manager (and kubectl where the
// machine has none), built from the Go module proxy by
// scripts/test-deps.sh. It is a module of its own, outside the workspace:
// k8s.io/kubernetes is not meant to be required, so each of its staging
// modules is replaced by the published k8s.io module of the same minor
// version, and none of that reaches the showcase's own modules.
package kubeplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
