package e2e_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
)

// trialsNS is the namespace deploy/k8s/trials makes for the runner.
const trialsNS = "showcase-trials"

// campaignFile is the repository's example experiment (the reference tool
// and the weak one), as written but for what this node needs: the images
// at the tag make images built them with here (make kube-up loads them
// into the node, which has no registry), fewer trials, a shorter budget,
// CPU that three trials at once leave the node, and the weak tool's
// extra flags.
func campaignFile(t *testing.T, tag string, trialCount int, budget string, weakArgs ...string) string {
	t.Helper()
	raw, err := os.ReadFile("../judge/experiments/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, r := range [][2]string{
		{":latest", ":" + tag},
		{"\ntrials: 10\n", fmt.Sprintf("\ntrials: %d\n", trialCount)},
		{"\nbudget: 10m\n", "\nbudget: " + budget + "\n"},
		{`resources: {cpu: 500m, memory: 512Mi}`, "resources: {cpu: 200m, memory: 256Mi}\nshowcase: {image: defect-showcase/gateway:" + tag + ", agent: defect-showcase/showcase-agent:" + tag + "}"},
		{`-weak, -seed, "{seed}",`, strings.Join(append([]string{`-weak, -seed, "{seed}"`}, weakArgs...), ", ") + ","},
	} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("judge/experiments/reference.yaml has no %q to change", r[0])
		}
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

// A campaign as Kubernetes Jobs on the node, by the runner with the
// Role of deploy/k8s/trials alone (a ServiceAccount's token: nothing
// cluster-wide), gives the answers a local run of the same file gives:
// the reference tool detects all ten defects in each trial, and each weak
// trial exactly the defects its seed makes it detect here. Each trial's
// folder holds what a local one holds, its record the node, the Pod, the
// images' digests and the resources; the Pods were Guaranteed, the run's
// provenance and raw data are written, and nothing of it is left. A
// runner interrupted half-way leaves no Job or Pod and records its trials
// as interrupted; a tool whose image does not exist, or a trial the node
// cannot hold, is recorded as not run with Kubernetes' reason; what a
// runner killed with SIGKILL leaves
// carries a TTL, and -clean removes it.
func kubeCampaign(t *testing.T, node kubeNode, tag string) {
	runnerBin, err := filepath.Abs("../bin/showcase-trials")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(runnerBin); err != nil {
		t.Fatalf("make kube-up builds the binaries (make images): %v", err)
	}
	node.kubectlIn(t, trialsNS, nil, "apply", "--server-side", "-k", "../deploy/k8s/trials")
	t.Cleanup(func() {
		out, err := exec.Command(filepath.Join(kubeBinDir(), "kubectl"), "--kubeconfig", kubeNodeRoot+"/admin.kubeconfig", "delete", "namespace", trialsNS, "--wait=true", "--timeout=120s").CombinedOutput()
		if err != nil {
			t.Errorf("deleting namespace %s: %v\n%s", trialsNS, err, out)
		}
	})
	// The runner's identity: the ServiceAccount's token, bound to the Role only.
	token := strings.TrimSpace(node.kubectlIn(t, trialsNS, nil, "create", "token", "showcase-trials", "--duration=1h"))
	dir := t.TempDir()
	roleConfig := filepath.Join(dir, "role.kubeconfig")
	writeFile(t, roleConfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: node, cluster: {server: "https://10.243.255.2:6443", certificate-authority: %q}}]
users: [{name: runner, user: {token: %q}}]
contexts: [{name: node, context: {cluster: node, user: runner, namespace: %s}}]
current-context: node
`, kubeNodeRoot+"/pki/ca.crt", token, trialsNS))
	if out, err := exec.Command(filepath.Join(kubeBinDir(), "kubectl"), "--kubeconfig", roleConfig, "auth", "can-i", "list", "nodes").CombinedOutput(); err == nil {
		t.Fatalf("the runner's Role reaches the nodes (cluster-wide): %s", out)
	}
	file := filepath.Join(dir, "experiment.yaml")
	writeFile(t, file, campaignFile(t, tag, 6, "1m"))

	// The same file on this machine, for the answers to compare with.
	local := filepath.Join(dir, "local")
	start := time.Now()
	runTrials(t, []string{"PATH=" + filepath.Dir(runnerBin) + string(os.PathListSeparator) + os.Getenv("PATH")}, runnerBin, "-experiment", file, "-out", local)
	t.Logf("6+6 trials here: %s", time.Since(start).Round(time.Second))

	kube := filepath.Join(dir, "kube")
	start = time.Now()
	out := runTrials(t, nil, runnerBin, "-experiment", file, "-on", "kube", "-kubeconfig", roleConfig, "-parallel", "3", "-out", kube)
	t.Logf("6+6 trials as Jobs, 3 at a time: %s", time.Since(start).Round(time.Second))
	run := runOf(t, out)

	localTrials, kubeTrials := loadTrials(t, local), loadTrials(t, kube)
	if len(kubeTrials) != 12 || len(localTrials) != 12 {
		t.Fatalf("%d trials on the node, %d here; want 12 each", len(kubeTrials), len(localTrials))
	}
	for i, kt := range kubeTrials {
		lt := localTrials[i]
		name := fmt.Sprintf("%s trial %d (seed %s)", kt.Tool, kt.Number, kt.Seed)
		if !kt.Ran() || kt.Where != "kube" || kt.Node != "showcase-node" || kt.Pod == "" || kt.Machine == nil || kt.Machine.Cores == 0 {
			t.Errorf("%s: not run %q, where %q, node %q, Pod %q, machine %+v", name, kt.NotRun, kt.Where, kt.Node, kt.Pod, kt.Machine)
		}
		if kt.Resources == nil || kt.Resources.CPU != "200m" || kt.Resources.Memory != "256Mi" {
			t.Errorf("%s: resources %+v", name, kt.Resources)
		}
		digests := map[string]string{}
		for _, im := range kt.Images {
			digests[im.Container] = im.Digest
		}
		for _, c := range []string{"install-agent", "showcase", "tool"} {
			if !strings.Contains(digests[c], "sha256:") {
				t.Errorf("%s: container %s's image has no digest: %+v", name, c, kt.Images)
			}
		}
		for _, f := range []string{"out/report.csv", trials.LogFile, trials.ServerLog, trials.TruthFile, trials.CardFile, trials.RecordFile} {
			if fi, err := os.Stat(filepath.Join(kube, kt.Dir, f)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: its folder lacks %s (%v)", name, f, err)
			}
		}
		if kt.Outcome != "finished" || kt.Requests == 0 {
			t.Errorf("%s: %s after %d requests", name, kt.Outcome, kt.Requests)
		}
		if got, want := detectedIDs(kt), detectedIDs(lt); kt.Tool == "replay" && len(got) != 10 || !slices.Equal(got, want) || lt.Seed != kt.Seed {
			t.Errorf("%s: detected %v on the node, %v here (seed %s)", name, got, want, lt.Seed)
		}
	}
	// The Pods were Guaranteed: requests equal to limits, every container.
	var prov trials.Provenance
	readJSON(t, filepath.Join(kube, trials.RunFile), &prov)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if prov.ExperimentSHA256 != hex.EncodeToString(sum[:]) || prov.Where != "kube" || prov.Run != run || prov.Namespace != trialsNS || prov.Parallel != 3 {
		t.Errorf("run.json: %+v", prov)
	}
	if copied, err := os.ReadFile(filepath.Join(kube, trials.ExperimentFile)); err != nil || string(copied) != string(raw) {
		t.Errorf("the experiment file is not copied into the run: %v", err)
	}
	if prov.Showcase.Version == "" || !strings.Contains(prov.Showcase.Digest, "sha256:") || len(prov.Machines) == 0 || prov.Tools[0].Digest == "" {
		t.Errorf("run.json lacks the showcase's version or digest, a tool's digest or the machines: %+v", prov)
	}
	rows := readCSV(t, filepath.Join(kube, trials.RawCSV))
	if len(rows) != 1+12*len(catalogue.Defects) {
		t.Errorf("trials.csv: %d rows, want a header and one per trial and defect", len(rows))
	}
	md, err := os.ReadFile(filepath.Join(kube, trials.ReportMarkdown))
	if err != nil || !strings.Contains(string(md), "## Provenance") || !strings.Contains(string(md), "Kubernetes Jobs") {
		t.Errorf("report.md: %v\n%s", err, md)
	}
	// Rebuilt from the folder alone, the report says the same.
	before := string(md)
	if out, err := exec.Command(filepath.Join(filepath.Dir(runnerBin), "showcase-score"), "-rebuild", kube).CombinedOutput(); err != nil {
		t.Errorf("showcase-score -rebuild: %v\n%s", err, out)
	} else if after, _ := os.ReadFile(filepath.Join(kube, trials.ReportMarkdown)); string(after) != before {
		t.Errorf("the report rebuilt from the folder differs from the one written")
	}
	leftBy(t, node, run, "")

	t.Run("a Pod of a trial is Guaranteed, restricted and fenced", func(t *testing.T) {
		// A trial long enough to look at its Pod while it runs.
		f := filepath.Join(dir, "slow.yaml")
		writeFile(t, f, weakOnly(campaignFile(t, tag, 1, "40s", "-p", "1", "-pause", "30s")))
		cmd, out := startTrials(t, runnerBin, "-experiment", f, "-on", "kube", "-kubeconfig", roleConfig, "-parallel", "1", "-out", filepath.Join(dir, "slow"))
		run := waitRun(t, out)
		pod := waitRunning(t, node, run)
		var p struct {
			Status struct{ QOSClass string }
		}
		if err := json.Unmarshal([]byte(node.kubectlIn(t, trialsNS, nil, "get", "pod", pod, "-o", "json")), &p); err != nil || p.Status.QOSClass != "Guaranteed" {
			t.Errorf("Pod %s: QoS %q (%v), want Guaranteed", pod, p.Status.QOSClass, err)
		}
		job := node.kubectlIn(t, trialsNS, nil, "get", "jobs", "-l", "trials.defect-showcase.org/run="+run, "-o", "jsonpath={.items[0].spec.ttlSecondsAfterFinished} {.items[0].metadata.labels}")
		if !strings.HasPrefix(job, "600 ") || !strings.Contains(job, `"app.kubernetes.io/managed-by":"showcase-trials"`) {
			t.Errorf("the Job carries no TTL or labels: %s", job)
		}
		owner := node.kubectlIn(t, trialsNS, nil, "get", "networkpolicies", "-l", "trials.defect-showcase.org/run="+run, "-o", "jsonpath={.items[0].metadata.ownerReferences[0].kind} {.items[0].spec.policyTypes}")
		if owner != `Job ["Ingress","Egress"]` {
			t.Errorf("the trial's NetworkPolicy: %s", owner)
		}
		// Its progress, which the live page reads: running since its Pod
		// started, with what its instance has seen, sent through the
		// agent's log (the runner reaches nothing else in the Pod).
		var live *trials.Live
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && live == nil; time.Sleep(500 * time.Millisecond) {
			if p, _ := trials.ReadProgress(filepath.Join(dir, "slow")); p != nil && p.Where == "kube" && p.Run == run && len(p.Trials) == 1 &&
				p.Trials[0].State == trials.StateRunning && p.Trials[0].Start != nil {
				live = p.Trials[0].Live
			}
		}
		if live == nil || live.At.IsZero() {
			t.Errorf("no live stages of the running trial in %s within 30 s", filepath.Join(dir, "slow", trials.ProgressFile))
		} else {
			t.Logf("the trial's instance, through the agent's log: %d requests, reached %v, triggered %v", live.Requests, live.Reached, live.Triggered)
		}
		// Ctrl-C half-way: the runner deletes its Job and Pod, records the
		// trial as interrupted, with what its tool found so far.
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			t.Fatalf("the runner did not end within 2 minutes of SIGINT:\n%s", out)
		}
		leftBy(t, node, run, "after Ctrl-C")
		ts := loadTrials(t, filepath.Join(dir, "slow"))
		if len(ts) != 1 || ts[0].Outcome != "interrupted" || len(ts[0].Signals) == 0 || ts[0].Signals[0].Signal != "SIGINT" {
			t.Errorf("after Ctrl-C: %+v\n%s", ts, out)
		}
	})

	t.Run("an image that does not exist is recorded as not run", func(t *testing.T) {
		f := filepath.Join(dir, "missing.yaml")
		writeFile(t, f, strings.Replace(campaignFile(t, tag, 1, "30s"), "image: defect-showcase/showcase-replay:"+tag+"\n    command: [showcase-replay, -base", "image: defect-showcase/no-such-tool:"+tag+"\n    command: [showcase-replay, -base", 1))
		// The administrator's kubeconfig: the runner reads the nodes, and
		// runs what their CPU holds at once.
		out := runTrials(t, nil, runnerBin, "-experiment", f, "-on", "kube", "-kubeconfig", kubeNodeRoot+"/admin.kubeconfig", "-namespace", trialsNS, "-out", filepath.Join(dir, "missing"))
		if !regexp.MustCompile(`\d+ trials at a time: what the nodes' allocatable CPU holds`).MatchString(out) {
			t.Errorf("the default parallelism is not said:\n%s", out)
		}
		ts := loadTrials(t, filepath.Join(dir, "missing"))
		if len(ts) != 2 || ts[0].Tool != "replay" || !strings.Contains(ts[0].NotRun, "no-such-tool") ||
			!regexp.MustCompile(`ErrImagePull|ImagePullBackOff`).MatchString(ts[0].NotRun) || !ts[1].Ran() {
			t.Fatalf("trials: %+v", ts)
		}
		md, _ := os.ReadFile(filepath.Join(dir, "missing", trials.ReportMarkdown))
		if !strings.Contains(string(md), "Trial 1 could not run") || !strings.Contains(string(md), "No trial of it ran") {
			t.Errorf("the report does not name the trial not run:\n%s", md)
		}
		leftBy(t, node, runOf(t, out), "")
	})

	t.Run("a trial the node cannot hold is recorded as not run", func(t *testing.T) {
		f := filepath.Join(dir, "unschedulable.yaml")
		writeFile(t, f, strings.Replace(weakOnly(campaignFile(t, tag, 1, "30s")), "cpu: 200m", "cpu: \"3\"", 1))
		out := runTrials(t, nil, runnerBin, "-experiment", f, "-on", "kube", "-kubeconfig", roleConfig, "-parallel", "1", "-start-timeout", "10s", "-out", filepath.Join(dir, "unschedulable"))
		ts := loadTrials(t, filepath.Join(dir, "unschedulable"))
		if len(ts) != 1 || !strings.Contains(ts[0].NotRun, "not started within 10s: Unschedulable") || !strings.Contains(ts[0].NotRun, "Insufficient cpu") {
			t.Errorf("trials: %+v", ts)
		}
		leftBy(t, node, runOf(t, out), "")
	})

	t.Run("killed, it leaves what a TTL and -clean remove", func(t *testing.T) {
		f := filepath.Join(dir, "killed.yaml")
		writeFile(t, f, weakOnly(campaignFile(t, tag, 1, "40s", "-p", "1", "-pause", "30s")))
		cmd, out := startTrials(t, runnerBin, "-experiment", f, "-on", "kube", "-kubeconfig", roleConfig, "-parallel", "2", "-out", filepath.Join(dir, "killed"))
		run := waitRun(t, out)
		waitRunning(t, node, run)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if left := node.kubectlIn(t, trialsNS, nil, "get", "jobs", "-l", "trials.defect-showcase.org/run="+run, "-o", "name"); left == "" {
			t.Fatalf("a runner killed left no Job: the test shows nothing")
		}
		clean := runTrials(t, nil, runnerBin, "-clean", "-on", "kube", "-kubeconfig", roleConfig)
		if !strings.Contains(clean, "deleted Job "+trialsNS+"/trial-"+run) {
			t.Errorf("-clean:\n%s", clean)
		}
		leftBy(t, node, run, "after -clean")
	})
}

// weakOnly is an experiment file without its reference tool.
func weakOnly(file string) string {
	i, j := strings.Index(file, "  - name: replay\n"), strings.Index(file, "  - name: weak\n")
	return file[:i] + file[j:]
}

// runTrials runs the runner to its end; its output.
func runTrials(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("showcase-trials %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// watchPage starts showcase-trials -watch dir on a loopback port of its
// own, stopped when the test ends, and is the live page's URL it names.
func watchPage(t *testing.T, bin, dir string) string {
	t.Helper()
	cmd, said := startTrials(t, bin, "-watch", dir, "-serve", "127.0.0.1:0")
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, u, ok := strings.Cut(said.String(), "live page: "); ok {
			page, _, _ := strings.Cut(u, " ")
			return page
		}
	}
	t.Fatalf("showcase-trials -watch served no page:\n%s", said.String())
	return ""
}

// startTrials starts the runner; its output, as it comes.
func startTrials(t *testing.T, bin string, args ...string) (*exec.Cmd, *syncLog) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	log := &syncLog{}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
	})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		wg.Wait()
	})
	return cmd, log
}

var runLine = regexp.MustCompile(`run (r[0-9a-f]{8}) in namespace`)

func runOf(t *testing.T, out string) string {
	t.Helper()
	m := runLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the runner did not name its run:\n%s", out)
	}
	return m[1]
}

func waitRun(t *testing.T, out *syncLog) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := runLine.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("the runner did not name its run:\n%s", out.String())
	return ""
}

// waitRunning waits until a Pod of the run has its tool running; its name.
func waitRunning(t *testing.T, node kubeNode, run string) string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		out := node.kubectlIn(t, trialsNS, nil, "get", "pods", "-l", "trials.defect-showcase.org/run="+run,
			"-o", `jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[?(@.name=="tool")].state.running.startedAt}{"\n"}{end}`)
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				return f[0]
			}
		}
	}
	t.Fatalf("no Pod of run %s has its tool running within 2 minutes:\n%s", run, node.kubectlIn(t, trialsNS, nil, "get", "pods", "-o", "wide"))
	return ""
}

// leftBy fails if anything of the run is left in the namespace.
func leftBy(t *testing.T, node kubeNode, run, when string) {
	t.Helper()
	left := node.kubectlIn(t, trialsNS, nil, "get", "jobs,pods,networkpolicies", "-l", "trials.defect-showcase.org/run="+run, "-o", "name")
	if strings.TrimSpace(left) != "" {
		t.Errorf("run %s left (%s):\n%s", run, when, left)
	}
}

func loadTrials(t *testing.T, dir string) []trials.Trial {
	t.Helper()
	ts, err := trials.LoadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func detectedIDs(t trials.Trial) []catalogue.ID {
	var ids []catalogue.ID
	for _, s := range t.Stages {
		if s.Detected {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func readCSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// A campaign with coverage: code, as Kubernetes Jobs whose instance is the
// gateway's -cover image (make images COVER=1, loaded into the node),
// brings back from each Pod, through the agent, what a local run of the
// same file (the cover build as a process) records: the same API coverage,
// the reference tool's run of every planted defect's code, the statements
// over time.
func kubeCoverage(t *testing.T, node kubeNode, tag string) {
	run(t, nil, "make", "-C", "..", "images", "COVER=1", "SHOWCASE_TAG="+tag)
	nodeScript(t, "load", "defect-showcase/gateway:"+tag+"-cover")
	runnerBin, err := filepath.Abs("../bin/showcase-trials")
	if err != nil {
		t.Fatal(err)
	}
	coverBin, err := filepath.Abs("../bin/cover/gateway")
	if err != nil {
		t.Fatal(err)
	}
	node.kubectlIn(t, trialsNS, nil, "apply", "--server-side", "-k", "../deploy/k8s/trials")
	t.Cleanup(func() {
		out, err := exec.Command(filepath.Join(kubeBinDir(), "kubectl"), "--kubeconfig", kubeNodeRoot+"/admin.kubeconfig", "delete", "namespace", trialsNS, "--wait=true", "--timeout=120s").CombinedOutput()
		if err != nil {
			t.Errorf("deleting namespace %s: %v\n%s", trialsNS, err, out)
		}
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "experiment.yaml")
	f := campaignFile(t, tag, 2, "1m")
	f = strings.Replace(f, "defect-showcase/gateway:"+tag+",", "defect-showcase/gateway:"+tag+"-cover,", 1)
	f = strings.Replace(f, "\ntools:", "\ncoverage: {kind: code, every: 1s}\ntools:", 1)
	writeFile(t, file, f)
	local := filepath.Join(dir, "local")
	runTrials(t, []string{"PATH=" + filepath.Dir(runnerBin) + string(os.PathListSeparator) + os.Getenv("PATH")}, runnerBin, "-experiment", file, "-cover-binary", coverBin, "-out", local)
	kube := filepath.Join(dir, "kube")
	out := runTrials(t, nil, runnerBin, "-experiment", file, "-on", "kube", "-kubeconfig", kubeNodeRoot+"/admin.kubeconfig", "-namespace", trialsNS, "-parallel", "2", "-out", kube)
	localTrials, kubeTrials := loadTrials(t, local), loadTrials(t, kube)
	if len(kubeTrials) != len(localTrials) || len(kubeTrials) == 0 {
		t.Fatalf("%d trials on the node, %d here", len(kubeTrials), len(localTrials))
	}
	for i, kt := range kubeTrials {
		lt := localTrials[i]
		name := fmt.Sprintf("%s trial %d", kt.Tool, kt.Number)
		kc, lc := kt.Coverage, lt.Coverage
		if kc == nil || lc == nil || kc.Kind != trials.CoverageCode || lc.Kind != trials.CoverageCode || kc.Code == nil || kc.Code.Missing != "" || len(kc.Series) == 0 {
			t.Fatalf("%s: coverage on the node %+v, here %+v", name, kc, lc)
		}
		if fmt.Sprint(kc.Criteria) != fmt.Sprint(lc.Criteria) || kc.TCL != lc.TCL {
			t.Errorf("%s: API coverage on the node %v TCL %d, here %v TCL %d", name, kc.Criteria, kc.TCL, lc.Criteria, lc.TCL)
		}
		executed := func(c *trials.TrialCoverage) []string {
			var ids []string
			for _, d := range c.Code.Defects {
				if d.Executed {
					ids = append(ids, d.ID)
				}
			}
			return ids
		}
		if k, l := executed(kc), executed(lc); !slices.Equal(k, l) || kt.Tool == "replay" && len(k) != len(catalogue.Defects) {
			t.Errorf("%s: planted code executed on the node %v, here %v", name, k, l)
		}
		if kc.Code.Statements.Covered == 0 || kc.Code.Statements.Total != lc.Code.Statements.Total {
			t.Errorf("%s: statements on the node %s, here %s", name, kc.Code.Statements, lc.Code.Statements)
		}
		t.Logf("%s: API %d of %d targets, TCL %d; statements %s on the node, %s here", name, kc.Targets, kc.Of, kc.TCL, kc.Code.Statements, lc.Code.Statements)
	}
	leftBy(t, node, runOf(t, out), "")
}
