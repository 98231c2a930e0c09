package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/defectshowcase/showcase/catalogue"
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/gateway"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

// binaries are the programs' real default addresses, by image name.
var binaries = map[string]struct{ api, admin string }{
	"gateway":         {gateway.Program().DefaultAddr, gateway.Program().DefaultAdminAddr},
	"security-svc":    {securitysvc.Program().DefaultAddr, securitysvc.Program().DefaultAdminAddr},
	"errors-svc":      {errorssvc.Program().DefaultAddr, errorssvc.Program().DefaultAdminAddr},
	"conformance-svc": {conformancesvc.Program().DefaultAddr, conformancesvc.Program().DefaultAdminAddr},
	"performance-svc": {performancesvc.Program().DefaultAddr, performancesvc.Program().DefaultAdminAddr},
}

// objects is a kustomization built and strictly decoded.
type objects struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	policies    map[string]*networkingv1.NetworkPolicy
	pdbs        map[string]*policyv1.PodDisruptionBudget
	hpas        map[string]*autoscalingv2.HorizontalPodAutoscaler
	configMaps  map[string]*corev1.ConfigMap
}

// kustomizeMu serialises kustomize runs: kyaml initialises a global schema
// without a lock, and two builds at once race on it.
var kustomizeMu sync.Mutex

// build runs kustomize on dir and decodes every object into its API type,
// rejecting unknown or misspelled fields.
func build(t *testing.T, dir string) objects {
	t.Helper()
	kustomizeMu.Lock()
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	kustomizeMu.Unlock()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	o := objects{map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}, map[string]*networkingv1.NetworkPolicy{},
		map[string]*policyv1.PodDisruptionBudget{}, map[string]*autoscalingv2.HorizontalPodAutoscaler{}, map[string]*corev1.ConfigMap{}}
	for _, r := range rm.Resources() {
		raw, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var into any
		switch r.GetKind() {
		case "Deployment":
			d := &appsv1.Deployment{}
			o.deployments[r.GetName()], into = d, d
		case "Service":
			s := &corev1.Service{}
			o.services[r.GetName()], into = s, s
		case "NetworkPolicy":
			p := &networkingv1.NetworkPolicy{}
			o.policies[r.GetName()], into = p, p
		case "PodDisruptionBudget":
			p := &policyv1.PodDisruptionBudget{}
			o.pdbs[r.GetName()], into = p, p
		case "HorizontalPodAutoscaler":
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			o.hpas[r.GetName()], into = h, h
		case "ConfigMap":
			c := &corev1.ConfigMap{}
			o.configMaps[r.GetName()], into = c, c
		default:
			t.Fatalf("%s: unexpected kind %s", dir, r.GetKind())
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Errorf("%s %s/%s: %v", dir, r.GetKind(), r.GetName(), err)
		}
	}
	return o
}

func port(addr string) int32 {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return int32(n)
}

func containerPort(c corev1.Container, ref intstr.IntOrString) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		if (ref.Type == intstr.String && p.Name == ref.StrVal) || (ref.Type == intstr.Int && p.ContainerPort == ref.IntVal) {
			return p, true
		}
	}
	return corev1.ContainerPort{}, false
}

// imagesBuilt reads the image names `make images` builds from the Makefile.
func imagesBuilt(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	prefix := regexp.MustCompile(`(?m)^IMAGE_PREFIX\s*\?=\s*(\S+)`).FindSubmatch(mk)
	cmds := regexp.MustCompile(`(?m)^CMDS\s*:=\s*(.+)$`).FindSubmatch(mk)
	if prefix == nil || cmds == nil {
		t.Fatal("Makefile: IMAGE_PREFIX or CMDS not found")
	}
	var out []string
	for _, c := range strings.Fields(string(cmds[1])) {
		out = append(out, string(prefix[1])+"/"+c)
	}
	return out
}

// checkCluster cross-checks what a cluster would only reveal at run time.
func checkCluster(t *testing.T, o objects) {
	images := imagesBuilt(t)
	podLabels := map[string]labels.Set{}
	for name, d := range o.deployments {
		tpl := d.Spec.Template
		podLabels[name] = tpl.Labels
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(tpl.Labels)) {
			t.Errorf("Deployment %s: selector %v does not match its pod labels %v", name, d.Spec.Selector, tpl.Labels)
		}
		ps := tpl.Spec.SecurityContext
		if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("Deployment %s: pod must run as non-root with the RuntimeDefault seccomp profile", name)
		}
		if len(tpl.Spec.Containers) != 1 {
			t.Fatalf("Deployment %s: %d containers, want 1", name, len(tpl.Spec.Containers))
		}
		c := tpl.Spec.Containers[0]
		image, _, _ := strings.Cut(c.Image, ":")
		if !slices.Contains(images, image) {
			t.Errorf("Deployment %s: image %s is not one make images builds (%v)", name, c.Image, images)
		}
		bin, ok := binaries[strings.TrimPrefix(image, "defect-showcase/")]
		if !ok {
			t.Fatalf("Deployment %s: no binary for image %s", name, image)
		}
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil ||
			!*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("Deployment %s: container must forbid privilege escalation, use a read-only root and drop ALL capabilities", name)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("Deployment %s: CPU and memory requests and limits are required", name)
		}
		// Every container reads the defects switch from a ConfigMap that
		// exists and holds a setting the binaries accept.
		if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil {
			t.Errorf("Deployment %s: want the showcase-defects ConfigMap as envFrom", name)
		} else if cm, ok := o.configMaps[c.EnvFrom[0].ConfigMapRef.Name]; !ok {
			t.Errorf("Deployment %s: envFrom names ConfigMap %s, which is not built", name, c.EnvFrom[0].ConfigMapRef.Name)
		} else if _, err := catalogue.Parse(cm.Data["DEFECTS"]); err != nil || cm.Data["DEFECTS"] == "" || cm.Data["API_KEY"] == "" {
			t.Errorf("ConfigMap %s: DEFECTS %q (%v), API_KEY %q", cm.Name, cm.Data["DEFECTS"], err, cm.Data["API_KEY"])
		}
		// The ports are the ones the binary listens on (defaults, or env).
		apiAddr, adminAddr := bin.api, bin.admin
		for _, e := range c.Env {
			switch e.Name {
			case "ADDR":
				apiAddr = e.Value
			case "ADMIN_ADDR":
				adminAddr = e.Value
			}
		}
		if p, ok := containerPort(c, intstr.FromString("api")); !ok || p.ContainerPort != port(apiAddr) {
			t.Errorf("Deployment %s: port api %v, but the binary listens on %s", name, p.ContainerPort, apiAddr)
		}
		admin, ok := containerPort(c, intstr.FromString("admin"))
		if !ok || admin.ContainerPort != port(adminAddr) {
			t.Errorf("Deployment %s: port admin %v, but the binary's admin listener is %s", name, admin.ContainerPort, adminAddr)
		}
		// The gateway's readiness is its own health: its /readyz checks the
		// upstreams, and one service down must not unready every gateway pod.
		readiness := server.PathReadyz
		if name == "gateway" {
			readiness = server.PathHealthz
		}
		for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: server.PathHealthz, c.ReadinessProbe: readiness} {
			if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path {
				t.Errorf("Deployment %s: want an HTTP probe on %s", name, path)
				continue
			}
			if p, ok := containerPort(c, probe.HTTPGet.Port); !ok || p.ContainerPort != admin.ContainerPort {
				t.Errorf("Deployment %s: probe %s on port %v, not the admin port", name, path, probe.HTTPGet.Port.String())
			}
		}
		ann := tpl.Annotations
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != fmt.Sprint(admin.ContainerPort) || ann["prometheus.io/path"] != server.PathMetrics {
			t.Errorf("Deployment %s: scrape annotations %v do not point at the admin port's %s", name, ann, server.PathMetrics)
		}
		// Upstream URLs name real Services on real ports.
		for _, e := range c.Env {
			if !strings.HasPrefix(e.Name, "UPSTREAM_") {
				continue
			}
			if !slices.ContainsFunc(catalogue.Categories, func(cat catalogue.Category) bool { return cat.Upstream == e.Name }) {
				t.Errorf("Deployment %s: %s is not a variable the gateway reads", name, e.Name)
			}
			u, err := url.Parse(e.Value)
			if err != nil {
				t.Errorf("%s: %v", e.Name, err)
				continue
			}
			svc, ok := o.services[u.Hostname()]
			if !ok || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return fmt.Sprint(p.Port) == u.Port() }) {
				t.Errorf("Deployment %s: %s=%s names no Service port", name, e.Name, e.Value)
			}
		}
	}
	// Services select real pods and target ports their containers have.
	for name, s := range o.services {
		var target *appsv1.Deployment
		for dn, d := range o.deployments {
			if labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels[dn]) {
				target = d
			}
		}
		if target == nil {
			t.Errorf("Service %s selects no pods (%v)", name, s.Spec.Selector)
			continue
		}
		for _, p := range s.Spec.Ports {
			if _, ok := containerPort(target.Spec.Template.Spec.Containers[0], p.TargetPort); !ok {
				t.Errorf("Service %s: targetPort %s is not a port of %s", name, p.TargetPort.String(), target.Name)
			}
			// Safe by default: the admin port (the ground truth, the
			// exposure reset) is scraped from the pods and reached by
			// port-forward, never offered by a Service. The one
			// exception only names the gateway's replicas for each other
			// (gateway-peers, PEERS): headless, no virtual IP; the
			// NetworkPolicy below decides who reaches it.
			peers := s.Spec.ClusterIP == corev1.ClusterIPNone && target.Name == "gateway" && name == "gateway-peers"
			if (p.TargetPort.String() == "admin" || fmt.Sprint(p.Port) == fmt.Sprint(port(binaries[target.Name].admin))) && !peers {
				t.Errorf("Service %s offers the admin port %d", name, p.Port)
			}
		}
	}
	// NetworkPolicies select real pods; a service's API port admits the
	// gateway only, the gateway's anyone; every admin port admits only
	// Pods labelled as Prometheus (in any namespace), and the gateway's
	// its own replicas of its namespace (a deployment's counts), never
	// anything else.
	prometheus := labels.Set{"app.kubernetes.io/name": "prometheus"}
	for name, np := range o.policies {
		sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		var target *appsv1.Deployment
		for dn, d := range o.deployments {
			if sel.Matches(podLabels[dn]) {
				target = d
			}
		}
		if target == nil {
			t.Errorf("NetworkPolicy %s selects no pods", name)
			continue
		}
		c := target.Spec.Template.Spec.Containers[0]
		apiOpen, adminOpen := false, false
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				cp, ok := containerPort(c, *p.Port)
				if !ok {
					t.Errorf("NetworkPolicy %s: port %s is not a port of %s", name, p.Port.String(), target.Name)
				}
				switch {
				case cp.Name == "api" && target.Name == "gateway":
					if len(rule.From) != 0 {
						t.Errorf("NetworkPolicy %s: the gateway's API port is not open to its users", name)
					}
					apiOpen = true
				case cp.Name == "api":
					if len(rule.From) == 0 {
						t.Errorf("NetworkPolicy %s: the API port is open to everyone", name)
					}
					for _, peer := range rule.From {
						ps, _ := metav1.LabelSelectorAsSelector(peer.PodSelector)
						if peer.PodSelector == nil || !ps.Matches(podLabels["gateway"]) || peer.NamespaceSelector != nil || peer.IPBlock != nil {
							t.Errorf("NetworkPolicy %s: the API port admits more than the gateway", name)
						}
					}
					apiOpen = true
				case cp.Name == "admin":
					if len(rule.From) == 0 {
						t.Errorf("NetworkPolicy %s: the admin port is open to everyone", name)
					}
					for _, peer := range rule.From {
						ps, _ := metav1.LabelSelectorAsSelector(peer.PodSelector)
						prom := peer.PodSelector != nil && ps.Matches(prometheus) && !ps.Matches(podLabels["gateway"]) && peer.IPBlock == nil
						replicas := target.Name == "gateway" && peer.PodSelector != nil && ps.Matches(podLabels["gateway"]) && !ps.Matches(prometheus) &&
							peer.NamespaceSelector == nil && peer.IPBlock == nil
						if !prom && !replicas {
							t.Errorf("NetworkPolicy %s: the admin port admits more than Prometheus and the gateway's replicas", name)
						}
					}
					adminOpen = true
				}
			}
		}
		if !apiOpen {
			t.Errorf("NetworkPolicy %s: the API port admits no one it should", name)
		}
		if !adminOpen {
			t.Errorf("NetworkPolicy %s: Prometheus cannot reach the admin port", name)
		}
	}
	for name, p := range o.pdbs {
		sel, _ := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if _, ok := o.deployments[name]; !ok || !sel.Matches(podLabels[name]) {
			t.Errorf("PodDisruptionBudget %s selects no pods", name)
		}
	}
	for name, h := range o.hpas {
		if _, ok := o.deployments[h.Spec.ScaleTargetRef.Name]; !ok || h.Spec.ScaleTargetRef.Kind != "Deployment" {
			t.Errorf("HorizontalPodAutoscaler %s scales %v, which does not exist", name, h.Spec.ScaleTargetRef)
		}
	}
}

func TestKubernetesBase(t *testing.T) {
	t.Parallel()
	o := build(t, "../deploy/k8s/base")
	for name := range binaries {
		if o.deployments[name] == nil || o.services[name] == nil {
			t.Errorf("%s: want a Deployment and a Service", name)
		}
		if o.policies[name] == nil {
			t.Errorf("%s: want a NetworkPolicy", name)
		}
	}
	if o.pdbs["gateway"] == nil || o.hpas["gateway"] == nil {
		t.Error("the gateway wants a PodDisruptionBudget and a HorizontalPodAutoscaler")
	}
	env := map[string]string{}
	for _, e := range o.deployments["gateway"].Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	for _, c := range catalogue.Categories {
		if env[c.Upstream] == "" {
			t.Errorf("the gateway has no %s: that category would run in-process", c.Upstream)
		}
	}
	checkCluster(t, o)
}

func TestKubernetesEmbeddedOverlay(t *testing.T) {
	t.Parallel()
	o := build(t, "../deploy/k8s/overlays/embedded")
	if len(o.deployments) != 1 || o.deployments["gateway"] == nil || len(o.policies) != 1 || o.policies["gateway"] == nil || len(o.services) != 2 || o.services["gateway-peers"] == nil {
		t.Fatalf("want the gateway alone, with its own NetworkPolicy; got deployments %v, services %v, policies %v", keys(o.deployments), keys(o.services), keys(o.policies))
	}
	for _, e := range o.deployments["gateway"].Spec.Template.Spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "UPSTREAM_") {
			t.Errorf("embedded gateway still proxies: %s", e.Name)
		}
	}
	checkCluster(t, o)
}

// The negative control on Kubernetes: the five Deployments as in the base,
// every container told DEFECTS=none.
func TestKubernetesDefectsOffOverlay(t *testing.T) {
	t.Parallel()
	o := build(t, "../deploy/k8s/overlays/defects-off")
	if len(o.deployments) != len(binaries) || len(o.configMaps) != 1 {
		t.Fatalf("want the base's five Deployments and one ConfigMap; got %v, %v", keys(o.deployments), keys(o.configMaps))
	}
	for _, cm := range o.configMaps {
		if cm.Data["DEFECTS"] != "none" {
			t.Errorf("ConfigMap %s: DEFECTS=%q, want none", cm.Name, cm.Data["DEFECTS"])
		}
		for name, d := range o.deployments {
			if ref := d.Spec.Template.Spec.Containers[0].EnvFrom; len(ref) != 1 || ref[0].ConfigMapRef == nil || ref[0].ConfigMapRef.Name != cm.Name {
				t.Errorf("Deployment %s does not read %s", name, cm.Name)
			}
		}
	}
	checkCluster(t, o)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
