package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Pods the NetworkPolicy test runs: one that is neither the gateway nor
// Prometheus, in the showcase's namespace, and one labelled as Prometheus
// in a namespace of its own (an operator's Prometheus lives apart).
var (
	otherPod      = probePod{name: "netprobe-other", namespace: "showcase", labels: map[string]string{"app.kubernetes.io/name": "netprobe"}}
	prometheusPod = probePod{name: "netprobe-prometheus", namespace: "showcase-probes", labels: map[string]string{"app.kubernetes.io/name": "prometheus"}}
)

// policyTargets are the addresses the NetworkPolicies guard: each
// service's API port, by its Service's name (as the gateway reaches it),
// and every showcase Pod's admin port, by the Pod's address.
func policyTargets(t *testing.T, node kubeNode) (apis, admins []string) {
	t.Helper()
	var services corev1.ServiceList
	if err := json.Unmarshal([]byte(node.kubectl(t, nil, "get", "services", "-o", "json")), &services); err != nil {
		t.Fatal(err)
	}
	for _, s := range services.Items {
		if s.Name == "gateway" || s.Spec.ClusterIP == corev1.ClusterIPNone {
			continue // the gateway's API is anyone's; gateway-peers only names the replicas
		}
		for _, p := range s.Spec.Ports {
			apis = append(apis, fmt.Sprintf("%s:%d", s.Name, p.Port))
		}
	}
	for _, p := range showcasePods(t, node) {
		for _, cp := range p.Spec.Containers[0].Ports {
			if cp.Name == "admin" {
				admins = append(admins, fmt.Sprintf("%s:%d", p.Status.PodIP, cp.ContainerPort))
			}
		}
	}
	slices.Sort(apis)
	slices.Sort(admins)
	if len(apis) != 4 || len(admins) < 6 {
		t.Fatalf("API ports %v, admin ports %v: want the four services' and every Pod's", apis, admins)
	}
	return apis, admins
}

// showcasePods are the showcase's running Pods (not the test's probes).
func showcasePods(t *testing.T, node kubeNode) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := json.Unmarshal([]byte(node.kubectl(t, nil, "get", "pods", "-l", "app.kubernetes.io/part-of=defect-showcase", "-o", "json")), &pods); err != nil {
		t.Fatal(err)
	}
	var running []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			running = append(running, p)
		}
	}
	return running
}

// probeTCP runs netprobe as p, trying each address for up to ten seconds,
// and checks that each connected (want) or never did.
func probeTCP(t *testing.T, node kubeNode, p probePod, what string, addrs []string, want bool) {
	t.Helper()
	r := runProbeAs(t, node, p, "-n", "0", "-tcp", strings.Join(addrs, ","), "-tcp-for", "10s")
	for _, a := range addrs {
		if got := r.TCP[a] == "connected"; got != want {
			verb := "reaches"
			if want {
				verb = "does not reach"
			}
			t.Errorf("%s: %s %s (%s)", what, verb, a, r.TCP[a])
		}
	}
}

// gatewayReaches checks that every gateway Pod reaches every service (its
// /readyz sends each one a request through its Service) and every gateway
// Pod's admin port (its /defects?scope=deployment asks each one, found by
// the headless Service gateway-peers).
func gatewayReaches(t *testing.T, node kubeNode, what string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	var gateways []string
	for _, p := range showcasePods(t, node) {
		if p.Labels["app.kubernetes.io/name"] == "gateway" {
			gateways = append(gateways, p.Name)
		}
	}
	for _, name := range gateways {
		admin := forwardAdmin(t, name)
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err := client.Get(admin + "/readyz")
			status := 0
			if err == nil {
				status = res.StatusCode
				res.Body.Close()
			}
			if status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: gateway Pod %s does not reach the services: /readyz %d %v", what, name, status, err)
				break
			}
			time.Sleep(time.Second)
		}
		var truth catalogue.Truth
		if code, body := getJSONAt(t, client, http.MethodGet, admin+gateway.PathDefects+"?scope=deployment", &truth); code != http.StatusOK || len(truth.Replicas) != len(gateways) {
			t.Errorf("%s: gateway Pod %s does not reach its %d replicas' admin ports: %d %s", what, name, len(gateways), code, body)
		}
	}
}

// kubePolicies: the shipped NetworkPolicies, enforced by kube-router's
// firewall on the node. Each gateway Pod reaches every service's API port;
// a Pod that is not the gateway reaches none, nor any admin port; a Pod
// labelled as Prometheus, in another namespace, reaches every admin port
// and no API port of a service; the kubelet's probes still pass (every Pod
// Ready, none restarted). With the policies removed, in the same run, the
// other Pod reaches them all (so each check above can fail); put back,
// they hold again, and go on holding across a Pod restarted and
// kube-router itself restarted.
func kubePolicies(t *testing.T, node kubeNode) {
	apis, admins := policyTargets(t, node)
	t.Logf("API ports %v; admin ports %v", apis, admins)
	ns := renderNodeFile(t, "namespace.yaml", "NAMESPACE="+prometheusPod.namespace)
	node.kubectl(t, ns, "apply", "--server-side", "-f", "-")

	gatewayReaches(t, node, "with the policies")
	probeTCP(t, node, otherPod, "a Pod that is not the gateway", slices.Concat(apis, admins), false)
	probeTCP(t, node, prometheusPod, "a Pod labelled as Prometheus, in another namespace", admins, true)
	probeTCP(t, node, prometheusPod, "a Pod labelled as Prometheus", apis, false)
	for _, p := range showcasePods(t, node) {
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}
		if !ready || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("Pod %s: ready %v, restarted %d times: the kubelet's probes do not pass", p.Name, ready, p.Status.ContainerStatuses[0].RestartCount)
		}
	}

	// Without the policies, the same Pod reaches everything: the checks
	// above see the policies, not something else.
	var policies networkingv1.NetworkPolicyList
	if err := json.Unmarshal([]byte(node.kubectl(t, nil, "get", "networkpolicies", "-o", "json")), &policies); err != nil {
		t.Fatal(err)
	}
	if len(policies.Items) != 5 {
		t.Fatalf("%d NetworkPolicies, want the five of the base", len(policies.Items))
	}
	for i := range policies.Items {
		policies.Items[i].ObjectMeta = metaOnly(policies.Items[i].ObjectMeta)
	}
	policies.ListMeta = metav1.ListMeta{}
	node.kubectl(t, nil, "delete", "networkpolicies", "--all")
	probeTCP(t, node, otherPod, "with the policies removed, a Pod that is not the gateway", slices.Concat(apis, admins), true)
	restore, _ := json.Marshal(policies)
	node.kubectl(t, restore, "create", "-f", "-")
	probeTCP(t, node, otherPod, "with the policies put back, a Pod that is not the gateway", slices.Concat(apis, admins), false)

	// A Pod restarted: its replacement, at a new address, is reached by
	// the gateway and by no one else.
	old := node.kubectl(t, nil, "get", "pods", "-l", "app.kubernetes.io/name=security-svc", "-o", "jsonpath={.items[0].metadata.name}")
	node.kubectl(t, nil, "delete", "pod", old)
	node.kubectl(t, nil, "rollout", "status", "deployment/security-svc", "--timeout=120s")
	apis, admins = policyTargets(t, node)
	gatewayReaches(t, node, "after a Pod restarted")
	probeTCP(t, node, otherPod, "after a Pod restarted, a Pod that is not the gateway", slices.Concat(apis, admins), false)

	// kube-router restarted: the policies hold while it is away (its
	// rules stay) and after it has synced again.
	nodeScript(t, "restart", "kube-router")
	gatewayReaches(t, node, "after kube-router restarted")
	probeTCP(t, node, otherPod, "after kube-router restarted, a Pod that is not the gateway", slices.Concat(apis, admins), false)
	probeTCP(t, node, prometheusPod, "after kube-router restarted, a Pod labelled as Prometheus", admins, true)
}

// metaOnly is what of an object's metadata a copy made anew keeps: its
// name, namespace, labels and annotations.
func metaOnly(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}
