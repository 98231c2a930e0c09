package e2e_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const chartDir = "../deploy/helm/defect-showcase"

// helmRelease is the release name the chart's renderings use here: its
// names are RELEASE-PROGRAM, and "rel-" taken out gives kustomize's.
const helmRelease = "rel"

// helmTemplate renders the chart with values (--set), its test Pod too
// unless skipTests.
func helmTemplate(t *testing.T, helm, ns string, skipTests bool, values ...string) string {
	t.Helper()
	args := []string{"template", helmRelease, chartDir, "-n", ns, "--set", "image.repository=defect-showcase,image.tag=latest"}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	if skipTests {
		args = append(args, "--skip-tests")
	}
	out, err := exec.Command(helm, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// The chart's values and the kustomizations they stand for.
var chartVariants = []struct {
	name, kustomization string
	values              []string
}{
	{"split", "base", nil},
	{"embedded", "overlays/embedded", []string{"split=false"}},
	{"defects-off", "overlays/defects-off", []string{"defects=none"}},
}

// The Helm chart offers what the kustomizations do: helm lint --strict
// passes; rendered with the values that stand for each kustomization it
// makes the same objects, each holding every field the kustomization's
// does (names aside: RELEASE-PROGRAM); on a real control plane every
// rendering, its test Pod and the admin port's exposure included, is
// admitted under PodSecurity restricted with no warning and rolls out.
// An image given by digest is pulled by it.
func TestHelmChart(t *testing.T) {
	helm, kubectl := requireTool(t, "helm"), requireTool(t, "kubectl")
	toolHomes(t)
	for _, set := range [][]string{nil, {"split=false"}, {"admin.expose=true"}, {"autoscaling.enabled=false,podDisruptionBudget.enabled=false,networkPolicy.enabled=false"}} {
		args := []string{"lint", "--strict", chartDir}
		for _, v := range set {
			args = append(args, "--set", v)
		}
		if out, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
			t.Errorf("helm %v: %v\n%s", args, err, out)
		}
	}

	hash := regexp.MustCompile(`showcase-defects-[a-z0-9]+`)
	for _, v := range chartVariants {
		t.Run("like "+v.kustomization, func(t *testing.T) {
			k, err := exec.Command(kubectl, "kustomize", "../deploy/k8s/"+v.kustomization).Output()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]map[string]any{}
			for _, o := range documents(t, hash.ReplaceAllString(string(k), "defects")) {
				want[objectKey(o)] = o
			}
			got := map[string]map[string]any{}
			rendered := strings.ReplaceAll(helmTemplate(t, helm, "showcase", true, v.values...), helmRelease+"-", "")
			for _, o := range documents(t, rendered) {
				got[objectKey(o)] = o
			}
			// The kustomize base's ConfigMap is generated: its data are
			// what the chart's values give.
			delete(want, "ConfigMap/defects")
			if cm := got["ConfigMap/defects"]; cm == nil {
				t.Error("the chart makes no ConfigMap of the defects")
			} else {
				delete(got, "ConfigMap/defects")
			}
			if a, b := keys(want), keys(got); strings.Join(a, " ") != strings.Join(b, " ") {
				t.Errorf("the kustomization makes %v, the chart %v", a, b)
			}
			for key, w := range want {
				if g, ok := got[key]; ok {
					if d := subset(w, g, key); d != "" {
						t.Errorf("the chart's object differs from the kustomization's: %s", d)
					}
				}
			}
		})
	}
	t.Run("defects=none in the ConfigMap", func(t *testing.T) {
		for _, o := range documents(t, helmTemplate(t, helm, "showcase", true, "defects=none")) {
			if o["kind"] == "ConfigMap" && o["data"].(map[string]any)["DEFECTS"] != "none" {
				t.Errorf("ConfigMap %v", o["data"])
			}
		}
	})
	t.Run("by digest", func(t *testing.T) {
		const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		out := helmTemplate(t, helm, "showcase", false, "image.repository=registry.example/ns", "image.digests.gateway="+d, "image.digests.showcase-replay="+d)
		for _, want := range []string{"image: registry.example/ns/gateway@" + d, "image: registry.example/ns/showcase-replay@" + d, "image: registry.example/ns/security-svc:latest"} {
			if !strings.Contains(out, want) {
				t.Errorf("rendered without %q", want)
			}
		}
	})
	t.Run("the admin port only when asked", func(t *testing.T) {
		// Only the headless gateway-peers names it by default: no virtual
		// IP, and the NetworkPolicy lets in only the gateway's replicas.
		for _, o := range documents(t, helmTemplate(t, helm, "showcase", true)) {
			b, _ := json.Marshal(o)
			spec, _ := o["spec"].(map[string]any)
			if o["kind"] == "Service" && strings.Contains(string(b), `"port":9090`) && (spec["clusterIP"] != "None" || o["metadata"].(map[string]any)["name"] != helmRelease+"-gateway-peers") {
				t.Errorf("the admin port is exposed by default: %s", b)
			}
		}
		out := helmTemplate(t, helm, "showcase", true, "admin.expose=true", "admin.adminFrom[0].podSelector.matchLabels.app=scorer")
		var svc, np bool
		for _, o := range documents(t, out) {
			md := o["metadata"].(map[string]any)
			if o["kind"] == "Service" && md["name"] == helmRelease+"-gateway-admin" {
				svc = true
			}
			if o["kind"] == "NetworkPolicy" && md["name"] == helmRelease+"-gateway" {
				b, _ := json.Marshal(o)
				np = strings.Contains(string(b), `"app":"scorer"`)
			}
		}
		if !svc || !np {
			t.Errorf("admin.expose: the Service %v, the NetworkPolicy letting in adminFrom %v", svc, np)
		}
	})

	cp := startControlPlane(t)
	for i, v := range append(chartVariants, struct {
		name, kustomization string
		values              []string
	}{"admin exposed", "", []string{"admin.expose=true"}}) {
		t.Run("admitted: "+v.name, func(t *testing.T) {
			ns := fmt.Sprintf("chart-%d", i)
			cp.restrictedNamespace(t, ns)
			rendered := helmTemplate(t, helm, ns, false, v.values...)
			out, err := cp.kubectl([]byte(rendered), "apply", "--server-side", "--validate=strict", "-n", ns, "-f", "-")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.ToLower(out), "warning") {
				t.Errorf("applying the chart (%v) warned:\n%s", v.values, out)
			}
			replicas := map[string]int{}
			for _, o := range documents(t, rendered) {
				if o["kind"] == "Deployment" {
					md := o["metadata"].(map[string]any)
					replicas[strings.TrimPrefix(md["name"].(string), helmRelease+"-")] = int(o["spec"].(map[string]any)["replicas"].(float64))
				}
			}
			cp.waitForPods(t, ns, replicas, helmRelease+"-")
		})
	}
}

// toolHomes gives Helm and cosign homes in the test's folders: nothing of
// theirs (caches, registry logins, a TUF root) is left in ~.
func toolHomes(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "TUF_ROOT"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(v)))
	}
}
