package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// nodeConf is deploy/kube-node: the single node's configuration, as files.
const nodeConf = "../deploy/kube-node"

// renderNodeFile is a file of deploy/kube-node as kube-node.sh fills it in
// (kube-node.sh render), with the extra names env gives (NAME=VALUE).
func renderNodeFile(t *testing.T, name string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command("../scripts/kube-node.sh", "render", name)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kube-node.sh render %s: %v\n%s", name, err, stderr.String())
	}
	return out
}

// The node's configuration files (deploy/kube-node), each checked as its
// own program would read it: every ${NAME} is filled in; the kubelet's and
// kube-proxy's files decode strictly into their real types (an unknown or
// misspelt field fails); the manifests' documents into theirs; each
// program's flags file names only flags that program has (its own --help);
// the fences load into a throwaway network namespace; containerd reads its file; the CNI configuration names plugins
// that are installed; CoreDNS has every plugin the Corefile uses.
func TestKubeNodeConfiguration(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(nodeConf)
	if err != nil {
		t.Fatal(err)
	}
	extra := []string{"KUBE_USER=lint", "KUBE_TOKEN=0123", "NAMESPACE=lint", "CA_BUNDLE=Y2E=", "REGISTRY=10.243.255.1:5000"}
	unfilled := regexp.MustCompile(`\$\{?[A-Za-z_]`)
	rendered := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b := renderNodeFile(t, e.Name(), extra...)
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") && unfilled.MatchString(l) {
				t.Errorf("%s: a name is not filled in: %s", e.Name(), l)
			}
		}
		rendered[e.Name()] = b
	}
	for _, want := range []string{"kubelet.yaml", "kube-proxy.yaml", "Corefile", "containerd.toml", "cni.conflist", "fence.rules", "fence6.rules",
		"kube-apiserver.flags", "kube-router.flags", "kube-router.yaml", "metrics-server.yaml", "namespace.yaml", "kubeconfig.yaml"} {
		if rendered[want] == nil {
			t.Errorf("deploy/kube-node has no %s", want)
		}
	}

	t.Run("kubelet and kube-proxy", func(t *testing.T) {
		var kubelet kubeletv1beta1.KubeletConfiguration
		if err := yaml.UnmarshalStrict(rendered["kubelet.yaml"], &kubelet); err != nil {
			t.Errorf("kubelet.yaml: %v", err)
		}
		if kubelet.Kind != "KubeletConfiguration" || kubelet.ReadOnlyPort != 0 || kubelet.Authentication.Anonymous.Enabled == nil || *kubelet.Authentication.Anonymous.Enabled {
			t.Errorf("kubelet.yaml: kind %q, read-only port %d, anonymous %v", kubelet.Kind, kubelet.ReadOnlyPort, kubelet.Authentication.Anonymous.Enabled)
		}
		var proxy kubeproxyv1alpha1.KubeProxyConfiguration
		if err := yaml.UnmarshalStrict(rendered["kube-proxy.yaml"], &proxy); err != nil {
			t.Errorf("kube-proxy.yaml: %v", err)
		}
		if proxy.Kind != "KubeProxyConfiguration" || proxy.Mode != "iptables" {
			t.Errorf("kube-proxy.yaml: kind %q, mode %q", proxy.Kind, proxy.Mode)
		}
	})

	t.Run("manifests", func(t *testing.T) {
		for _, name := range []string{"kube-router.yaml", "metrics-server.yaml", "namespace.yaml", "kubeconfig.yaml"} {
			for i, doc := range strings.Split(string(rendered[name]), "\n---\n") {
				var head struct{ APIVersion, Kind string }
				if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
					t.Errorf("%s, document %d: %v", name, i, err)
					continue
				}
				var obj any
				switch head.Kind {
				case "ClusterRole":
					obj = &rbacv1.ClusterRole{}
				case "ClusterRoleBinding":
					obj = &rbacv1.ClusterRoleBinding{}
				case "RoleBinding":
					obj = &rbacv1.RoleBinding{}
				case "Service":
					obj = &corev1.Service{}
				case "Namespace":
					obj = &corev1.Namespace{}
				case "EndpointSlice":
					obj = &discoveryv1.EndpointSlice{}
				case "Config":
					obj = &kubeconfigFile{}
				case "APIService": // kube-aggregator's type: the API server checks it at kube-up
					continue
				default:
					t.Errorf("%s, document %d: kind %q", name, i, head.Kind)
					continue
				}
				if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
					t.Errorf("%s, document %d (%s): %v", name, i, head.Kind, err)
				}
			}
		}
	})

	t.Run("CNI", func(t *testing.T) {
		var conf struct {
			Plugins []struct {
				Type string `json:"type"`
				IPAM struct {
					Type string `json:"type"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(rendered["cni.conflist"], &conf); err != nil || len(conf.Plugins) == 0 {
			t.Fatalf("cni.conflist: %v (%d plugins)", err, len(conf.Plugins))
		}
		for _, p := range conf.Plugins {
			for _, typ := range []string{p.Type, p.IPAM.Type} {
				if _, err := os.Stat(filepath.Join("/usr/lib/cni", typ)); err != nil {
					need(t, "the CNI plugin "+typ+" (scripts/kube-deps.sh installs containernetworking-plugins)")
				}
			}
		}
	})

	t.Run("flags", func(t *testing.T) {
		flag := regexp.MustCompile(`^--([a-z0-9-]+)`)
		for _, prog := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "metrics-server", "kube-router"} {
			path := filepath.Join(kubeBinDir(), prog)
			if prog == "etcd" {
				path = requireTool(t, "etcd")
			} else if _, err := os.Stat(path); err != nil {
				need(t, prog+" is not built (scripts/kube-deps.sh builds it)")
			}
			help, _ := exec.Command(path, "--help").CombinedOutput() // some exit 2 after their help
			for _, l := range strings.Split(string(rendered[prog+".flags"]), "\n") {
				if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
					continue
				}
				m := flag.FindStringSubmatch(l)
				if m == nil {
					t.Errorf("%s.flags: %q is not a flag", prog, l)
					continue
				}
				if !regexp.MustCompile(`(^|[\s,])--` + regexp.QuoteMeta(m[1]) + `\b`).Match(help) {
					t.Errorf("%s.flags: %s has no flag --%s", prog, prog, m[1])
				}
			}
		}
	})

	t.Run("fences", func(t *testing.T) {
		if os.Geteuid() != 0 {
			need(t, "loading the fences into a throwaway network namespace needs root")
		}
		requireTool(t, "unshare")
		for name, restore := range map[string]string{"fence.rules": "iptables-restore", "fence6.rules": "ip6tables-restore"} {
			// Loaded for real (--test misses a jump to no chain with
			// nf_tables), into a namespace that goes when the command does.
			cmd := exec.Command("unshare", "--net", "--", requireTool(t, restore), "--noflush")
			cmd.Stdin = bytes.NewReader(rendered[name])
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s", name, err, out)
			}
		}
	})

	t.Run("containerd", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "containerd.toml")
		if err := os.WriteFile(f, rendered["containerd.toml"], 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(requireTool(t, "containerd"), "--config", f, "config", "dump").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte(kubeNodeRoot+"/containerd/root")) {
			t.Errorf("containerd config dump: %v\n%s", err, out)
		}
	})

	t.Run("Corefile", func(t *testing.T) {
		coredns := filepath.Join(kubeBinDir(), "coredns")
		if _, err := os.Stat(coredns); err != nil {
			need(t, "coredns is not built (scripts/kube-deps.sh builds it)")
		}
		plugins, err := exec.Command(coredns, "-plugins").Output()
		if err != nil {
			t.Fatal(err)
		}
		have := strings.Fields(string(plugins))
		corefile := string(rendered["Corefile"])
		if strings.Count(corefile, "{") != strings.Count(corefile, "}") {
			t.Errorf("Corefile: its braces do not balance")
		}
		directive := regexp.MustCompile(`(?m)^\s{4}([a-z]+)\b`)
		for _, m := range directive.FindAllStringSubmatch(corefile, -1) {
			if !slices.Contains(have, m[1]) {
				t.Errorf("Corefile: coredns has no plugin %s", m[1])
			}
		}
	})
}

// kubeconfigFile is what a kubeconfig of deploy/kube-node may hold.
type kubeconfigFile struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Clusters   []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server               string `json:"server"`
			CertificateAuthority string `json:"certificate-authority"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token string `json:"token"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	CurrentContext string `json:"current-context"`
}

// kube-node.sh's stop_tree (how an interrupted kube-up stops its steps)
// leaves no process of the tree running, though a shell in it forks all
// the while (as a wait_for starts a kubectl every quarter second): a
// child forked after the tree was listed outlived the list's kill.
func TestKubeNodeStopTree(t *testing.T) {
	script, err := os.ReadFile("../scripts/kube-node.sh")
	if err != nil {
		t.Fatal(err)
	}
	// The functions stop_tree needs, as the script has them.
	var funcs []string
	for _, name := range []string{"stop_tree", "freeze_tree"} {
		m := regexp.MustCompile(`(?ms)^` + name + `\(\) \{.*?^\}$|^` + name + `\(\) \{[^\n]*\}$`).Find(script)
		if m == nil {
			t.Fatalf("kube-node.sh has no function %s", name)
		}
		funcs = append(funcs, string(m))
	}
	// A marker no other process has: the sleeps' duration, given as an
	// argument (the program's own text must not match it).
	marker := fmt.Sprintf("3600.%d", os.Getpid())
	prog := strings.Join(funcs, "\n") + `
m="sleep $1"
for round in $(seq 1 20); do
	( while :; do sh -c "$m" & sleep 0.01; done ) &
	sleep 0.$((RANDOM % 3 + 1))
	stop_tree $!
	sleep 0.2
	if pgrep -f "$m" >/dev/null; then echo "round $round: left running"; pkill -f "$m"; fi
done 2>/dev/null
`
	t.Cleanup(func() { _ = exec.Command("pkill", "-f", "sleep "+marker).Run() })
	out, err := exec.Command("bash", "-c", prog, "stop_tree", marker).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("stop_tree left processes of the tree running (%v):\n%s", err, out)
	}
}
