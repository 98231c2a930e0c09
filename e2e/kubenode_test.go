package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/suite"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// kubeNodeRoot is where scripts/kube-node.sh keeps the node (its default).
const kubeNodeRoot = "/var/lib/defect-showcase-kube"

// kubeNode is the single node make kube-up brought up.
type kubeNode struct {
	base, admin string // the forwarded gateway Pod's API and admin port
	pod         string // that Pod
	probe       string // the netprobe image
}

// kubectl runs the node's kubectl as its admin, in the namespace showcase.
func (n kubeNode) kubectl(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	return n.kubectlIn(t, "showcase", stdin, args...)
}

// kubectlIn runs the node's kubectl as its admin, in namespace ns.
func (n kubeNode) kubectlIn(t *testing.T, ns string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(kubeBinDir(), "kubectl"), append([]string{"--kubeconfig", kubeNodeRoot + "/admin.kubeconfig", "-n", ns}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// nodeScript runs scripts/kube-node.sh.
func nodeScript(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("../scripts/kube-node.sh", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kube-node.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The showcase on a real single node (make kube-up), for each overlay in
// turn: every Deployment Available in a namespace enforcing PodSecurity
// restricted, with no warning; the endpoint suite passes through the
// forwarded port; the exposure counts at the forwarded gateway Pod are
// exact for a known sequence of triggers (and, with two gateway replicas,
// the other Pod saw none: its own /defects holds its own, and the sum over
// the Pods is what was sent through the Service); a Pod's DNS queries and
// TCP connections to an address outside the cluster are dropped on the
// node (the fence's counters) and none reaches the host's interfaces (a
// capture); the NetworkPolicies are enforced (kubePolicies); kube-up
// twice says it is up; and after each kube-down, after a kube-up that
// failed half-way and after kube-ups interrupted at several stages, the
// machine's rules, links, routes, mounts, sysctls, cgroups and the paths
// Kubernetes writes (with their files) are as before, and a second kube-up
// works.
func TestKubernetesNode(t *testing.T) {
	requireKubeNode(t)

	tag, before := nodeTestStart(t, "e2e-kube")
	probe := buildProbeImage(t, tag)

	// A kube-up that fails half-way (here: no image with its tag, found
	// after the node, its control plane and containerd are up) takes down
	// what it made.
	t.Run("a failed kube-up leaves nothing", func(t *testing.T) {
		cmd := exec.Command("../scripts/kube-node.sh", "up")
		cmd.Env = append(os.Environ(), "SHOWCASE_TAG=no-such-tag-"+tag, "PORT="+freePort(t), "ADMIN_PORT="+freePort(t))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "no image") || !strings.Contains(string(out), "taking down what it made") {
			t.Fatalf("kube-up with no images: %v\n%s", err, out)
		}
		if d := diffStates(before, hostState(t)); d != "" {
			t.Fatalf("after a failed kube-up the machine differs from before:\n%s\n%s", d, out)
		}
		_ = exec.Command("docker", "rmi", "defect-showcase/pause:no-such-tag-"+tag).Run()
	})

	for i, overlay := range []string{"base", "overlays/embedded", "overlays/defects-off"} {
		name := filepath.Base(overlay)
		ok := t.Run(name, func(t *testing.T) {
			port, admin := freePort(t), freePort(t)
			start := time.Now()
			out := run(t, nil, "make", "-C", "..", "kube-up", "OVERLAY="+name, "PORT="+port, "ADMIN_PORT="+admin, "SHOWCASE_TAG="+tag)
			t.Logf("kube-up %s: %s", name, time.Since(start).Round(time.Second))
			if strings.Contains(strings.ToLower(out), "warning") {
				t.Errorf("kube-up warned:\n%s", out)
			}
			m := regexp.MustCompile(`\(Pod (\S+)\)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("kube-up named no Pod:\n%s", out)
			}
			node := kubeNode{base: "http://127.0.0.1:" + port, admin: "http://127.0.0.1:" + admin, pod: m[1], probe: probe}
			if !strings.Contains(out, node.base) || !strings.Contains(out, "KUBECONFIG="+kubeNodeRoot+"/admin.kubeconfig") {
				t.Errorf("kube-up does not print the URLs and the KUBECONFIG:\n%s", out)
			}
			if i == 0 {
				again := run(t, nil, "make", "-C", "..", "kube-up", "OVERLAY="+name, "SHOWCASE_TAG="+tag)
				if !strings.Contains(again, "already up") {
					t.Errorf("a second kube-up does not say it is up:\n%s", again)
				}
				if d := diffStates(before, hostState(t)); !strings.Contains(d, "showcase-kube") {
					t.Errorf("with the node up, the host's links do not show its veth: the comparison sees nothing\n%s", d)
				}
			}
			active := catalogue.All()
			if name == "defects-off" {
				active = catalogue.None()
			}
			client := &http.Client{Timeout: time.Minute}
			t.Run("suite", func(t *testing.T) { suite.RunFor(t, node.base, client, active) })
			t.Run("exposure", func(t *testing.T) { kubeExposure(t, node, active, name == "base") })
			t.Run("the live board", func(t *testing.T) { checkBoard(t, client, node.admin, name != "embedded") })
			if name == "base" {
				t.Run("nothing leaves the node", func(t *testing.T) { kubeEgress(t, node, "") })
				t.Run("the NetworkPolicies are enforced", func(t *testing.T) { kubePolicies(t, node) })
				t.Run("Prometheus discovers the Pods and reads back a load", func(t *testing.T) { kubeScraped(t, node) })
				t.Run("the autoscaler scales the gateway up and back", func(t *testing.T) { kubeAutoscaled(t, node) })
				t.Run("the disruption budget holds at the Eviction API", func(t *testing.T) { kubeDisruptionBudget(t, node) })
				t.Run("a campaign runs as Kubernetes Jobs", func(t *testing.T) { kubeCampaign(t, node, tag) })
				t.Run("a campaign brings back coverage from its Pods", func(t *testing.T) { kubeCoverage(t, node, tag) })
			}
		})
		down := run(t, nil, "make", "-C", "..", "kube-down")
		if d := diffStates(before, hostState(t)); d != "" {
			t.Fatalf("after kube-down (%s) the machine differs from before kube-up:\n%s\n%s", name, d, down)
		}
		if !ok {
			return
		}
	}

	// kube-up interrupted half-way, as a terminal's Ctrl-C does (SIGINT to
	// make's whole process group) or as a supervisor stops it (SIGTERM to
	// make alone, which passes it on), at several points of its progress:
	// it takes down what it made, and the machine is as before.
	for _, c := range []struct {
		stage string
		sig   syscall.Signal
		group bool
	}{
		{"network", syscall.SIGTERM, false},
		{"control plane", syscall.SIGINT, true},
		{"kubelet", syscall.SIGTERM, false},
		{"firewall", syscall.SIGINT, true},
		{"workload", syscall.SIGTERM, false},
	} {
		t.Run(fmt.Sprintf("%s at %s leaves nothing", c.sig, c.stage), func(t *testing.T) {
			kubeInterrupted(t, tag, c.stage, c.sig, c.group, before)
		})
	}
}

// kubeInterrupted runs make kube-up, sends sig when it says it starts
// stage (to make's process group, or to make alone), and checks that it
// said it was interrupted, took down what it made, and left the machine
// as before.
func kubeInterrupted(t *testing.T, tag, stage string, sig syscall.Signal, group bool, before map[string]string) {
	cmd := exec.Command("make", "-C", "..", "kube-up", "PORT="+freePort(t), "ADMIN_PORT="+freePort(t), "SHOWCASE_TAG="+tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.WaitDelay = 10 * time.Second // a process that kept the pipe open does not hold the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	// However the test ends, nothing of this kube-up runs on.
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			out.Write(append(sc.Bytes(), '\n'))
			if !once && sc.Text() == "kube-node: up: "+stage {
				once = true
				close(seen)
			}
		}
	}()
	select {
	case <-seen:
	case err := <-done:
		t.Fatalf("kube-up ended before it reached %s: %v\n%s", stage, err, out.String())
	case <-time.After(5 * time.Minute):
		t.Fatalf("kube-up did not reach %s in 5 minutes:\n%s", stage, out.String())
	}
	time.Sleep(500 * time.Millisecond) // into the stage
	target := cmd.Process.Pid
	if group {
		target = -target
	}
	if err := syscall.Kill(target, sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("kube-up sent %s exited 0:\n%s", sig, out.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("kube-up sent %s at %s has not ended in 3 minutes:\n%s", sig, stage, out.String())
	}
	name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
	if !strings.Contains(out.String(), "kube-up interrupted by "+name+": taking down what it made") ||
		!strings.Contains(out.String(), "down: nothing of the node is left") {
		t.Errorf("kube-up sent %s at %s does not say it took down what it made:\n%s", sig, stage, out.String())
	}
	if d := diffStates(before, hostState(t)); d != "" {
		t.Fatalf("after kube-up sent %s at %s the machine differs from before:\n%s\n%s", sig, stage, d, out.String())
	}
	if out, err := exec.Command("../scripts/kube-node.sh", "status").CombinedOutput(); err == nil {
		t.Errorf("after kube-up sent %s the node says it is up: %s", sig, out)
	}
}

// kubeExposure: the known sequence of every defect's triggers, sent
// through the forwarded Pod after a reset, is counted there exactly. With
// two gateway replicas (replicated), the other Pod counted none of it, and
// triggers sent through the Service from inside the cluster are spread
// over both: their sum over the Pods is exact.
func kubeExposure(t *testing.T, node kubeNode, active catalogue.Set, replicated bool) {
	client := &http.Client{Timeout: time.Minute}
	reset := func(admin string) {
		t.Helper()
		res, err := client.Post(admin+gateway.PathDefectsReset, "", nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %v %v", gateway.PathDefectsReset, res, err)
		}
		res.Body.Close()
	}
	reset(node.admin)
	for _, def := range catalogue.Defects {
		for _, tr := range def.Triggers {
			c := suite.Trigger(def, tr)
			res, err := suite.Do(t.Context(), client, node.base, c)
			if err != nil {
				t.Fatal(err)
			}
			if active.Active(def.ID) && res.Status != tr.Status || !active.Active(def.ID) && res.Status != tr.OffStatus {
				t.Errorf("%s %s: %d", c.Method, c.Target, res.Status)
			}
		}
	}
	counts := func(admin string) map[catalogue.ID]uint64 {
		t.Helper()
		got := map[catalogue.ID]uint64{}
		for _, e := range defectsOf(t, deployment{admins: []string{admin}}).Defects {
			if e.Exposure != nil {
				got[e.ID] = e.Exposure.Count
			}
		}
		return got
	}
	here := counts(node.admin)
	// The API coverage, counted by the gateway in its Pod as in one process:
	// every operation called, and CONF-04's 404 answered undocumented.
	rep := coverageAt(t, node.admin)
	if c, _ := rep.Criterion(coverage.Operations); c.Covered != len(catalogue.Endpoints) {
		t.Errorf("coverage at the forwarded Pod: operations %d/%d, want all", c.Covered, c.Total)
	}
	var undocumented []string
	if active.Active(catalogue.CONF04) {
		undocumented = []string{"GET " + catalogue.EndpointOf(catalogue.CONF04).Path + " 404"}
	}
	if got := rep.Undocumented(); !slices.Equal(got, undocumented) {
		t.Errorf("coverage at the forwarded Pod: undocumented statuses %q, want %q", got, undocumented)
	}
	for _, def := range catalogue.Defects {
		want := uint64(0)
		if active.Active(def.ID) {
			want = uint64(len(def.Triggers))
		}
		if here[def.ID] != want {
			t.Errorf("%s at the forwarded Pod: %d triggered, want %d", def.ID, here[def.ID], want)
		}
	}
	if !replicated {
		return
	}
	pods := strings.Fields(node.kubectl(t, nil, "get", "pods", "-l", "app.kubernetes.io/name=gateway", "-o", "jsonpath={.items[*].metadata.name}"))
	if len(pods) != 2 || !slices.Contains(pods, node.pod) {
		t.Fatalf("gateway Pods %v, want two with %s", pods, node.pod)
	}
	other := pods[0]
	if other == node.pod {
		other = pods[1]
	}
	otherAdmin := forwardAdmin(t, other)
	reset(otherAdmin)
	if c := counts(otherAdmin); c[catalogue.SEC01] != 0 {
		t.Fatalf("the other gateway Pod counts %v after a reset", c)
	}

	// Through the Service: each request on a new connection, so kube-proxy
	// spreads them over the two Pods; the sum is what a user reads (or
	// Prometheus's sum by (defect)).
	const sent = 20
	target := "http://gateway:8080" + catalogue.EndpointOf(catalogue.SEC01).Path
	r := runProbe(t, node, "netprobe-service", "-n", "0", "-http", target, "-http-n", strconv.Itoa(sent))
	if r.HTTPStatuses["200"] != sent {
		t.Fatalf("through the Service: %v, want %d × 200", r.HTTPStatuses, sent)
	}
	a, b := counts(node.admin)[catalogue.SEC01]-here[catalogue.SEC01], counts(otherAdmin)[catalogue.SEC01]
	if a+b != sent {
		t.Errorf("SEC-01 through the Service: %d at %s and %d at %s, sum %d, want %d", a, node.pod, b, other, a+b, sent)
	}
	t.Logf("SEC-01 through the Service: %d at one Pod, %d at the other", a, b)
}

// forwardAdmin forwards a free loopback port to a Pod's admin port for
// the rest of the test.
func forwardAdmin(t *testing.T, pod string) string {
	t.Helper()
	return portForward(t, "showcase", "pod/"+pod, "9090", "/healthz")
}

// portForward forwards a free loopback port to target's port (kubectl
// port-forward, in namespace ns) for the rest of the test, and returns its
// base URL once GET path answers 200 through it.
func portForward(t *testing.T, ns, target, port, path string) string {
	t.Helper()
	local := freePort(t)
	cmd := exec.Command(filepath.Join(kubeBinDir(), "kubectl"), "--kubeconfig", kubeNodeRoot+"/admin.kubeconfig", "-n", ns,
		"port-forward", "--address", "127.0.0.1", target, local+":"+port)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://127.0.0.1:" + local
	waitStatus(t, &http.Client{Timeout: 5 * time.Second}, base+path, 200, 30*time.Second)
	return base
}

// probeResult is what e2e/netprobe prints.
type probeResult struct {
	OutsideDNS   []string          `json:"outside_dns"`
	OutsideTCP   []string          `json:"outside_tcp"`
	ClusterName  []string          `json:"cluster_name"`
	ClusterErr   string            `json:"cluster_err"`
	OutsideName  string            `json:"outside_name"`
	HTTPStatuses map[string]int    `json:"http_statuses"`
	SuiteSent    int               `json:"suite_sent"`
	SuiteErrors  []string          `json:"suite_errors"`
	TCP          map[string]string `json:"tcp"`
}

// buildProbeImage builds e2e/netprobe into an image FROM scratch.
func buildProbeImage(t *testing.T, tag string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "netprobe"), "./netprobe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./netprobe: %v\n%s", err, out)
	}
	dockerfile := "FROM scratch\nCOPY netprobe /netprobe\nUSER 65532:65532\nENTRYPOINT [\"/netprobe\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	image := "defect-showcase/netprobe:" + tag
	run(t, nil, "docker", "build", "-q", "-t", image, dir)
	return image
}

// runProbe runs netprobe in a Pod of the showcase's namespace (PodSecurity
// restricted) and returns what it printed.
func runProbe(t *testing.T, node kubeNode, name string, args ...string) probeResult {
	t.Helper()
	return runProbeAs(t, node, probePod{name: name, namespace: "showcase"}, args...)
}

// probeRuns counts the probe Pods run, to name each apart.
var probeRuns int

// probePod is where a netprobe Pod runs, and with which labels: on the
// node named (any, where none is).
type probePod struct {
	name, namespace string
	labels          map[string]string
	node            string
}

// runProbeAs runs netprobe in the Pod p (its namespace PodSecurity
// restricted) and returns what it printed.
func runProbeAs(t *testing.T, node kubeNode, p probePod, args ...string) probeResult {
	t.Helper()
	// A name of its own each time: the last Pod of that name may still be
	// going, and an apply would find it instead.
	probeRuns++
	p.name = fmt.Sprintf("%s-%d", p.name, probeRuns)
	nodeScript(t, "load", node.probe)
	quoted, _ := json.Marshal(args)
	labels, _ := json.Marshal(p.labels)
	onNode := ""
	if p.node != "" {
		onNode = "\n  nodeName: " + p.node
	}
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels: %s
spec:%s
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    seccompProfile: {type: RuntimeDefault}
  containers:
    - name: netprobe
      image: %s
      imagePullPolicy: Never
      args: %s
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities: {drop: [ALL]}
`, p.name, labels, onNode, node.probe, quoted)
	if out := node.kubectlIn(t, p.namespace, []byte(pod), "apply", "-f", "-"); strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("the probe Pod warned: %s", out)
	}
	node.kubectlIn(t, p.namespace, nil, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/"+p.name, "--timeout=120s")
	logs := node.kubectlIn(t, p.namespace, nil, "logs", "pod/"+p.name)
	node.kubectlIn(t, p.namespace, nil, "delete", "pod", p.name, "--wait=false")
	var r probeResult
	if err := json.Unmarshal([]byte(logs), &r); err != nil {
		t.Fatalf("netprobe printed %q: %v", logs, err)
	}
	return r
}

var fenceDrop = regexp.MustCompile(`(?m)^\s*(\d+)\s+\d+\s+DROP\b.*pod traffic never leaves the cluster`)

// fenceDropped is the packet count of the fence's DROP rule on the node
// named (the control plane's, where none is).
func fenceDropped(t *testing.T, on string) int {
	t.Helper()
	out := nodeScript(t, onNode(on, "iptables", "-w", "-t", "raw", "-L", "SHOWCASE-FENCE", "-v", "-x", "-n")...)
	m := fenceDrop.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no fence DROP rule in the node %s:\n%s", on, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// onNode are kube-node.sh's arguments to run cmd on the node named: exec
// on the control plane's node (where none is), on NODE on another.
func onNode(name string, cmd ...string) []string {
	if name == "" {
		return append([]string{"exec"}, cmd...)
	}
	return append([]string{"on", name}, cmd...)
}

// kubeEgress: a Pod on the node named (the control plane's, where none
// is) sends DNS queries and TCP connections to an address outside the
// cluster (TEST-NET-3, which no one answers); that node's fence drops
// every one (its counter grows by at least as many packets), a capture on
// every host interface sees none of them, and the node has no default
// route. The same Pod resolves a Service's name through the cluster's
// DNS, and a name outside the cluster is answered "not found" by it, with
// no forward.
func kubeEgress(t *testing.T, node kubeNode, on string) {
	const outside, tries = "203.0.113.7", 3
	if routes := nodeScript(t, onNode(on, "ip", "route", "show", "default")...); strings.TrimSpace(routes) != "" {
		t.Errorf("the node %s has a default route: %s", on, routes)
	}
	capture := filepath.Join(t.TempDir(), "egress.pcap")
	tcpdump := exec.Command("tcpdump", "-i", "any", "-n", "-U", "-w", capture, "host "+outside+" or net 10.244.0.0/16")
	tcpdumpErr := &lockedBuffer{}
	tcpdump.Stderr = tcpdumpErr
	if err := tcpdump.Start(); err != nil {
		t.Fatal(err)
	}
	// Stopped however the test ends (a t.Fatal below included).
	stop := sync.OnceFunc(func() {
		_ = tcpdump.Process.Signal(os.Interrupt)
		_ = tcpdump.Wait()
	})
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tcpdumpErr.String(), "listening on") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	dropped := fenceDropped(t, on)
	r := runProbeAs(t, node, probePod{name: "netprobe-egress", namespace: "showcase", node: on}, "-outside", outside, "-n", strconv.Itoa(tries))
	time.Sleep(time.Second) // the capture's last packets, if any
	stop()
	seen, err := exec.Command("tcpdump", "-n", "-r", capture).Output()
	if err != nil {
		t.Fatalf("tcpdump -r: %v (%s)", err, tcpdumpErr.String())
	}
	if s := strings.TrimSpace(string(seen)); s != "" {
		t.Errorf("packets of the Pod's network or to %s on the host's interfaces:\n%s", outside, s)
	}
	after := fenceDropped(t, on)
	if after-dropped < 2*tries {
		t.Errorf("the fence dropped %d packets, want at least %d (a DNS query and a SYN per try)", after-dropped, 2*tries)
	}
	t.Logf("fence: %d packets dropped; probe: %+v", after-dropped, r)
	for i := range tries {
		if r.OutsideDNS[i] == "answered" || r.OutsideTCP[i] == "connected" {
			t.Errorf("try %d reached %s: DNS %s, TCP %s", i, outside, r.OutsideDNS[i], r.OutsideTCP[i])
		}
	}
	if len(r.ClusterName) == 0 {
		t.Errorf("the Pod could not resolve the gateway's Service: %s", r.ClusterErr)
	}
	if r.OutsideName != "not found" {
		t.Errorf("a name outside the cluster: %s, want not found (answered by the cluster's DNS)", r.OutsideName)
	}
}

// nodePaths are the paths on the host's file system that Kubernetes,
// containerd and the CNI plugins write by default, and the node's root:
// kube-node.sh keeps them the node's own (ROOT, or a private mount).
// kubectl's cache (~/.kube/cache) is among them: the node's kubectl keeps
// it under the node's root (KUBECACHEDIR).
var nodePaths = []string{"/var/lib/kubelet", "/var/lib/cni", "/var/log/pods", "/var/log/containers", "/run/containerd", "/run/netns",
	"/etc/cni", "/opt/cni", "/opt/containerd", "/etc/kubernetes", "/var/lib/kube-router", "/var/run/kube-router", kubeNodeRoot,
	filepath.Join(os.Getenv("HOME"), ".kube")}

// nodePathsPresent are those of nodePaths that exist now.
func nodePathsPresent() []string {
	var present []string
	for _, p := range nodePaths {
		if _, err := os.Lstat(p); err == nil {
			present = append(present, p)
		}
	}
	return present
}

// hostState is what kube-up may change on the machine, by kind: every
// firewall rule (iptables, legacy and nft, and nftables), the links,
// addresses, routes and rules, the mount table, the kernel's settings,
// the cgroup hierarchies' top level, the paths Kubernetes and containerd
// write by default, and the node's processes.
func hostState(t *testing.T) map[string]string {
	t.Helper()
	counters := regexp.MustCompile(`\[\d+:\d+\]|counter packets \d+ bytes \d+`)
	out := func(name string, args ...string) string {
		b, err := exec.Command(name, args...).Output()
		if err != nil {
			return fmt.Sprintf("(%s: %v)", name, err)
		}
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "#") {
				keep = append(keep, counters.ReplaceAllString(l, ""))
			}
		}
		return strings.Join(keep, "\n")
	}
	s := map[string]string{
		"iptables":   out("iptables-save"),
		"ip6tables":  out("ip6tables-save"),
		"nftables":   out("nft", "list", "ruleset"),
		"links":      out("sh", "-c", "ip -o link show | awk '{print $2, $3}'"),
		"addresses":  out("ip", "-o", "addr", "show"),
		"routes":     out("sh", "-c", "ip route show table all; ip -6 route show table all; ip rule; ip -6 rule"),
		"namespaces": out("ip", "netns", "list"),
	}
	if _, err := exec.LookPath("iptables-legacy-save"); err == nil {
		s["iptables-legacy"] = out("iptables-legacy-save")
	}
	// Mount points with their file systems and sources (IDs change).
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	var ms []string
	for _, l := range strings.Split(strings.TrimSpace(string(mounts)), "\n") {
		f := strings.Fields(l)
		if i := slices.Index(f, "-"); i > 4 && i+2 < len(f) {
			ms = append(ms, f[4]+" "+f[i+1]+" "+f[i+2])
		}
	}
	slices.Sort(ms)
	s["mounts"] = strings.Join(ms, "\n")
	// Every kernel setting but counters and randomness.
	volatile := regexp.MustCompile(`^(kernel\.random\.|kernel\.ns_last_pid|kernel\.pty\.nr|fs\.|net\.netfilter\.nf_conntrack_count|kernel\.tainted|vm\.stat|net\.ipv4\.tcp_mem|net\.ipv4\.udp_mem|net\.ipv4\.route\.gc|kernel\.sched_domain|dev\.)`)
	var ks []string
	if b, err := exec.Command("sysctl", "-a").Output(); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !volatile.MatchString(l) {
				ks = append(ks, l)
			}
		}
	}
	s["sysctls"] = strings.Join(ks, "\n")
	var cg []string
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.IsDir() {
				cg = append(cg, filepath.Join(h, e.Name()))
			}
		}
	}
	s["cgroups"] = strings.Join(cg, "\n")
	var paths []string
	for _, p := range nodePaths {
		// Each with what is in it, so that a path an earlier run left
		// does not hide what this one writes into it.
		_ = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err == nil {
				paths = append(paths, path)
			}
			if d != nil && d.IsDir() && strings.Count(path[len(p):], "/") >= 4 {
				return filepath.SkipDir
			}
			return nil
		})
	}
	for _, d := range []string{"/var/lib", "/var/log", "/run", "/opt", "/etc"} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			paths = append(paths, filepath.Join(d, e.Name()))
		}
	}
	s["paths"] = strings.Join(paths, "\n")
	var procs []string
	all, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range all {
		b, _ := os.ReadFile(p)
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, kubeNodeRoot) || strings.Contains(cmd, "kube-node.sh") {
			procs = append(procs, cmd)
		}
	}
	s["processes"] = strings.Join(procs, "\n")
	return s
}

// presentBefore are the nodePaths that existed before the first kube-up:
// a difference names them, as what an earlier run may have left.
var presentBefore []string

// diffStates says, kind by kind, which lines are only before or only
// after, and, where there is a difference, which of the node's paths
// existed before.
func diffStates(before, after map[string]string) string {
	d := diffKinds(before, after)
	if d != "" && len(presentBefore) > 0 {
		d += "present before the first kube-up (left by an earlier run?): " + strings.Join(presentBefore, " ") + "\n"
	}
	return d
}

func diffKinds(before, after map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if before[k] == after[k] {
			continue
		}
		was, is := strings.Split(before[k], "\n"), strings.Split(after[k], "\n")
		fmt.Fprintf(&b, "%s:\n", k)
		for _, l := range was {
			if !slices.Contains(is, l) {
				fmt.Fprintf(&b, "  - %s\n", l)
			}
		}
		for _, l := range is {
			if !slices.Contains(was, l) {
				fmt.Fprintf(&b, "  + %s\n", l)
			}
		}
	}
	return b.String()
}

// kubeScraped: Prometheus in the node (make kube-prometheus, the shipped
// kubernetes-pods job) finds every showcase Pod itself and scrapes it; a
// Pod a scaled Deployment adds becomes a target without a restart. While
// the load test (showcase-load, run in the node) sends its mix to the
// gateway's Service, Prometheus's sum of showcase_http_requests_total over
// the Pods grows by exactly the requests it reports, and its sum by defect
// of showcase_defect_triggered_total by exactly the requests among them
// that trigger each defect (by the ground truth's rules, request by
// request, from the load's raw results).
func kubeScraped(t *testing.T, node kubeNode) {
	promPort := freePort(t)
	cmd := exec.Command("../scripts/kube-node.sh", "prometheus")
	cmd.Env = append(os.Environ(), "PROM_PORT="+promPort)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(strings.ToLower(string(out)), "warning") {
		t.Fatalf("kube-node.sh prometheus: %v\n%s", err, out)
	}
	prom := &promServer{base: "http://127.0.0.1:" + promPort}
	pods := func() int {
		return len(strings.Fields(node.kubectl(t, nil, "get", "pods", "--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].metadata.name}")))
	}
	targetsUp := func(want int) {
		t.Helper()
		prom.waitFor(t, `count(up{job="kubernetes-pods",namespace="showcase"} == 1)`, float64(want))
		prom.waitFor(t, `count(up{job="kubernetes-pods"})`, float64(want))
	}
	targetsUp(pods())
	node.kubectl(t, nil, "scale", "deployment/security-svc", "--replicas=2")
	node.kubectl(t, nil, "rollout", "status", "deployment/security-svc", "--timeout=60s")
	targetsUp(pods())
	prom.waitFor(t, `count(up{job="kubernetes-pods",app_kubernetes_io_name="security-svc"} == 1)`, 2)
	node.kubectl(t, nil, "scale", "deployment/security-svc", "--replicas=1")

	// The counters before the load, once every target has been scraped since
	// the last request.
	total := func() float64 {
		t.Helper()
		s := prom.query(t, `sum(showcase_http_requests_total)`)
		if len(s) != 1 {
			t.Fatalf("sum(showcase_http_requests_total): %v", s)
		}
		return s[0].Value
	}
	byDefect := func() map[string]float64 {
		m := map[string]float64{}
		for _, s := range prom.query(t, `sum by (defect) (showcase_defect_triggered_total)`) {
			m[s.Metric["defect"]] = s.Value
		}
		return m
	}
	time.Sleep(6 * time.Second) // a scrape interval and a little more
	before, beforeDefects := total(), byDefect()

	gatewayIP := strings.TrimSpace(node.kubectl(t, nil, "get", "service", "gateway", "-o", "jsonpath={.spec.clusterIP}"))
	load := buildBinary(t, modulePath+"tools/cmd/showcase-load")
	out := t.TempDir()
	if got := nodeScript(t, "exec", load, "-base", "http://"+gatewayIP+":8080", "-rate", "40", "-duration", "10s", "-quiet", "-out", out); !strings.Contains(got, "100.00 % as specified") {
		t.Fatalf("the load through the Service:\n%s", got)
	}
	var report struct{ Requests uint64 }
	raw, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(raw, &report); err != nil || report.Requests != 400 {
		t.Fatalf("report.json: %v %s", err, raw)
	}
	want := triggersOf(t, filepath.Join(out, "results.bin"))

	prom.waitFor(t, `sum(showcase_http_requests_total)`, before+float64(report.Requests))
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, bad := byDefect(), ""
		for _, d := range catalogue.Defects {
			if n := got[string(d.ID)] - beforeDefects[string(d.ID)]; n != float64(want[d.ID]) {
				bad += fmt.Sprintf(" %s %v (want %d)", d.ID, n, want[d.ID])
			}
		}
		if bad == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("triggered during the load, by Prometheus:%s", bad)
		}
		time.Sleep(time.Second)
	}
	t.Logf("the load: %d requests, by defect %v, all read back from Prometheus", report.Requests, want)

	// The dashboard's picture from these answers: every panel has data.
	picture := filepath.Join(t.TempDir(), "dashboard.png")
	drawn, err := exec.Command(buildBinary(t, modulePath+"tools/cmd/showcase-dashboard"), "-prometheus", prom.base,
		"-dashboard", "../deploy/grafana/showcase-dashboard.json", "-since", "2m", "-o", picture).CombinedOutput()
	if err != nil {
		t.Fatalf("showcase-dashboard: %v\n%s", err, drawn)
	}
	if lines := regexp.MustCompile(`(?m) (\d+) series$`).FindAllStringSubmatch(string(drawn), -1); len(lines) != 7 || strings.Contains(string(drawn), " 0 series") {
		t.Errorf("the dashboard's panels, by Prometheus's answers during the load:\n%s", drawn)
	}
	f, err := os.Open(picture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("the dashboard's picture: %v", err)
	}
}

// triggersOf counts, in a load's raw results, the requests that trigger
// each defect, by the rules of each defect's TriggeredWhen.
func triggersOf(t *testing.T, results string) map[catalogue.ID]int {
	t.Helper()
	f, err := os.Open(results)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defectAt := map[string]catalogue.ID{}
	for _, e := range catalogue.Endpoints {
		defectAt[e.Path] = e.Defect
	}
	n := map[catalogue.ID]int{}
	dec := vegeta.NewDecoder(f)
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return n
		}
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := defectAt[u.Path]
		if !ok {
			continue
		}
		var triggered bool
		switch id {
		case catalogue.SEC01, catalogue.CONF01, catalogue.CONF02, catalogue.CONF03:
			triggered = true // the load sends no key; every answer
		case catalogue.ERR01, catalogue.ERR02, catalogue.ERR03:
			triggered = r.Code == 500
		case catalogue.CONF04:
			triggered = r.Code == 404
		case catalogue.PERF01: // held 100 ms or more: limit from 100 (the load sends integers to 1000)
			limit, err := strconv.Atoi(u.Query().Get("limit"))
			triggered = r.Code == 200 && err == nil && limit >= 100
		case catalogue.PERF02: // 100 ms or more of the slow algorithm: n from 28868
			x, err := strconv.Atoi(u.Query().Get("n"))
			triggered = r.Code == 200 && err == nil && x >= 28868
		}
		if triggered {
			n[id]++
		}
	}
}

// nodeTestStart begins a test that brings the node up: its image tag
// (prefix and the test's PID) and the machine's state before; when the
// test ends, the node is taken down and the images built with that tag
// removed.
func nodeTestStart(t *testing.T, prefix string) (tag string, before map[string]string) {
	t.Helper()
	tag = fmt.Sprintf("%s-%d", prefix, os.Getpid())
	// Every kubectl the test starts keeps its cache with the node, as
	// kube-node.sh's do, not in ~/.kube.
	t.Setenv("KUBECACHEDIR", filepath.Join(kubeNodeRoot, "kube-cache"))
	before = hostState(t)
	// What an earlier run may have left: said, and compared by content
	// (hostState lists these paths' files), so that nothing this run
	// writes into them goes unseen.
	if presentBefore = nodePathsPresent(); len(presentBefore) > 0 {
		t.Logf("before kube-up, paths the node would make exist already (left by an earlier run, or another program's): %s", strings.Join(presentBefore, " "))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("../scripts/kube-node.sh", "down").CombinedOutput(); err != nil {
			t.Errorf("kube-down: %v\n%s", err, out)
		}
		for _, img := range []string{"gateway", "security-svc", "errors-svc", "conformance-svc", "performance-svc", "showcase-agent", "showcase-replay", "pause", "netprobe"} {
			_ = exec.Command("docker", "rmi", "defect-showcase/"+img+":"+tag).Run()
			_ = exec.Command("docker", "rmi", "defect-showcase/"+img+":"+tag+"-cover").Run() // make images COVER=1's
		}
	})
	return tag, before
}

// requireKubeNode: what make kube-up needs (root, a Docker engine, the
// node's programs built and its tools installed) and no node up already;
// skipped without, failed in CI.
func requireKubeNode(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		need(t, "the single-node cluster needs root (namespaces, cgroups, iptables)")
	}
	if exec.Command("docker", "info").Run() != nil {
		need(t, "no Docker engine answers")
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl", "coredns", "metrics-server", "kube-router"} {
		if _, err := os.Stat(filepath.Join(kubeBinDir(), c)); err != nil {
			need(t, c+" is not built (scripts/kube-deps.sh builds it from the Go module proxy)")
		}
	}
	for _, c := range []string{"containerd", "ctr", "runc", "tcpdump", "etcd", "nsenter", "ipset", "envsubst"} {
		requireTool(t, c)
	}
	if out, err := exec.Command("../scripts/kube-node.sh", "status").CombinedOutput(); err == nil {
		need(t, "a node is up already (make kube-down first): "+string(out))
	}
}
