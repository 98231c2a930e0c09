package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// kubeVersion is the Kubernetes whose kube-apiserver and
// kube-controller-manager scripts/test-deps.sh builds from the Go module
// proxy (e2e/kubeplane) into kubeBinDir.
const kubeVersion = "v1.34.2"

// kubeBinDir is where the control plane's binaries are cached between runs.
func kubeBinDir() string {
	if d := os.Getenv("SHOWCASE_KUBE_BIN"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "defect-showcase", "kube-"+kubeVersion)
}

// kustomizations are every kustomization users apply.
var kustomizations = []string{"base", "overlays/embedded", "overlays/defects-off"}

// controlPlane is a kube-apiserver and a kube-controller-manager on
// loopback, over an etcd of their own; kubectl talks to it with a token.
type controlPlane struct {
	kubectlPath, kubeconfig string
}

// startControlPlane starts etcd, kube-apiserver (PodSecurity admission on,
// as by default) and kube-controller-manager (the deployment, replicaset
// and serviceaccount controllers) on free loopback ports; the test's end
// stops them.
func startControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	bin := kubeBinDir()
	apiserver, manager := filepath.Join(bin, "kube-apiserver"), filepath.Join(bin, "kube-controller-manager")
	for _, p := range []string{apiserver, manager} {
		if _, err := os.Stat(p); err != nil {
			need(t, p+" is not built (scripts/test-deps.sh builds it from the Go module proxy)")
		}
	}
	etcd := requireTool(t, "etcd")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	start := func(name string, args ...string) {
		t.Helper()
		logFile, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
			logFile.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logFile.Name())
				t.Logf("%s's log, the end:\n%s", name, tail(string(b), 3000))
			}
		})
	}

	clientPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + clientPort
	start("etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+peerPort, "--initial-advertise-peer-urls", "http://127.0.0.1:"+peerPort,
		"--initial-cluster", "default=http://127.0.0.1:"+peerPort)
	waitStatus(t, &http.Client{Timeout: time.Second}, etcdURL+"/health", 200, 30*time.Second)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	saKey := write("sa.key", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	saPub := write("sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	token := fmt.Sprintf("showcase-%d", time.Now().UnixNano())
	tokens := write("tokens.csv", []byte(token+",admin,admin,system:masters\n"))
	start("kube-apiserver", apiserver, "--etcd-servers", etcdURL, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", apiPort, "--cert-dir", filepath.Join(dir, "certs"), "--token-auth-file", tokens,
		"--authorization-mode", "RBAC", "--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saPub, "--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.96.0.0/16", "--endpoint-reconciler-type", "none")
	server := "https://127.0.0.1:" + apiPort
	cp := &controlPlane{kubectlPath: requireTool(t, "kubectl"), kubeconfig: write("kubeconfig", []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: local, context: {cluster: local, user: admin}}]
current-context: local
`, server, token)))}
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, err := cp.kubectl(nil, "get", "--raw", "/readyz")
		if err == nil && strings.TrimSpace(out) == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver not ready: %v %s", err, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
	start("kube-controller-manager", manager, "--kubeconfig", cp.kubeconfig, "--controllers", "deployment-controller,replicaset-controller,serviceaccount-controller",
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "0")
	return cp
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// kubectl runs the machine's kubectl against the control plane; its
// standard error comes back in the error, or, on success, after the output.
func (cp *controlPlane) kubectl(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(cp.kubectlPath, append([]string{"--kubeconfig", cp.kubeconfig, "--cache-dir", filepath.Join(filepath.Dir(cp.kubeconfig), "kube-cache")}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String() + stderr.String(), nil
}

// restrictedNamespace makes a namespace that enforces, warns and audits
// PodSecurity restricted: deploy/kube-node/namespace.yaml, the node's own.
func (cp *controlPlane) restrictedNamespace(t *testing.T, name string) {
	t.Helper()
	ns := renderNodeFile(t, "namespace.yaml", "NAMESPACE="+name)
	if out, err := cp.kubectl([]byte(ns), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatal(err, out)
	}
}

// documents splits a multi-document YAML stream into objects.
func documents(t *testing.T, stream string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(stream, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		objs = append(objs, o)
	}
	return objs
}

func objectKey(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	return fmt.Sprintf("%s/%s", o["kind"], md["name"])
}

// subset says where want (a manifest) is not found in got (the object the
// API server keeps, with its defaults and status added): "" when every
// field of want is in got with the same value.
func subset(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + ": not an object"
		}
		for k, v := range w {
			if d := subset(v, g[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %d elements written, %v read back", path, len(w), got)
		}
		for i := range w {
			if d := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(fmt.Sprint(want), fmt.Sprint(got)) {
		return fmt.Sprintf("%s: wrote %v, read back %v", path, want, got)
	}
	return ""
}

// Every kustomization builds with the kubectl on the machine and with the
// kustomize CLI (the same objects from both), and on a real control plane
// is admitted under PodSecurity restricted with no warning, reads back as
// written, and rolls out: each Deployment's ReplicaSet creates its Pods
// (Pending: there is no node), none refused. A pod template without the
// restricted security context is refused there, so the test can fail.
func TestKubernetesOnAControlPlane(t *testing.T) {
	kubectl, kustomize := requireTool(t, "kubectl"), requireTool(t, "kustomize")
	built := map[string]string{}
	for _, k := range kustomizations {
		dir := "../deploy/k8s/" + k
		fromKubectl, err := exec.Command(kubectl, "kustomize", dir).Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v", dir, err)
		}
		fromCLI, err := exec.Command(kustomize, "build", dir).Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		a, b := map[string]map[string]any{}, map[string]map[string]any{}
		for _, o := range documents(t, string(fromKubectl)) {
			a[objectKey(o)] = o
		}
		for _, o := range documents(t, string(fromCLI)) {
			b[objectKey(o)] = o
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: kubectl kustomize and kustomize build make different objects: %v and %v", k, keys(a), keys(b))
		}
		built[k] = string(fromKubectl)
	}

	cp := startControlPlane(t)
	for i, k := range kustomizations {
		t.Run(k, func(t *testing.T) {
			ns := fmt.Sprintf("showcase-%d", i)
			cp.restrictedNamespace(t, ns)
			out, err := cp.kubectl(nil, "apply", "--server-side", "--validate=strict", "-n", ns, "-k", "../deploy/k8s/"+k)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.ToLower(out), "warning") {
				t.Errorf("applying %s warned:\n%s", k, out)
			}
			objs := documents(t, built[k])
			replicas := map[string]int{}
			for _, o := range objs {
				md := o["metadata"].(map[string]any)
				got, err := cp.kubectl(nil, "get", "-n", ns, "-o", "json", strings.ToLower(o["kind"].(string)), md["name"].(string))
				if err != nil {
					t.Errorf("%s: %v", objectKey(o), err)
					continue
				}
				var back map[string]any
				if err := json.Unmarshal([]byte(got), &back); err != nil {
					t.Fatal(err)
				}
				if d := subset(o, back, objectKey(o)); d != "" {
					t.Errorf("does not read back as written: %s", d)
				}
				if o["kind"] == "Deployment" {
					n := 1
					if r, ok := o["spec"].(map[string]any)["replicas"].(float64); ok {
						n = int(r)
					}
					replicas[md["name"].(string)] = n
				}
			}
			if len(replicas) == 0 {
				t.Fatal("no Deployment")
			}
			cp.waitForPods(t, ns, replicas, "")
		})
	}

	// The negative control: the gateway's Deployment without its security
	// contexts warns on apply, and its Pods are refused.
	t.Run("a pod template without the restricted security context", func(t *testing.T) {
		ns := "showcase-unsafe"
		cp.restrictedNamespace(t, ns)
		var gw map[string]any
		for _, o := range documents(t, built["overlays/embedded"]) {
			if o["kind"] == "Deployment" {
				gw = o
			}
		}
		pod := gw["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		delete(pod, "securityContext")
		for _, c := range pod["containers"].([]any) {
			delete(c.(map[string]any), "securityContext")
		}
		manifest, _ := json.Marshal(gw)
		out, err := cp.kubectl(manifest, "apply", "--server-side", "-n", ns, "-f", "-")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "violate PodSecurity") {
			t.Errorf("no PodSecurity warning on apply:\n%s", out)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			events, _ := cp.kubectl(nil, "get", "events", "-n", ns, "-o", "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
			if strings.Contains(events, "FailedCreate") && strings.Contains(events, "violates PodSecurity") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the unsafe pods were not refused; events:\n%s", events)
			}
			time.Sleep(500 * time.Millisecond)
		}
		if pods, _ := cp.kubectl(nil, "get", "pods", "-n", ns, "-o", "name"); strings.TrimSpace(pods) != "" {
			t.Errorf("unsafe pods were created: %s", pods)
		}
	})
}

// waitForPods waits until each Deployment has a ReplicaSet that created
// its Pods, and fails at once on a refusal. replicas is by the Pods'
// app.kubernetes.io/name; the Deployments are named prefix+that.
func (cp *controlPlane) waitForPods(t *testing.T, ns string, replicas map[string]int, prefix string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		events, _ := cp.kubectl(nil, "get", "events", "-n", ns, "-o", "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
		for _, line := range strings.Split(events, "\n") {
			if strings.HasPrefix(line, "FailedCreate") {
				t.Fatalf("a Pod was refused: %s", line)
			}
		}
		out, err := cp.kubectl(nil, "get", "pods", "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.labels.app\\.kubernetes\\.io/name} {.status.phase}{\"\\n\"}{end}")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[1] == "Pending" {
				got[f[0]]++
			}
		}
		rs, _ := cp.kubectl(nil, "get", "replicasets", "-n", ns, "-o", "name")
		complete := true
		for name, n := range replicas {
			if got[name] != n || !strings.Contains(rs, "replicaset.apps/"+prefix+name+"-") {
				complete = false
			}
		}
		if complete {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Pods Pending by Deployment: %v, want %v; ReplicaSets:\n%s", got, replicas, rs)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
