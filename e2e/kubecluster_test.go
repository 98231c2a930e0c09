package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

	"github.com/chromedp/chromedp"

	corev1 "k8s.io/api/core/v1"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/judge/trials"
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
	t.Run("three gateway replicas on three nodes answer as one", func(t *testing.T) { kubeReplicasAsOne(t, node, client) })
	t.Run("a campaign's trials spread over the nodes", func(t *testing.T) { kubeCampaignSpread(t, node, tag) })
	t.Run("a runner killed twice and resumed", func(t *testing.T) { kubeRunnerResumed(t, node, tag) })
	t.Run("a worker lost as in a power cut, under running trials", func(t *testing.T) { kubeTrialsOnLostNode(t, node, client, tag) })

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
func kubeNodeLost(t *testing.T, node kubeNode, client *http.Client, lost string) {
	forwardedOn := strings.TrimSpace(node.kubectl(t, nil, "get", "pod", node.pod, "-o", "jsonpath={.spec.nodeName}"))
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

// kubeTrialsOnLostNode: six trials of a slow tool (the weak replay trying
// every defect, pausing up to 20 s before each, stopped at its 1-minute
// budget) run as Jobs, two on each node; a worker that runs some of them
// (not the one whose Pod the test's port is forwarded to) is lost as in a
// power cut, and the rest of kubeNodeLost follows. Each trial that was
// running there is recorded with its lost attempt (that node, its Pod
// evicted by the node's taint) and runs again as a new attempt on a node
// that is up once the operator's out-of-service taint lets Kubernetes
// count the lost Pod failed; it is scored from that attempt alone. Every
// trial runs; the report, the progress and the live page (in Chromium)
// show the lost attempts; the runner's cleanup does not hang on the lost
// node, and nothing of the run is left.
func kubeTrialsOnLostNode(t *testing.T, node kubeNode, client *http.Client, tag string) {
	runnerBin, dir := trialsOnNodes(t, node)
	file := filepath.Join(dir, "experiment.yaml")
	writeFile(t, file, replayExperiment(tag, "trials: 6\nbudget: 1m\nretries: 2\n", [2]string{"slow", slowArgs}))
	out := filepath.Join(dir, "kube")
	start := time.Now()
	cmd, said := startTrials(t, runnerBin, "-experiment", file, "-on", "kube", "-kubeconfig", kubeNodeRoot+"/admin.kubeconfig",
		"-namespace", trialsNS, "-parallel", "6", "-out", out)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	run := waitRun(t, said)

	// A worker with trials running, not the forwarded Pod's.
	forwardedOn := strings.TrimSpace(node.kubectl(t, nil, "get", "pod", node.pod, "-o", "jsonpath={.spec.nodeName}"))
	var lost string
	for deadline := time.Now().Add(3 * time.Minute); lost == "" && time.Now().Before(deadline); time.Sleep(time.Second) {
		running := map[string][]string{}
		rows := node.kubectlIn(t, trialsNS, nil, "get", "pods", "-l", "trials.defect-showcase.org/run="+run,
			"-o", `jsonpath={range .items[*]}{.spec.nodeName} {.metadata.name} {.status.containerStatuses[?(@.name=="tool")].state.running.startedAt}{"\n"}{end}`)
		for _, l := range strings.Split(rows, "\n") {
			if f := strings.Fields(l); len(f) == 3 {
				running[f[0]] = append(running[f[0]], f[1])
			}
		}
		for _, w := range clusterNodes[1:] {
			if w != forwardedOn && len(running[w]) > 0 {
				lost = w
				break
			}
		}
	}
	if lost == "" {
		t.Fatalf("no trial ran on a worker within 3 minutes:\n%s", said.String())
	}
	// Every trial Pod bound there goes with it, started or not.
	lostPods := strings.Fields(node.kubectlIn(t, trialsNS, nil, "get", "pods", "-l", "trials.defect-showcase.org/run="+run,
		"--field-selector", "spec.nodeName="+lost, "-o", "jsonpath={.items[*].metadata.name}"))
	t.Logf("trials on %s after %s: %v", lost, time.Since(start).Round(time.Second), lostPods)
	pending := trialPendingOn(t, node, runnerBin, dir, tag, lost)
	kubeNodeLost(t, node, client, lost)
	pending.workerGone = true

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("showcase-trials: %v\n%s", err, said.String())
		}
	case <-time.After(8 * time.Minute):
		t.Fatalf("the campaign did not end within 8 minutes of the operator's taint:\n%s", said.String())
	}
	t.Logf("the campaign ended %s after it started", time.Since(start).Round(time.Second))
	ts := loadTrials(t, out)
	if len(ts) != 6 {
		t.Fatalf("%d trials, want 6:\n%s", len(ts), said.String())
	}
	again := 0
	for _, kt := range ts {
		name := fmt.Sprintf("trial %d", kt.Number)
		if !kt.Ran() || len(kt.Attempts) == 0 {
			t.Errorf("%s: not run %q, attempts %+v", name, kt.NotRun, kt.Attempts)
			continue
		}
		last := kt.Attempts[len(kt.Attempts)-1]
		if last.Ended != trials.AttemptRan || last.Node != kt.Node || last.Pod != kt.Pod || kt.Node == lost {
			t.Errorf("%s: scored from attempt %+v; recorded on node %s, Pod %s", name, last, kt.Node, kt.Pod)
		}
		for _, a := range kt.Attempts[:len(kt.Attempts)-1] {
			if a.Ended != trials.AttemptLost || a.Node != lost || !slices.Contains(lostPods, a.Pod) || !strings.Contains(a.Why, "DeletionByTaintManager") {
				t.Errorf("%s: an attempt before the last: %+v (the Pods on %s: %v)", name, a, lost, lostPods)
			}
		}
		if kt.Lost() > 0 {
			again++
			if kt.Outcome != "stopped at the budget" || kt.Detected() == 0 || kt.Seconds < 55 {
				t.Errorf("%s, run again: %s after %.0f s, detected %d", name, kt.Outcome, kt.Seconds, kt.Detected())
			}
			if _, err := os.Stat(filepath.Join(out, kt.Dir, "attempts", "1", "server.log")); err != nil {
				t.Errorf("%s: the lost attempt's log is not kept: %v", name, err)
			}
		}
	}
	if again != len(lostPods) {
		t.Errorf("%d trials ran again, %d were on %s (%v)", again, len(lostPods), lost, lostPods)
	}
	if !strings.Contains(said.String(), "attempt 1 lost on node "+lost) {
		t.Errorf("the runner did not say an attempt was lost:\n%s", said.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "attempt 1 was lost on node "+lost+", and is not scored") {
		t.Errorf("report.md does not name the lost attempts (%v)", err)
	}
	var p trials.Progress
	readJSON(t, filepath.Join(out, trials.ProgressFile), &p)
	lostShown := 0
	for _, tp := range p.Trials {
		if len(tp.Attempts) > 0 {
			lostShown++
		}
	}
	if lostShown != again {
		t.Errorf("the progress shows lost attempts for %d trials, want %d", lostShown, again)
	}
	kubeLostOnPage(t, runnerBin, out, lost)
	leftBy(t, node, run, "after a node was lost under it")
	pending.check(t, node, lost)
}

// pendingTrial is a campaign of one reference trial whose Pod was bound to
// a worker, and had not started, when the worker was lost.
type pendingTrial struct {
	said       *syncLog
	out, run   string
	pod        string
	exited     chan error
	workerGone bool // the worker is lost: its containerd is no more, nothing to let go
}

// trialPendingOn starts a campaign of one reference trial (retries 2)
// whose Pod is bound to worker and held there before it starts: the
// worker's containerd is stopped (SIGSTOP, as on a node that is dying, so
// that its kubelet makes nothing of the Pod), and the other nodes are
// cordoned until the scheduler has bound the Pod to it.
func trialPendingOn(t *testing.T, node kubeNode, runnerBin, dir, tag, worker string) *pendingTrial {
	t.Helper()
	p := &pendingTrial{out: filepath.Join(dir, "pending"), exited: make(chan error, 1)}
	pid, err := strconv.Atoi(readPid(t, filepath.Join(kubeNodeRoot, "nodes", worker, "pids", "containerd")))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping %s's containerd: %v", worker, err)
	}
	// Let go again if the test ends before the worker is lost (then the
	// PID is no longer the containerd's: nothing to do).
	t.Cleanup(func() {
		if !p.workerGone {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	var others []string
	for _, n := range clusterNodes {
		if n != worker {
			others = append(others, n)
		}
	}
	node.kubectl(t, nil, append([]string{"cordon"}, others...)...)
	uncordon := sync.OnceFunc(func() { node.kubectl(t, nil, append([]string{"uncordon"}, others...)...) })
	t.Cleanup(uncordon)

	file := filepath.Join(dir, "pending.yaml")
	writeFile(t, file, replayExperiment(tag, "trials: 1\nbudget: 1m\nretries: 2\n", [2]string{"quick", ""}))
	cmd, said := startTrials(t, runnerBin, "-experiment", file, "-on", "kube", "-kubeconfig", kubeNodeRoot+"/admin.kubeconfig",
		"-namespace", trialsNS, "-parallel", "1", "-out", p.out)
	p.said = said
	go func() { p.exited <- cmd.Wait() }()
	p.run = waitRun(t, said)
	var phase string
	for deadline := time.Now().Add(2 * time.Minute); p.pod == ""; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the pending trial's Pod not bound to %s within 2 minutes:\n%s\n%s", worker, said.String(),
				node.kubectlIn(t, trialsNS, nil, "get", "pods", "-o", "wide"))
		}
		f := strings.Fields(node.kubectlIn(t, trialsNS, nil, "get", "pods", "-l", "trials.defect-showcase.org/run="+p.run,
			"-o", `jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase}{"\n"}{end}`))
		if len(f) == 3 && f[1] == worker {
			p.pod, phase = f[0], f[2]
		}
	}
	uncordon()
	// Held: a few seconds on, its tool has still not started.
	time.Sleep(3 * time.Second)
	state := node.kubectlIn(t, trialsNS, nil, "get", "pod", p.pod, "-o", `jsonpath={.status.phase} {.status.containerStatuses[?(@.name=="tool")].state}`)
	if phase != "Pending" || !strings.HasPrefix(state, "Pending") || strings.Contains(state, "running") || strings.Contains(state, "terminated") {
		t.Fatalf("the pending trial's Pod %s on %s: %s, then %q; want Pending, its tool not started", p.pod, worker, phase, state)
	}
	t.Logf("the pending trial's Pod %s is bound to %s, Pending, its tool not started", p.pod, worker)
	return p
}

// check: the pending trial's campaign ends of itself; its one trial ran,
// scored from its second attempt on another node, detecting what the
// reference detects on an idle node (all ten); its first attempt is
// listed lost on the lost worker, before it started, in Kubernetes'
// words, with no start and nothing kept of it; and nothing of the run is
// left.
func (p *pendingTrial) check(t *testing.T, node kubeNode, lost string) {
	t.Helper()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("showcase-trials of the pending trial: %v\n%s", err, p.said.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the pending trial's campaign did not end:\n%s", p.said.String())
	}
	ts := loadTrials(t, p.out)
	if len(ts) != 1 {
		t.Fatalf("%d trials, want 1:\n%s", len(ts), p.said.String())
	}
	kt := ts[0]
	if !kt.Ran() || len(kt.Attempts) != 2 {
		t.Fatalf("the pending trial: not run %q, attempts %+v\n%s", kt.NotRun, kt.Attempts, p.said.String())
	}
	first, last := kt.Attempts[0], kt.Attempts[1]
	if first.Ended != trials.AttemptLost || first.Node != lost || first.Pod != p.pod || first.Start != nil ||
		!strings.HasPrefix(first.Why, "before it started: DeletionByTaintManager") {
		t.Errorf("its first attempt: %+v; want lost on %s, Pod %s, before it started (its node's taint)", first, lost, p.pod)
	}
	if last.Ended != trials.AttemptRan || last.Node == lost || last.Node != kt.Node || last.Pod != kt.Pod || last.Pod == p.pod {
		t.Errorf("its second attempt: %+v; recorded on node %s, Pod %s", last, kt.Node, kt.Pod)
	}
	if got := detectedIDs(kt); len(got) != len(catalogue.Defects) {
		t.Errorf("run again on %s, it detected %v; want all ten, as on an idle node", kt.Node, got)
	}
	if _, err := os.Stat(filepath.Join(p.out, kt.Dir, "attempts")); err == nil {
		t.Errorf("an attempt that never started left logs in attempts/")
	}
	if !strings.Contains(p.said.String(), "attempt 1 lost on node "+lost+": before it started: ") {
		t.Errorf("the runner did not say the attempt was lost before it started:\n%s", p.said.String())
	}
	md, err := os.ReadFile(filepath.Join(p.out, "report.md"))
	if err != nil || !strings.Contains(string(md), "attempt 1 was lost on node "+lost+", and is not scored") {
		t.Errorf("report.md does not name the lost attempt (%v)", err)
	}
	t.Logf("the pending trial: attempt 1 %s on %s, attempt 2 ran on %s", first.Why, first.Node, last.Node)
	leftBy(t, node, p.run, "after its node was lost before it started")
}

// kubeRunnerResumed: a campaign of three tools, two trials each, three at
// a time, with -ttl 20s: "quick" (the reference replay, seconds), "medium"
// (the weak replay trying every defect, pausing up to 3 s before each:
// about 15 s) and "slow" (pausing up to 20 s: stopped at its 30 s budget).
// The runner is killed with SIGKILL once both quick trials are collected
// and slow 1 runs (medium 1 and 2 running, slow 2 not started), and
// started again with -resume once both medium Jobs have ended: the quick
// trials' records are kept byte for byte, the medium trials (ended while
// no runner was there) are collected, slow 1 is taken up again running,
// and slow 2 started. A second -resume while it runs is refused, naming
// the holder. It is killed again once slow 2 runs, and resumed only once
// slow 2's Job has ended and gone at its TTL: slow 2 is recorded with that
// lost attempt (its result went with its Job) and runs again. In the end
// every trial is there once, scored, the reference detecting all ten
// mutants of its set (each trial plants a mutant set: trial n of every
// tool mutants:<40+n-1>, so that -resume and Jobs carry mutant sets too,
// and report.md gives the mutation score);
// run.json records the three starts; the report names what was lost; and
// nothing of the run is left.
func kubeRunnerResumed(t *testing.T, node kubeNode, tag string) {
	runnerBin, dir := trialsOnNodes(t, node)
	file := filepath.Join(dir, "experiment.yaml")
	writeFile(t, file, replayExperiment(tag, "trials: 2\nbudget: 30s\ndefects: mutants\nmutant_seed: 40\n",
		[2]string{"quick", `-defects, "{defects}", `}, [2]string{"medium", `-defects, "{defects}", -weak, -p, "1", -pause, 3s, -seed, "{seed}", `},
		[2]string{"slow", `-defects, "{defects}", ` + slowArgs}))
	out := filepath.Join(dir, "kube")
	kubeconfig := kubeNodeRoot + "/admin.kubeconfig"
	cmd, said := startTrials(t, runnerBin, "-experiment", file, "-on", "kube", "-kubeconfig", kubeconfig,
		"-namespace", trialsNS, "-parallel", "3", "-ttl", "20s", "-out", out)
	run := waitRun(t, said)
	job := func(tool string, n int) string { return fmt.Sprintf("trial-%s-%s-%02d", run, tool, n) }
	record := func(tool string, n int) string {
		return filepath.Join(out, tool, fmt.Sprintf("trial-%02d", n), trials.RecordFile)
	}
	until := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(limit); !ok(); time.Sleep(500 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s\n%s", what, limit, said.String())
			}
		}
	}
	toolRunning := func(j string) bool {
		return strings.TrimSpace(node.kubectlIn(t, trialsNS, nil, "get", "pods", "-l", "trials.defect-showcase.org/job="+j,
			"-o", `jsonpath={.items[*].status.containerStatuses[?(@.name=="tool")].state.running.startedAt}`)) != ""
	}
	jobEnded := func(j string) bool {
		return node.kubectlIn(t, trialsNS, nil, "get", "job", j, "--ignore-not-found", "-o", "jsonpath={.status.succeeded}") == "1"
	}
	jobGone := func(j string) bool {
		return strings.TrimSpace(node.kubectlIn(t, trialsNS, nil, "get", "job", j, "--ignore-not-found", "-o", "name")) == ""
	}
	exists := func(f string) bool { _, err := os.Stat(f); return err == nil }

	until("both quick trials collected and slow 1 running", 3*time.Minute, func() bool {
		return exists(record("quick", 1)) && exists(record("quick", 2)) && toolRunning(job("slow", 1))
	})
	kept := map[string][]byte{}
	for _, n := range []int{1, 2} {
		b, err := os.ReadFile(record("quick", n))
		if err != nil {
			t.Fatal(err)
		}
		kept[record("quick", n)] = b
	}
	if exists(record("medium", 1)) || exists(record("slow", 1)) {
		t.Fatalf("medium 1 or slow 1 collected before the runner was killed: the test's timing does not hold\n%s", said.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("runner killed: %s", strings.TrimSpace(node.kubectlIn(t, trialsNS, nil, "get", "jobs", "-l", "trials.defect-showcase.org/run="+run, "-o", "name")))
	until("both medium Jobs ended with no runner", 2*time.Minute, func() bool { return jobEnded(job("medium", 1)) && jobEnded(job("medium", 2)) })

	cmd, said = startTrials(t, runnerBin, "-resume", out, "-kubeconfig", kubeconfig, "-ttl", "20s")
	until("slow 2 running under the resumed runner", 2*time.Minute, func() bool { return toolRunning(job("slow", 2)) })
	second := exec.Command(runnerBin, "-resume", out, "-kubeconfig", kubeconfig)
	if b, err := second.CombinedOutput(); err == nil || !strings.Contains(string(b), "is in use by another showcase-trials (pid "+strconv.Itoa(cmd.Process.Pid)+")") {
		t.Errorf("a second -resume while one runs: %v\n%s", err, b)
	}
	for _, want := range []string{"medium trial 1: re-attached to Job", "medium trial 2: re-attached to Job", "slow trial 1: re-attached to Job", "slow trial 2: starting as Job"} {
		if !strings.Contains(said.String(), want) {
			t.Errorf("the resumed runner did not say %q:\n%s", want, said.String())
		}
	}
	if strings.Contains(said.String(), "quick trial") {
		t.Errorf("the resumed runner took up a quick trial, collected before:\n%s", said.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	until("slow 2's Job ended and gone at its TTL, no runner there", 3*time.Minute, func() bool { return jobGone(job("slow", 2)) })

	start := time.Now()
	cmd, said = startTrials(t, runnerBin, "-resume", out, "-kubeconfig", kubeconfig, "-ttl", "20s")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the third runner: %v\n%s", err, said.String())
	}
	t.Logf("the third runner finished the campaign in %s", time.Since(start).Round(time.Second))
	if !strings.Contains(said.String(), "slow trial 2: its Job was gone when the runner came back") {
		t.Errorf("the third runner did not say slow 2's Job was gone:\n%s", said.String())
	}

	ts := loadTrials(t, out)
	if len(ts) != 6 {
		t.Fatalf("%d trials, want 6", len(ts))
	}
	for _, kt := range ts {
		name := fmt.Sprintf("%s trial %d", kt.Tool, kt.Number)
		// Trial n of every tool planted the same set, seed 40+n-1, its
		// ten mutants each recorded with its operator and depth.
		if want := fmt.Sprintf("mutants:%d", 40+kt.Number-1); kt.Defects != want {
			t.Errorf("%s planted %q, want %s", name, kt.Defects, want)
		}
		if !kt.Ran() || len(kt.Stages) != catalogue.DefaultMutants {
			t.Errorf("%s: not run %q, %d stages", name, kt.NotRun, len(kt.Stages))
		}
		for _, st := range kt.Stages {
			if !catalogue.IsMutantID(st.ID) || st.Operator == "" || st.Depth == nil {
				t.Errorf("%s: stage %+v is not a mutant's", name, st)
			}
		}
		if kt.Tool == "quick" && len(detectedIDs(kt)) != catalogue.DefaultMutants {
			t.Errorf("%s: detected %v, want all ten mutants", name, detectedIDs(kt))
		}
		if kt.Tool == "medium" && (kt.Lost() != 0 || kt.Outcome != "finished") {
			t.Errorf("%s, ended while no runner was there: %s, attempts %+v", name, kt.Outcome, kt.Attempts)
		}
	}
	for f, b := range kept {
		if now, err := os.ReadFile(f); err != nil || !bytes.Equal(now, b) {
			t.Errorf("%s changed after it was collected (%v)", f, err)
		}
	}
	slow2, err := trials.ReadRecord(out, filepath.Join("slow", "trial-02"))
	if err != nil {
		t.Fatal(err)
	}
	if slow2.Lost() != 1 || slow2.Attempts[0].Pod != "" || !strings.Contains(slow2.Attempts[0].Why, "its Job was gone when the runner came back") {
		t.Errorf("slow 2's attempts: %+v", slow2.Attempts)
	}
	prov, err := trials.ReadProvenance(out)
	if err != nil || prov == nil || len(prov.Starts) != 3 || prov.Run != run || !prov.Starts[0].Equal(prov.Start) {
		t.Errorf("run.json: %+v %v", prov, err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "Trial 2's attempt 1 was lost, and is not scored: its Job was gone when the runner came back") {
		t.Errorf("report.md does not say what was lost (%v)", err)
	}
	// The mutation score over the two sets: the reference's 20 of 20,
	// each tool's survivors in the three groups.
	for _, want := range []string{"## Mutation score", "(2 sets: mutants:40, mutants:41)", "| quick | 2 | 20/20 = 100 % (84–100 %)", "| quick | all | 0 | 0 | 0 |", "| slow | all |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	leftBy(t, node, run, "after the third runner")
}

// trialsOnNodes readies a campaign on the nodes: the runner (built by
// make kube-up), the trials' namespace and Role (deploy/k8s/trials,
// deleted when the test ends), and a folder for the run.
func trialsOnNodes(t *testing.T, node kubeNode) (runnerBin, dir string) {
	t.Helper()
	runnerBin, err := filepath.Abs("../bin/showcase-trials")
	if err != nil {
		t.Fatal(err)
	}
	node.kubectlIn(t, trialsNS, nil, "apply", "--server-side", "-k", "../deploy/k8s/trials")
	t.Cleanup(func() {
		node.kubectlIn(t, trialsNS, nil, "delete", "namespace", trialsNS, "--wait=true", "--timeout=120s")
	})
	return runnerBin, t.TempDir()
}

// slowArgs make showcase-replay a slow tool: the weak tool trying every
// defect, pausing up to 20 s before each (stopped at any budget below
// about a minute and a half).
const slowArgs = `-weak, -p, "1", -pause, 20s, -seed, "{seed}", `

// replayExperiment is an experiment file of the images at tag: head
// (trials, budget, …), then each tool by name, showcase-replay with its
// arguments (YAML flow items, each followed by ", ") before -base.
func replayExperiment(tag, head string, tools ...[2]string) string {
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "resources: {cpu: 200m, memory: 256Mi}\nshowcase: {image: defect-showcase/gateway:%[1]s, agent: defect-showcase/showcase-agent:%[1]s}\ntools:\n", tag)
	for _, tl := range tools {
		fmt.Fprintf(&b, "  - name: %s\n    image: defect-showcase/showcase-replay:%s\n    command: [showcase-replay, %s-base, \"{url}\", -out, \"{out}/report.csv\"]\n    report: report.csv\n", tl[0], tag, tl[1])
	}
	return b.String()
}

// kubeLostOnPage: the run's page (showcase-trials -watch) in Chromium
// says, of each trial run again, that its first attempt was lost there.
func kubeLostOnPage(t *testing.T, runnerBin, out, lost string) {
	chromium := findChromium(t)
	page := watchPage(t, runnerBin, out)
	trap := startTrap(t)
	b := newBrowser(t, chromium, trap.URL)
	b.do(t, "open the run's page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#trials li.trial")))
	want := "1 attempt lost, not scored (attempt 1 on " + lost + ": DeletionByTaintManager"
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`Array.from(document.querySelectorAll("#trials li.trial")).some(li => li.textContent.includes(`+strconv.Quote(want)+`))`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Errorf("the page does not show the lost attempt %q: %v\n%s", want, err, get(t, b, "the trials", chromedp.Evaluate[string](`document.querySelector("#trials").innerText`)))
	}
	b.checkStayedOnLoopback(t, trap, 3)
}

// kubeCampaignSpread: the repository's experiment file, 3 trials of each
// tool, as Jobs with the runner's -parallel left to the nodes' allocatable
// CPU (the admin's kubeconfig lists the nodes): every trial runs, each
// reference trial detects all ten, and the trials ran on all three nodes.
func kubeCampaignSpread(t *testing.T, node kubeNode, tag string) {
	runnerBin, dir := trialsOnNodes(t, node)
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

// kubeHostsReach: from each node's host (its network namespace, where an
// operator's curl or a hostNetwork Pod runs), the gateway's Service
// answers 20 of 20 requests, each on a connection of its own (so kube-proxy
// spreads them over the replicas, on every node), and so does each gateway
// Pod on every other node: a Pod's answer crosses the fence back to the
// other node's address. (Before the requests are counted: the caller resets
// the deployment after.)
func kubeHostsReach(t *testing.T, node kubeNode, gateways []corev1.Pod) {
	curl := requireTool(t, "curl")
	svc := strings.TrimSpace(node.kubectl(t, nil, "get", "service", "gateway", "-o", "jsonpath={.spec.clusterIP}"))
	const tries = 20
	answered := func(on, addr string) (int, string) {
		args := []string{"on", on, curl, "-s", "-H", "Connection: close", "--connect-timeout", "2", "-m", "5", "-w", "%{http_code}\n"}
		for range tries {
			args = append(args, "-o", "/dev/null", "http://"+addr+":8080/openapi.yaml")
		}
		// curl's status is the last transfer's: the count says it all.
		out, _ := exec.Command("../scripts/kube-node.sh", args...).CombinedOutput()
		return strings.Count(string(out), "200\n"), strings.Join(strings.Fields(string(out)), " ")
	}
	for _, on := range clusterNodes {
		if got, out := answered(on, svc); got != tries {
			t.Errorf("from %s's host, the gateway's Service (%s) answered %d of %d: %s", on, svc, got, tries, out)
		}
		for _, p := range gateways {
			if p.Spec.NodeName == on {
				continue
			}
			if got, out := answered(on, p.Status.PodIP); got != tries {
				t.Errorf("from %s's host, gateway Pod %s on %s (%s) answered %d of %d: %s", on, p.Name, p.Spec.NodeName, p.Status.PodIP, got, tries, out)
			}
		}
	}
}

// getJSONAt sends method url and decodes a 200's body into v; it returns
// the status and the body.
func getJSONAt(t *testing.T, client *http.Client, method, url string, v any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
	}
	return res.StatusCode, string(body)
}

// truthCounts are a ground truth's counts, without times and request
// indices (a replica's own): what a deployment and one process must agree
// on.
func truthCounts(tr catalogue.Truth) string {
	var b strings.Builder
	fmt.Fprintf(&b, "requests %d\n", *tr.Requests)
	for _, d := range tr.Defects {
		fmt.Fprintf(&b, "%s: triggered %d, reached %d %v, other methods %d\n", d.ID, d.Exposure.Count, d.Reached.Count, d.Reached.ByStatus, d.Reached.OtherMethods)
	}
	return b.String()
}

// kubeReplicasAsOne: three gateway replicas (the autoscaler's floor raised
// to 3) are spread one on each node by the topology spread constraint.
// The deployment is reset through one replica's admin port
// (?scope=deployment: all three answer). The endpoint suite is sent
// through the gateway's Service from a Pod, each request on a new
// connection, so kube-proxy spreads them over the three; the same cases go
// to one gateway process on the host. Every replica's own count is a part
// of the whole (so the spread happened), and the deployment's merged
// exposure, reached counts and API coverage, read at the forwarded Pod,
// are the one process's. The board's page at /?scope=deployment shows the
// three replicas and the merged counts in Chromium. The floor is put back.
func kubeReplicasAsOne(t *testing.T, node kubeNode, client *http.Client) {
	node.kubectl(t, nil, "patch", "hpa", "gateway", "-p", `{"spec":{"minReplicas":3}}`)
	t.Cleanup(func() { node.kubectl(t, nil, "patch", "hpa", "gateway", "-p", `{"spec":{"minReplicas":2}}`) })
	var pods []corev1.Pod
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(2 * time.Second) {
		pods = pods[:0]
		for _, p := range showcasePods(t, node) {
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
			}
			if p.Labels["app.kubernetes.io/name"] == "gateway" && ready {
				pods = append(pods, p)
			}
		}
		if len(pods) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d gateway Pods ready, want 3:\n%s", len(pods), node.kubectl(t, nil, "get", "pods", "-o", "wide"))
		}
	}
	on := map[string]string{}
	for _, p := range pods {
		on[p.Spec.NodeName] = p.Name
	}
	if len(on) != 3 {
		t.Errorf("three gateway replicas on %d nodes: %v", len(on), on)
	}
	t.Run("every node's host reaches the Service and every gateway Pod", func(t *testing.T) { kubeHostsReach(t, node, pods) })

	var reset struct {
		Replicas []string `json:"replicas"`
	}
	// A new replica is in the headless Service's DNS within seconds.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		code, body := getJSONAt(t, client, http.MethodPost, node.admin+gateway.PathDefectsReset+"?scope=deployment", &reset)
		if code == http.StatusOK && len(reset.Replicas) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deployment's reset: %d %s, want all three replicas", code, body)
		}
	}
	t.Logf("reset: %v", reset.Replicas)

	r := runProbe(t, node, "netprobe-suite", "-n", "0", "-suite", "http://gateway:8080")
	if r.SuiteSent == 0 || len(r.SuiteErrors) > 0 {
		t.Fatalf("the suite through the Service: %d sent, unanswered %q", r.SuiteSent, r.SuiteErrors)
	}
	one := startProcess(t, buildGateway(t))
	sent := 0
	for _, ep := range suite.Endpoints() {
		for _, c := range ep.Cases {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			if _, err := suite.Do(ctx, client, one.base, ep.For(c, catalogue.All())); err != nil {
				t.Error(err)
			}
			cancel()
			sent++
		}
	}
	if sent != r.SuiteSent {
		t.Fatalf("the Pod sent %d cases, the host %d", r.SuiteSent, sent)
	}

	var alone, merged catalogue.Truth
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		getJSONAt(t, client, http.MethodGet, one.admin+gateway.PathDefects, &alone)
		code, body := getJSONAt(t, client, http.MethodGet, node.admin+gateway.PathDefects+"?scope=deployment", &merged)
		if code == http.StatusOK && *alone.Requests == uint64(sent) && *merged.Requests == uint64(sent) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deployment counts %v requests (%d %s), one process %d, want %d", merged.Requests, code, body, *alone.Requests, sent)
		}
	}
	if a, b := truthCounts(alone), truthCounts(merged); a != b {
		t.Errorf("the deployment's exposure differs from one process's:\n%s\n%s", b, a)
	}
	if len(merged.Replicas) != 3 {
		t.Errorf("merged from %q, want three replicas", merged.Replicas)
	}
	parts := map[string]uint64{}
	for _, p := range pods {
		var own catalogue.Truth
		getJSONAt(t, client, http.MethodGet, forwardAdmin(t, p.Name)+gateway.PathDefects, &own)
		parts[p.Name] = *own.Requests
		if *own.Requests == 0 || *own.Requests == uint64(sent) {
			t.Errorf("replica %s alone counts %d of %d requests: kube-proxy did not spread them", p.Name, *own.Requests, sent)
		}
	}
	t.Logf("%d requests through the Service, by replica: %v", sent, parts)

	var depCov, oneCov coverage.Report
	if code, body := getJSONAt(t, client, http.MethodGet, node.admin+gateway.PathCoverage+"?scope=deployment", &depCov); code != http.StatusOK {
		t.Fatalf("/coverage?scope=deployment: %d %s", code, body)
	}
	getJSONAt(t, client, http.MethodGet, one.admin+gateway.PathCoverage, &oneCov)
	depCov.Since = oneCov.Since
	a, _ := json.MarshalIndent(&oneCov, "", " ")
	b, _ := json.MarshalIndent(&depCov, "", " ")
	if !bytes.Equal(a, b) {
		t.Errorf("the deployment's API coverage differs from one process's:\n%s\n%s", b, a)
	}
	covered, total := depCov.Targets()
	t.Logf("merged API coverage: %d/%d targets, TCL %d", covered, total, depCov.TCL)

	// showcase-score reads the deployment's ground truth and, by the same
	// scope, its coverage: a report of every defect is scored against the
	// merged counts.
	scorer := buildBinary(t, modulePath+"judge/cmd/showcase-score")
	report := "method,path,class\n"
	for _, def := range catalogue.Defects {
		e := catalogue.EndpointOf(def.ID)
		report += fmt.Sprintf("%s,%s,%s\n", e.Method, e.Path, def.Classes[0])
	}
	file := filepath.Join(t.TempDir(), "report.csv")
	writeFile(t, file, report)
	out, err := exec.Command(scorer, "-exposure", node.admin+gateway.PathDefects+"?scope=deployment", "-format", "json", file).Output()
	if err != nil {
		t.Fatalf("showcase-score -exposure …?scope=deployment: %v", err)
	}
	var sc score.Scorecard
	if err := json.Unmarshal(out, &sc); err != nil || len(sc.Defects) != len(catalogue.Defects) {
		t.Fatalf("%v: %s", err, out)
	}
	for i, d := range sc.Defects {
		want := merged.Defects[i].Exposure.Count
		if d.Triggered == nil || *d.Triggered != want || want == 0 || d.Verdict() != "reported" {
			t.Errorf("scored against the deployment, %s: %s, triggered %v; want reported, %d (the merged count)", d.ID, d.Verdict(), d.Triggered, want)
		}
	}
	if sc.Coverage == nil || sc.Coverage.API == nil {
		t.Errorf("the scorecard has no API coverage of the deployment")
	} else if c, tot := sc.Coverage.API.Targets(); c != covered || tot != total {
		t.Errorf("the scorecard's API coverage %d/%d, the deployment's %d/%d", c, tot, covered, total)
	}

	chromium := findChromium(t)
	trap := startTrap(t)
	br := newBrowser(t, chromium, trap.URL)
	br.do(t, "open the deployment's board", chromedp.Navigate(node.admin+"/?scope=deployment"), chromedp.WaitVisible(chromedp.CSS("#tile-SEC-01.triggered")))
	mode := get(t, br, "its mode", chromedp.Evaluate[string](`document.querySelector("#mode").textContent`))
	requests := get(t, br, "its requests", chromedp.Evaluate[string](`document.querySelector("#requests").textContent`))
	if !strings.HasPrefix(mode, "a deployment of 3 replicas") || strings.ReplaceAll(requests, ",", "") != strconv.Itoa(sent) {
		t.Errorf("the deployment's board: mode %q, requests %q, want 3 replicas and %d", mode, requests, sent)
	}
	br.checkStayedOnLoopback(t, trap, 1)
}
