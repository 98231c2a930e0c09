package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hpaState is what the test reads of the gateway's autoscaler and Deployment.
type hpaState struct {
	desired, replicas, pods int    // the autoscaler's wish, the Deployment's spec, gateway Pods in existence
	cpu                     string // the autoscaler's current CPU utilization, "" while it has none
}

func (n kubeNode) hpa(t *testing.T) hpaState {
	t.Helper()
	var h struct {
		Status struct {
			DesiredReplicas int `json:"desiredReplicas"`
			CurrentMetrics  []struct {
				Resource struct {
					Current struct {
						AverageUtilization *int `json:"averageUtilization"`
					} `json:"current"`
				} `json:"resource"`
			} `json:"currentMetrics"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(n.kubectl(t, nil, "get", "hpa", "gateway", "-o", "json")), &h); err != nil {
		t.Fatal(err)
	}
	s := hpaState{desired: h.Status.DesiredReplicas}
	if len(h.Status.CurrentMetrics) > 0 && h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != nil {
		s.cpu = fmt.Sprintf("%d%%", *h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization)
	}
	fmt.Sscan(n.kubectl(t, nil, "get", "deployment", "gateway", "-o", "jsonpath={.spec.replicas}"), &s.replicas)
	s.pods = len(strings.Fields(n.kubectl(t, nil, "get", "pods", "-l", "app.kubernetes.io/name=gateway", "-o", "jsonpath={.items[*].metadata.name}")))
	return s
}

// waitHPA polls the autoscaler until ok holds, logging each change; past
// the limit it fails the test, or with soft returns the last state.
func (n kubeNode) waitHPA(t *testing.T, what string, limit time.Duration, ok func(hpaState) bool, soft ...bool) hpaState {
	t.Helper()
	start, last := time.Now(), hpaState{desired: -1}
	for {
		s := n.hpa(t)
		if s != last {
			t.Logf("%5.0fs  desired %d, replicas %d, Pods %d, CPU %q", time.Since(start).Seconds(), s.desired, s.replicas, s.pods, s.cpu)
			last = s
		}
		if ok(s) {
			return s
		}
		if time.Since(start) > limit {
			if len(soft) > 0 && soft[0] {
				return s
			}
			t.Fatalf("%s: not within %s (last: %+v)\n%s", what, limit, s, n.kubectl(t, nil, "describe", "hpa", "gateway"))
		}
		time.Sleep(2 * time.Second)
	}
}

// kubeAutoscaled: metrics-server (built from the module proxy, run by
// kube-up) gives the autoscaler the gateway Pods' CPU; under a load sent
// to the gateway's Service from inside the node, the shipped
// HorizontalPodAutoscaler scales the gateway up from 2, and back to 2
// when the load stops; scaled up, every gateway Pod (the new ones too)
// reaches every service through the NetworkPolicies, and a new Pod that is
// not the gateway reaches none. The test shortens the scale-down
// stabilization window (300 s shipped) to 15 s, as an overlay for tests
// would.
func kubeAutoscaled(t *testing.T, node kubeNode) {
	node.kubectl(t, nil, "patch", "hpa", "gateway", "--type", "merge", "-p", `{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":15}}}}`)
	// metrics-server needs two scrapes of a Pod to give its CPU, and the
	// autoscaler a sync after that: before the load, it has a figure.
	node.waitHPA(t, "the autoscaler reads the gateway's CPU", 3*time.Minute, func(s hpaState) bool { return s.cpu != "" && s.replicas == 2 })
	top := node.kubectl(t, nil, "top", "pods", "-l", "app.kubernetes.io/name=gateway")
	t.Logf("kubectl top:\n%s", top)

	// The load: one kind of the mix through the gateway's Service, from
	// inside the node, at a rate that doubles until the gateway's Pods go
	// above 70 % of their 100m (whatever this machine's speed). The load
	// tool runs niced, so the kubelet and metrics-server still get the CPU
	// to read the Pods.
	gatewayIP := strings.TrimSpace(node.kubectl(t, nil, "get", "service", "gateway", "-o", "jsonpath={.spec.clusterIP}"))
	loader := buildBinary(t, modulePath+"tools/cmd/showcase-load")
	var up hpaState
	for _, rate := range []string{"800", "1600", "3200"} {
		logf, err := os.Create(filepath.Join(t.TempDir(), "load.log"))
		if err != nil {
			t.Fatal(err)
		}
		load := exec.Command("../scripts/kube-node.sh", "exec", "nice", "-n", "10", loader, "-base", "http://"+gatewayIP+":8080",
			"-only", "missing-field", "-rate", rate, "-duration", "5m", "-quiet")
		load.Stdout, load.Stderr = logf, logf
		if err := load.Start(); err != nil {
			t.Fatal(err)
		}
		// Stopped however the test ends: a t.Fatal below would otherwise
		// leave it loading the node for minutes, into the next subtest.
		stop := sync.OnceFunc(func() {
			_ = load.Process.Signal(syscall.SIGTERM)
			_ = load.Wait()
		})
		defer stop()
		up = node.waitHPA(t, "the gateway scales up under "+rate+"/s", 75*time.Second, func(s hpaState) bool { return s.replicas > 2 }, true)
		if up.replicas > 2 {
			// Held where the load put it (a scale-down window longer than
			// the checks), the load stopped so that this 2-core machine
			// can start the new Pods: they become Available only through
			// their startup probe (/readyz, every service reached), they
			// reach every service, let through by kube-router's firewall
			// once it has seen them, and a Pod that is not the gateway,
			// started now, reaches none. Then the short window again.
			node.kubectl(t, nil, "patch", "hpa", "gateway", "--type", "merge", "-p", `{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":900}}}}`)
			stop()
			up = node.hpa(t)
			node.kubectl(t, nil, "rollout", "status", "deployment/gateway", "--timeout=240s")
			gatewayReaches(t, node, fmt.Sprintf("scaled to %d", up.replicas))
			apis, _ := policyTargets(t, node)
			probeTCP(t, node, otherPod, "while the gateway is scaled up, a new Pod that is not the gateway", apis, false)
			node.kubectl(t, nil, "patch", "hpa", "gateway", "--type", "merge", "-p", `{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":15}}}}`)
		}
		stop()
		raw, _ := os.ReadFile(logf.Name())
		logf.Close()
		t.Logf("%s/s: scaled to %d; the load's report:\n%s", rate, up.replicas, raw)
		if up.replicas > 2 {
			break
		}
	}
	if up.replicas <= 2 {
		t.Fatalf("the gateway did not scale up under the load:\n%s", node.kubectl(t, nil, "describe", "hpa", "gateway"))
	}
	node.waitHPA(t, "the gateway scales back to 2 after the load", 4*time.Minute, func(s hpaState) bool { return s.replicas == 2 && s.pods == 2 })
	node.kubectl(t, nil, "rollout", "status", "deployment/gateway", "--timeout=120s")
}

// kubeDisruptionBudget: the gateway's PodDisruptionBudget (minAvailable 1)
// through the Eviction API, what kubectl drain uses (one node cannot be
// drained): with one gateway Pod frozen until it is not Ready, evicting
// the other is refused (429 TooManyRequests, the budget); with both Ready again, it is
// allowed, and the Deployment replaces the evicted Pod.
func kubeDisruptionBudget(t *testing.T, node kubeNode) {
	pods := strings.Fields(node.kubectl(t, nil, "get", "pods", "-l", "app.kubernetes.io/name=gateway", "-o", "jsonpath={.items[*].metadata.name}"))
	if len(pods) != 2 {
		t.Fatalf("gateway Pods: %v, want 2", pods)
	}
	frozen, other := pods[0], pods[1]
	allowed := func(want string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			got := node.kubectl(t, nil, "get", "pdb", "gateway", "-o", "jsonpath={.status.disruptionsAllowed}")
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the budget allows %s disruptions, want %s:\n%s", got, want, node.kubectl(t, nil, "get", "pods", "-o", "wide"))
			}
			time.Sleep(time.Second)
		}
	}
	evict := func(pod string) (string, error) {
		body := fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q,"namespace":"showcase"}}`, pod)
		cmd := exec.Command(filepath.Join(kubeBinDir(), "kubectl"), "--kubeconfig", kubeNodeRoot+"/admin.kubeconfig",
			"create", "--raw", "/api/v1/namespaces/showcase/pods/"+pod+"/eviction", "-f", "-")
		cmd.Stdin = strings.NewReader(body)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	allowed("1")

	// Freeze one Pod's container (the cgroup freezer, through the node's
	// containerd): its readiness probe fails, it leaves the Service and
	// the budget's healthy count. Thawed before its liveness probe (30 s)
	// would restart it.
	id := strings.TrimPrefix(node.kubectl(t, nil, "get", "pod", frozen, "-o", "jsonpath={.status.containerStatuses[0].containerID}"), "containerd://")
	ctr := func(verb string) {
		t.Helper()
		if out, err := exec.Command("ctr", "--address", kubeNodeRoot+"/containerd.sock", "-n", "k8s.io", "tasks", verb, id).CombinedOutput(); err != nil {
			t.Fatalf("ctr tasks %s %s: %v\n%s", verb, id, err, out)
		}
	}
	ctr("pause")
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			ctr("resume")
		}
	}
	defer thaw()
	frozenAt := time.Now()
	allowed("0")
	t.Logf("%s not Ready %.0fs after the freeze", frozen, time.Since(frozenAt).Seconds())
	out, err := evict(other)
	thaw()
	if err == nil || !strings.Contains(out, "TooManyRequests") || !strings.Contains(out, "disruption budget") {
		t.Fatalf("evicting %s while %s is not Ready: %v\n%s", other, frozen, err, out)
	}
	t.Logf("refused: %s", strings.TrimSpace(out))
	if got := node.kubectl(t, nil, "get", "pod", other, "-o", "jsonpath={.metadata.deletionTimestamp}"); got != "" {
		t.Fatalf("%s is being deleted after a refused eviction (%s)", other, got)
	}

	allowed("1")
	if out, err := evict(other); err != nil {
		t.Fatalf("evicting %s with both Ready: %v\n%s", other, err, out)
	}
	node.kubectl(t, nil, "wait", "--for=delete", "pod/"+other, "--timeout=90s")
	node.kubectl(t, nil, "rollout", "status", "deployment/gateway", "--timeout=120s")
	allowed("1")
}
