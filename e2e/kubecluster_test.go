package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

// clusterNodes are the nodes of make kube-up NODES=3: the control plane's
// and two workers.
var clusterNodes = []string{"showcase-node", "showcase-worker-1", "showcase-worker-2"}

// workerDaemons are the programs each worker runs in its namespaces.
var workerDaemons = []string{"containerd", "kubelet", "kube-proxy", "kube-router"}

// The showcase on three nodes (make kube-up NODES=3): every node Ready,
// each worker in network and mount namespaces of its own (not the host's,
// not another node's) with its own containerd, kubelet, kube-proxy and
// kube-router, its fence in place and no default route; the showcase's
// Pods spread over more than one node; the endpoint suite passes through
// the forwarded port (the gateway reaches services on other nodes); from
// a Pod on each node, every showcase Pod's admin port (on whichever node)
// and the gateway's Service are reached where the NetworkPolicies allow
// it, and nothing where they do not (so each node's kube-router enforces
// them); a Pod on each worker sends nothing past that worker's fence; a
// campaign of six trials as Jobs (-parallel from the three nodes'
// allocatable CPU) runs on all three, each reference trial detecting all
// ten defects; when a worker is lost as in a power cut (kube-node.sh
// lose), its Node goes NotReady, its Pods are replaced on the other nodes
// and the suite passes again, and the operator's out-of-service taint
// lets Kubernetes finish the Pods left bound to it; after kube-down the
// machine is as before.
func TestKubernetesNodes(t *testing.T) {
	requireKubeNode(t)

	tag, before := nodeTestStart(t, "e2e-nodes")
	probe := buildProbeImage(t, tag)

	port, admin := freePort(t), freePort(t)
	start := time.Now()
	out := run(t, nil, "make", "-C", "..", "kube-up", "NODES=3", "PORT="+port, "ADMIN_PORT="+admin, "SHOWCASE_TAG="+tag)
	t.Logf("kube-up NODES=3: %s", time.Since(start).Round(time.Second))
	if strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("kube-up warned:\n%s", out)
	}
	m := regexp.MustCompile(`\(Pod (\S+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("kube-up named no Pod:\n%s", out)
	}
	if !strings.Contains(out, "kube-node: nodes "+strings.Join(clusterNodes, " ")) {
		t.Errorf("kube-up does not name the three nodes:\n%s", out)
	}
	node := kubeNode{base: "http://127.0.0.1:" + port, admin: "http://127.0.0.1:" + admin, pod: m[1], probe: probe}

	t.Run("three nodes, each of its own", func(t *testing.T) { kubeNodesApart(t, node) })
	// The scheduler places the five Deployments' Pods by the nodes' room
	// alone (their spread is per Deployment): over more than one node, and
	// here, in every run so far, over all three.
	t.Run("the Pods spread over the nodes", func(t *testing.T) {
		on := map[string]int{}
		for _, p := range showcasePods(t, node) {
			on[p.Spec.NodeName]++
		}
		t.Logf("showcase Pods by node: %v", on)
		if len(on) < 2 {
			t.Errorf("every showcase Pod on one node: %v", on)
		}
	})
	client := &http.Client{Timeout: time.Minute}
	t.Run("suite", func(t *testing.T) { suite.RunFor(t, node.base, client, catalogue.All()) })
	t.Run("Pods on every node reach the others, as the policies allow", func(t *testing.T) { kubeAcrossNodes(t, node) })
	for _, w := range clusterNodes[1:] {
		t.Run("nothing leaves "+w, func(t *testing.T) { kubeEgress(t, node, w) })
	}
	t.Run("a campaign's trials spread over the nodes", func(t *testing.T) { kubeCampaignSpread(t, node, tag) })
	t.Run("a worker lost as in a power cut", func(t *testing.T) { kubeNodeLost(t, node, client) })

	down := run(t, nil, "make", "-C", "..", "kube-down")
	if d := diffStates(before, hostState(t)); d != "" {
		t.Fatalf("after kube-down of three nodes the machine differs from before kube-up:\n%s\n%s", d, down)
	}
}

// kubeNodesApart: every node Ready; the three anchors' network and mount
// namespaces differ from each other and from the host's; each worker's
// daemons are alive in its namespaces; no node has a default route, and
// each has its fence in place.
func kubeNodesApart(t *testing.T, node kubeNode) {
	ready := node.kubectl(t, nil, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
	var names []string
	for _, l := range strings.Fields(ready) {
		name, status, _ := strings.Cut(l, "=")
		names = append(names, name)
		if status != "True" {
			t.Errorf("node %s: Ready %s", name, status)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, clusterNodes) {
		t.Errorf("nodes %v, want %v", names, clusterNodes)
	}
	nsOf := func(pid, kind string) string {
		l, err := os.Readlink(filepath.Join("/proc", pid, "ns", kind))
		if err != nil {
			t.Fatalf("namespace %s of %s: %v", kind, pid, err)
		}
		return l
	}
	seen := map[string]string{nsOf("self", "net"): "the host", nsOf("self", "mnt"): "the host"}
	for _, n := range clusterNodes {
		root := kubeNodeRoot
		if n != clusterNodes[0] {
			root = filepath.Join(kubeNodeRoot, "nodes", n)
		}
		anchor := readPid(t, filepath.Join(root, "pids", "node"))
		for _, kind := range []string{"net", "mnt"} {
			ns := nsOf(anchor, kind)
			if other, ok := seen[ns]; ok {
				t.Errorf("%s shares its %s namespace with %s", n, kind, other)
			}
			seen[ns] = n
			if n == clusterNodes[0] {
				continue
			}
			for _, d := range workerDaemons {
				pid := readPid(t, filepath.Join(root, "pids", d))
				if got := nsOf(pid, kind); got != ns {
					t.Errorf("%s's %s (%s) is not in its node's %s namespace", n, d, pid, kind)
				}
			}
		}
		if n != clusterNodes[0] {
			// What a worker costs the machine: its daemons' resident memory.
			var total int
			var each []string
			for _, d := range workerDaemons {
				kb := rssKB(t, readPid(t, filepath.Join(root, "pids", d)))
				total += kb
				each = append(each, fmt.Sprintf("%s %d MiB", d, kb/1024))
			}
			t.Logf("%s's daemons: %d MiB resident (%s)", n, total/1024, strings.Join(each, ", "))
		}
		if routes := nodeScript(t, "on", n, "ip", "route", "show", "default"); strings.TrimSpace(routes) != "" {
			t.Errorf("%s has a default route: %s", n, routes)
		}
		nodeScript(t, "on", n, "iptables", "-w", "-t", "raw", "-C", "PREROUTING", "-i", "cni0", "-j", "SHOWCASE-FENCE")
	}
}

var vmRSS = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`)

// rssKB is a process's resident memory in KiB (VmRSS).
func rssKB(t *testing.T, pid string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	m := vmRSS.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS for %s", pid)
	}
	kb, err := strconv.Atoi(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

// running: the process pid exists and is not a zombie (dead, its parent
// not yet told).
func running(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return false
	}
	// The state follows the command's name, in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// readPid is the PID a kube-node.sh pid file holds, of a live process.
func readPid(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	if !running(pid) {
		t.Fatalf("%s: process %s is not running", file, pid)
	}
	return pid
}

// kubeAcrossNodes: from a Pod on each node, in turn, a Pod labelled as
// Prometheus (another namespace) reaches every showcase Pod's admin port,
// whichever node it is on, and the gateway's Service by its name; a Pod
// that is not the gateway reaches no service's API port and no admin
// port, but does reach the gateway's API (open to all).
func kubeAcrossNodes(t *testing.T, node kubeNode) {
	apis, admins := policyTargets(t, node)
	ns := renderNodeFile(t, "namespace.yaml", "NAMESPACE="+prometheusPod.namespace)
	node.kubectl(t, ns, "apply", "--server-side", "-f", "-")
	gateway := "gateway.showcase.svc.cluster.local:8080"
	for _, n := range clusterNodes {
		prom, other := prometheusPod, otherPod
		prom.node, other.node = n, n
		probeTCP(t, node, prom, "from "+n+", a Pod labelled as Prometheus", append(slices.Clone(admins), gateway), true)
		probeTCP(t, node, other, "from "+n+", a Pod that is not the gateway", slices.Concat(apis, admins), false)
		probeTCP(t, node, other, "from "+n+", a Pod that is not the gateway", []string{gateway}, true)
	}
}

// kubeNodeLost: the worker that does not hold the forwarded gateway Pod is
// lost (kube-node.sh lose): at once none of its processes is left and
// kube-node.sh cannot enter it; within a minute its Node is not Ready and
// tainted unreachable; within two more, every Deployment is Available
// again with as many running Pods as before, none of them on the lost
// node, and the suite passes through the forwarded port. Its old Pods stay
// bound to it (terminating: no kubelet confirms it) until the node is
// tainted out-of-service, as an operator does who knows it is gone; then
// Kubernetes deletes them, and no Pod is left on it.
func kubeNodeLost(t *testing.T, node kubeNode, client *http.Client) {
	forwardedOn := strings.TrimSpace(node.kubectl(t, nil, "get", "pod", node.pod, "-o", "jsonpath={.spec.nodeName}"))
	lost := clusterNodes[2]
	if forwardedOn == lost {
		lost = clusterNodes[1]
	}
	before := len(showcasePods(t, node))
	var onLost []string
	for _, p := range showcasePods(t, node) {
		if p.Spec.NodeName == lost {
			onLost = append(onLost, p.Name)
		}
	}
	t.Logf("losing %s, which runs %v (the forwarded Pod is on %s)", lost, onLost, forwardedOn)
	root := filepath.Join(kubeNodeRoot, "nodes", lost)
	anchor := readPid(t, filepath.Join(root, "pids", "node"))
	start := time.Now()
	if out := nodeScript(t, "lose", lost); !strings.Contains(out, "lost "+lost) {
		t.Errorf("kube-node.sh lose says: %s", out)
	}
	if running(anchor) {
		t.Errorf("the lost node's anchor %s still runs", anchor)
	}
	all, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range all {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), root) {
			t.Errorf("a process of the lost node still runs: %s", strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	if out, err := exec.Command("../scripts/kube-node.sh", "on", lost, "true").CombinedOutput(); err == nil {
		t.Errorf("kube-node.sh enters the lost node: %s", out)
	}

	waitFor := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after %s", what, limit)
			}
			time.Sleep(time.Second)
		}
		t.Logf("%s after %s", what, time.Since(start).Round(time.Second))
	}
	waitFor(lost+" NotReady and tainted unreachable", time.Minute, func() bool {
		out := node.kubectl(t, nil, "get", "node", lost, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.taints[*].key}`)
		return !strings.HasPrefix(out, "True") && strings.Contains(out, "node.kubernetes.io/unreachable")
	})
	waitFor("its Pods replaced on the other nodes", 2*time.Minute, func() bool {
		pods := showcasePods(t, node)
		ready := 0
		for _, p := range pods {
			if p.Spec.NodeName == lost {
				return false
			}
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					ready++
				}
			}
		}
		return ready >= before
	})
	node.kubectl(t, nil, "wait", "--for=condition=Available", "deployment", "--all", "--timeout=60s")
	t.Run("suite", func(t *testing.T) { suite.RunFor(t, node.base, client, catalogue.All()) })

	boundToLost := func() []string {
		return strings.Fields(node.kubectl(t, nil, "get", "pods", "--all-namespaces", "--field-selector", "spec.nodeName="+lost, "-o", "jsonpath={.items[*].metadata.name}"))
	}
	if left := boundToLost(); len(onLost) > 0 && len(left) == 0 {
		t.Errorf("no Pod is left bound to the lost node before it is tainted out-of-service: nothing for the taint to prove")
	}
	node.kubectl(t, nil, "taint", "node", lost, "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute")
	waitFor("the Pods bound to "+lost+" deleted once it is out of service", 2*time.Minute, func() bool { return len(boundToLost()) == 0 })
}

// kubeCampaignSpread: the repository's experiment file, 3 trials of each
// tool, as Jobs with the runner's -parallel left to the nodes' allocatable
// CPU (the admin's kubeconfig lists the nodes): every trial runs, each
// reference trial detects all ten, and the trials ran on all three nodes.
func kubeCampaignSpread(t *testing.T, node kubeNode, tag string) {
	runnerBin, err := filepath.Abs("../bin/showcase-trials")
	if err != nil {
		t.Fatal(err)
	}
	node.kubectlIn(t, trialsNS, nil, "apply", "--server-side", "-k", "../deploy/k8s/trials")
	t.Cleanup(func() {
		node.kubectlIn(t, trialsNS, nil, "delete", "namespace", trialsNS, "--wait=true", "--timeout=120s")
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "experiment.yaml")
	writeFile(t, file, campaignFile(t, tag, 3, "1m"))
	out := filepath.Join(dir, "kube")
	start := time.Now()
	said := runTrials(t, nil, runnerBin, "-experiment", file, "-on", "kube", "-kubeconfig", kubeNodeRoot+"/admin.kubeconfig", "-namespace", trialsNS, "-out", out)
	t.Logf("3+3 trials as Jobs on three nodes: %s", time.Since(start).Round(time.Second))
	on := map[string]int{}
	for _, kt := range loadTrials(t, out) {
		on[kt.Node]++
		if !kt.Ran() || kt.Where != "kube" {
			t.Errorf("%s trial %d: not run %q, where %q", kt.Tool, kt.Number, kt.NotRun, kt.Where)
		}
		if kt.Tool == "replay" && len(detectedIDs(kt)) != 10 {
			t.Errorf("%s trial %d on %s: detected %v, want all ten", kt.Tool, kt.Number, kt.Node, detectedIDs(kt))
		}
	}
	t.Logf("trials by node: %v", on)
	for _, n := range clusterNodes {
		if on[n] == 0 {
			t.Errorf("no trial ran on %s: %v\n%s", n, on, said)
		}
	}
	leftBy(t, node, runOf(t, said), "")
}
