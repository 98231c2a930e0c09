//go:build release

package e2e_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// releasedImages are the programs a release publishes an image of.
var releasedImages = []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc", "showcase-agent", "showcase-replay"}

func shortCommit(t *testing.T, repo string) string {
	t.Helper()
	return strings.TrimSpace(runIn(t, repo, "git", "rev-parse", "--short=7", "HEAD"))
}

// startRegistry runs the CNCF distribution registry (scripts/release-deps.sh
// builds it) with deploy/release/registry.yml on addr, its storage in root,
// until stop or the test's end; it returns once /v2/ answers.
func startRegistry(t *testing.T, addr, root string) (stop func()) {
	t.Helper()
	bin := requireTool(t, "registry")
	cfg, err := filepath.Abs("../deploy/release/registry.yml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Env = append(os.Environ(), "REGISTRY_HTTP_ADDR="+addr, "REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY="+root, "OTEL_TRACES_EXPORTER=none")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry on %s did not answer: %v\n%s", addr, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkReleaseImages: make release-images pushes one OCI image index per program
// (linux/amd64 and linux/arm64), each image the program's binary from the
// release alone, on nothing, run as 65532; each is signed with a key made
// here and its SBOM attested, both verified by cosign, and a signature
// checked with another key fails. It returns the digests by program.
func checkReleaseImages(t *testing.T, clone, reg, tag string) map[string]string {
	cosign := requireTool(t, "cosign")
	keys := t.TempDir()
	cmd := exec.Command(cosign, "generate-key-pair")
	cmd.Dir = keys
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=rehearsal")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	out := run(t, []string{"COSIGN_KEY=" + filepath.Join(keys, "cosign.key"), "COSIGN_PASSWORD=rehearsal"},
		"make", "-C", clone, "--no-print-directory", "release-images", "IMAGE_REPO="+reg+"/defect-showcase", "IMAGE_VERSION="+tag, "INSECURE=1")
	list, err := os.ReadFile(filepath.Join(clone, "dist", "images", "images.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bins := releaseBinaries(t, filepath.Join(clone, "dist"))
	digests := map[string]string{}
	for _, ref := range strings.Fields(string(list)) {
		// REGISTRY/defect-showcase/PROGRAM:TAG@DIGEST
		named, digest, _ := strings.Cut(ref, "@")
		prog, _, _ := strings.Cut(named[strings.LastIndex(named, "/")+1:], ":")
		digests[prog] = digest
		if !strings.Contains(out, "signed, SBOM attested, both verified: "+ref) {
			t.Errorf("%s: make release-images did not sign and verify it:\n%s", ref, out)
		}
		r, err := name.ParseReference(ref, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(r)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var platforms []string
		for _, d := range im.Manifests {
			p := d.Platform.OS + "/" + d.Platform.Architecture
			platforms = append(platforms, p)
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Config.User != "65532:65532" || cf.OS+"/"+cf.Architecture != p || len(cf.Config.Entrypoint) != 1 {
				t.Errorf("%s %s: user %q, platform %s/%s, entrypoint %v", ref, p, cf.Config.User, cf.OS, cf.Architecture, cf.Config.Entrypoint)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("%s %s: %d layers (%v), want the binary's alone", ref, p, len(layers), err)
			}
			rc, err := layers[0].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			files := map[string][]byte{}
			tr := tar.NewReader(rc)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if h.Typeflag == tar.TypeReg {
					b, _ := io.ReadAll(tr)
					files["/"+h.Name] = b
				}
			}
			rc.Close()
			bin := files[cf.Config.Entrypoint[0]]
			if len(files) != 1 || bin == nil || !bytes.Equal(bin, bins[prog][p]) {
				t.Errorf("%s %s: the layer holds %d files; its entrypoint %s is the release's %s binary: %v", ref, p, len(files), cf.Config.Entrypoint[0], p, bin != nil && bytes.Equal(bin, bins[prog][p]))
			}
		}
		if strings.Join(platforms, " ") != "linux/amd64 linux/arm64" {
			t.Errorf("%s: platforms %v", ref, platforms)
		}
	}
	for _, want := range releasedImages {
		if digests[want] == "" {
			t.Errorf("no image of %s pushed: %v", want, digests)
		}
	}
	// The negative control: another key does not verify the signature.
	other := t.TempDir()
	cmd = exec.Command(cosign, "generate-key-pair")
	cmd.Dir = other
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=other")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	gw := reg + "/defect-showcase/gateway@" + digests["gateway"]
	if out, err := exec.Command(cosign, "verify", "--key", filepath.Join(other, "cosign.pub"), "--insecure-ignore-tlog=true", "--trusted-root", "../deploy/release/cosign-trusted-root.json", "--allow-http-registry", "--allow-insecure-registry", gw).CombinedOutput(); err == nil {
		t.Errorf("cosign verified the gateway's signature with a key that did not make it:\n%s", out)
	}
	return digests
}

// releaseBinaries are goreleaser's linux binaries: program → os/arch → bytes.
func releaseBinaries(t *testing.T, dist string) map[string]map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "artifacts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var arts []struct {
		Type, Path, Goos, Goarch string
		Extra                    struct{ Binary string }
	}
	if err := json.Unmarshal(data, &arts); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]byte{}
	for _, a := range arts {
		if a.Type != "Binary" || a.Goos != "linux" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(dist), a.Path))
		if err != nil {
			t.Fatal(err)
		}
		if out[a.Extra.Binary] == nil {
			out[a.Extra.Binary] = map[string][]byte{}
		}
		out[a.Extra.Binary][a.Goos+"/"+a.Goarch] = b
	}
	return out
}

// checkChart: make release-chart lints the chart, packages it at the
// release's version and pushes it to the registry as an OCI chart, which
// helm reads back from there.
func checkChart(t *testing.T, clone, reg, tag string) {
	helm := requireTool(t, "helm")
	run(t, nil, "make", "-C", clone, "--no-print-directory", "release-chart", "CHART_REPO=oci://"+reg+"/charts", "IMAGE_VERSION="+tag, "INSECURE=1")
	out, err := exec.Command(helm, "show", "chart", "oci://"+reg+"/charts/defect-showcase", "--version", strings.TrimPrefix(tag, "v"), "--plain-http").CombinedOutput()
	if err != nil {
		t.Fatalf("helm show chart from the registry: %v\n%s", err, out)
	}
	for _, want := range []string{"name: defect-showcase", "version: " + strings.TrimPrefix(tag, "v"), "appVersion: " + tag} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the chart in the registry says no %q:\n%s", want, out)
		}
	}
}

// checkChartOnNode: on make kube-up's node (OVERLAY=none: nothing loaded
// but its pause image, REGISTRY: containerd may pull from the registry on
// the host's end of the node's link), helm installs the chart from the
// registry into a namespace of its own (not default) enforcing PodSecurity
// restricted, every image by digest; the Pods run those digests; the
// endpoint suite passes through the chart's Service; helm test passes;
// helm uninstall leaves nothing of the release; and after kube-down the
// machine is as before.
func checkChartOnNode(t *testing.T, reg, regRoot, tag string, digests map[string]string) {
	requireKubeNode(t)
	helm := requireTool(t, "helm")
	t.Setenv("KUBECACHEDIR", filepath.Join(kubeNodeRoot, "kube-cache"))
	before := hostState(t)
	nodeTag := fmt.Sprintf("e2e-helm-%d", os.Getpid())
	const hostIP = "10.243.255.1" // the host's end of the node's link (kube-node.sh)
	nodeReg := hostIP + ":" + freePort(t)
	t.Cleanup(func() {
		if out, err := exec.Command("../scripts/kube-node.sh", "down").CombinedOutput(); err != nil {
			t.Errorf("kube-down: %v\n%s", err, out)
		}
		for _, img := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc", "showcase-agent", "showcase-replay", "pause"} {
			_ = exec.Command("docker", "rmi", "defect-showcase/"+img+":"+nodeTag).Run()
		}
	})
	start := time.Now()
	out := run(t, nil, "make", "-C", "..", "kube-up", "OVERLAY=none", "REGISTRY="+nodeReg, "SHOWCASE_TAG="+nodeTag, "PORT="+freePort(t), "ADMIN_PORT="+freePort(t))
	t.Logf("kube-up OVERLAY=none: %s", time.Since(start).Round(time.Second))
	if !strings.Contains(out, "pulling from "+nodeReg) {
		t.Errorf("kube-up does not say where the node pulls from:\n%s", out)
	}
	// The same registry's storage (regRoot, reg's), served where the node
	// reaches it.
	stopNodeReg := startRegistry(t, nodeReg, regRoot)

	env := []string{"KUBECONFIG=" + kubeNodeRoot + "/admin.kubeconfig"}
	const ns, rel = "showcase-helm", "showcase"
	node := kubeNode{}
	node.kubectlIn(t, ns, renderNodeFile(t, "namespace.yaml", "NAMESPACE="+ns), "apply", "--server-side", "-f", "-")
	args := []string{"install", rel, "oci://" + reg + "/charts/defect-showcase", "--version", strings.TrimPrefix(tag, "v"), "--plain-http",
		"-n", ns, "--wait", "--timeout", "5m", "--set", "image.repository=" + nodeReg + "/defect-showcase"}
	for prog, d := range digests {
		args = append(args, "--set", "image.digests."+prog+"="+d)
	}
	out = run(t, env, helm, args...)
	if strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("helm install warned:\n%s", out)
	}
	pods := node.kubectlIn(t, ns, nil, "get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.labels.app\.kubernetes\.io/name} {.spec.containers[0].image} {.status.containerStatuses[0].imageID}{"\n"}{end}`)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(pods), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Errorf("pod line %q", line)
			continue
		}
		seen[f[0]] = true
		want := nodeReg + "/defect-showcase/" + f[0] + "@" + digests[f[0]]
		if f[1] != want || !strings.HasSuffix(f[2], "@"+digests[f[0]]) {
			t.Errorf("%s runs %s (%s), want %s by digest", f[0], f[1], f[2], want)
		}
	}
	for _, p := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc"} {
		if !seen[p] {
			t.Errorf("no Pod of %s: %s", p, pods)
		}
	}

	base := portForward(t, ns, "svc/"+rel+"-gateway", "8080", "/openapi.yaml")
	t.Run("suite", func(t *testing.T) { suite.RunFor(t, base, &http.Client{Timeout: time.Minute}, catalogue.All()) })

	// The test Pod (showcase-replay -check: it exits non-zero unless every
	// planted defect's requests are answered) is deleted once it succeeds
	// (hook-succeeded), so its logs cannot be asked for (--logs); one that
	// fails stays, to be read.
	out = run(t, env, helm, "test", rel, "-n", ns, "--timeout", "3m")
	if !strings.Contains(out, "TEST SUITE:     "+rel+"-test") || !strings.Contains(out, "Phase:          Succeeded") {
		t.Errorf("helm test:\n%s", out)
	}
	run(t, env, helm, "uninstall", rel, "-n", ns, "--wait", "--timeout", "3m")
	// What is left once the Pods' garbage collection and termination are
	// done: the namespace's own ServiceAccount and CA bundle only.
	var ours []string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		left := node.kubectlIn(t, ns, nil, "get", "all,configmaps,secrets,networkpolicies,poddisruptionbudgets,horizontalpodautoscalers,serviceaccounts,endpointslices", "-o", "name")
		ours = ours[:0]
		for _, l := range strings.Fields(left) {
			if l != "serviceaccount/default" && l != "configmap/kube-root-ca.crt" {
				ours = append(ours, l)
			}
		}
		if len(ours) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(ours) > 0 {
		t.Errorf("helm uninstall left %v", ours)
	}
	if out := run(t, env, helm, "list", "-n", ns, "-a", "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("helm list after uninstall: %s", out)
	}

	stopNodeReg()
	down := run(t, nil, "make", "-C", "..", "kube-down")
	if d := diffStates(before, hostState(t)); d != "" {
		t.Fatalf("after kube-down the machine differs from before kube-up:\n%s\n%s", d, down)
	}
}
