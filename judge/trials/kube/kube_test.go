package kube

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/budget"
	"github.com/defectshowcase/showcase/judge/trials/runner"
)

// A Job's name is a label value (the Job controller labels its Pods with
// it) and a DNS label, whatever the tool is called.
func TestJobName(t *testing.T) {
	for _, c := range []struct {
		tool string
		want string
	}{
		{"replay", "trial-r0011aabb-replay-03"},
		{"Schemathesis 4.9.5", "trial-r0011aabb-schemathesis-4-9-5-03"},
		{strings.Repeat("very long name ", 10), ""},
		{"∅", "trial-r0011aabb-tool-03"},
	} {
		got := jobName("r0011aabb", c.tool, 3)
		if len(got) > 63 || !strings.HasSuffix(got, "-03") || strings.Contains(got, "--") || (c.want != "" && got != c.want) {
			t.Errorf("%q: %q (%d characters)", c.tool, got, len(got))
		}
	}
}

// Every container of a trial's Pod has requests equal to its limits (the
// Pod is Guaranteed), runs as no root with nothing to escalate (the
// restricted profile), and the instance is a native sidecar that the tool
// waits for.
func TestTrialPod(t *testing.T) {
	c := &Cluster{Namespace: "ns", Run: "r1", Showcase: "s:1", Agent: "a:1", CPU: resource.MustParse("250m"), Memory: resource.MustParse("256Mi"),
		StartTimeout: time.Minute, TTL: 10 * time.Minute, Retries: 2}
	s := runner.Spec{Tool: runner.Tool{Name: "x", Image: "x:1", Command: []string{"x"}}, Defects: catalogue.None(),
		Limits: budget.Limits{Budget: time.Minute, InterruptGrace: 10 * time.Second, TermGrace: 5 * time.Second}}
	tr := &trials.Trial{Command: []string{"x", "-u", base}}
	j := c.job("trial-r1-x-01", map[string]string{LabelJob: "trial-r1-x-01"}, s, tr)
	p := j.Spec.Template.Spec
	if *j.Spec.BackoffLimit != 2 || *j.Spec.TTLSecondsAfterFinished != 600 || p.RestartPolicy != corev1.RestartPolicyNever || *p.AutomountServiceAccountToken {
		t.Errorf("job %+v", j.Spec)
	}
	// A lost attempt (a disruption, or the agent stopped by a signal)
	// counts against the retries; the tool's own failure fails the Job; a
	// Pod is replaced only once it has failed.
	pf := j.Spec.PodFailurePolicy
	if pf == nil || len(pf.Rules) != 2 || *j.Spec.PodReplacementPolicy != batchv1.Failed {
		t.Fatalf("pod failure policy %+v, replacement %v", pf, j.Spec.PodReplacementPolicy)
	}
	if r := pf.Rules[0]; r.Action != batchv1.PodFailurePolicyActionCount || len(r.OnPodConditions) != 1 || r.OnPodConditions[0].Type != corev1.DisruptionTarget {
		t.Errorf("first rule %+v", r)
	}
	if r := pf.Rules[1]; r.Action != batchv1.PodFailurePolicyActionFailJob || *r.OnExitCodes.ContainerName != toolName ||
		r.OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpNotIn || fmt.Sprint(r.OnExitCodes.Values) != "[0 143]" {
		t.Errorf("second rule %+v", r.OnExitCodes)
	}
	// Three attempts of at most 1m start, 1m budget, 15 s of graces and
	// 120 s, with the back-offs of 10 and 20 s between them.
	if got, want := *j.Spec.ActiveDeadlineSeconds, int64(3*(60+60+15+120)+10+20); got != want {
		t.Errorf("deadline %d s, want %d", got, want)
	}
	if len(p.TopologySpreadConstraints) != 1 {
		t.Fatalf("the trial's Pod is not spread over the nodes: %+v", p.TopologySpreadConstraints)
	}
	if sp := p.TopologySpreadConstraints[0]; sp.TopologyKey != corev1.LabelHostname || sp.MaxSkew != 1 ||
		sp.WhenUnsatisfiable != corev1.ScheduleAnyway || sp.LabelSelector.MatchLabels[LabelRun] != "r1" {
		t.Errorf("the trial's Pod's spread: %+v", sp)
	}
	all := append(append([]corev1.Container{}, p.InitContainers...), p.Containers...)
	if len(all) != 3 {
		t.Fatalf("%d containers", len(all))
	}
	for _, ct := range all {
		r := ct.Resources
		if !r.Requests.Cpu().Equal(*r.Limits.Cpu()) || !r.Requests.Memory().Equal(*r.Limits.Memory()) || r.Limits.Cpu().String() != "250m" {
			t.Errorf("%s: requests %v, limits %v", ct.Name, r.Requests, r.Limits)
		}
		sc := ct.SecurityContext
		if sc == nil || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot || len(sc.Capabilities.Drop) != 1 || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: %+v", ct.Name, sc)
		}
		if ct.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s pulls %s", ct.Name, ct.ImagePullPolicy)
		}
	}
	side := p.InitContainers[1]
	if side.Name != showcase || side.RestartPolicy == nil || *side.RestartPolicy != corev1.ContainerRestartPolicyAlways || side.StartupProbe == nil {
		t.Errorf("the instance is not a native sidecar with a start probe: %+v", side)
	}
	env := map[string]string{}
	for _, e := range side.Env {
		env[e.Name] = e.Value
	}
	if env["DEFECTS"] != "none" || env["ADDR"] != "127.0.0.1:8080" || env["ADMIN_ADDR"] != "127.0.0.1:9090" {
		t.Errorf("the instance's settings: %v", env)
	}
	tool := p.Containers[0]
	if got := strings.Join(tool.Command, " "); got != "/agent/showcase-agent run -dir /trial -admin http://127.0.0.1:9090 -budget 1m0s -interrupt-grace 10s -term-grace 5s -- x -u http://127.0.0.1:8080" {
		t.Errorf("the tool's command: %s", got)
	}
	if *p.TerminationGracePeriodSeconds < 15 {
		t.Errorf("the Pod's grace %d is shorter than the tool's graces", *p.TerminationGracePeriodSeconds)
	}
}

// Kubernetes' reasons, as a trial not run records them.
func TestReasons(t *testing.T) {
	waiting := func(name, reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Image: name + ":1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	p := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting(toolName, "ErrImagePull", "not found")}}}
	if got := cannotRun(p); got != "container tool (tool:1): ErrImagePull: not found" {
		t.Errorf("image: %q", got)
	}
	p = &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting(toolName, "ContainerCreating", "")}}}
	if got := cannotRun(p); got != "" {
		t.Errorf("creating: %q", got)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu."}}
	if got := pending(p); got != "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu." {
		t.Errorf("unschedulable: %q", got)
	}
	p = &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}}
	if got := ended(p); got != "Evicted: The node was low on resource: memory." {
		t.Errorf("evicted: %q", got)
	}
	p = &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: toolName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}}
	if got := ended(p); got != "container tool: OOMKilled" {
		t.Errorf("OOM: %q", got)
	}
}

// A Pod that started was lost (never scored) when Kubernetes names a
// disruption, when it was deleted, or when the agent says a signal
// stopped it; never once its tool ended of itself.
func TestLostPod(t *testing.T) {
	term := func(code int32) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{Name: toolName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
	}
	now := metav1.Now()
	taint := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: taintEvicted,
		Message: "Taint manager: deleting due to NoExecute taint"}
	for _, c := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"running", corev1.Pod{}, ""},
		{"its node's taint", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{taint}}},
			"DeletionByTaintManager: Taint manager: deleting due to NoExecute taint"},
		{"deleted", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, "the Pod was deleted"},
		{"stopped", corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: term(143)}}, "the Pod was stopped (its tool's agent exited 143)"},
		{"ended, then its node's taint", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{taint}, ContainerStatuses: term(0)}}, ""},
		{"the agent failed", corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: term(1)}}, ""},
	} {
		if got := lostPod(&c.pod); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The cleanup force-deletes a Pod no kubelet ends: evicted by its node's
// taint, or past its deletion's deadline; it waits for any other.
func TestUnattended(t *testing.T) {
	at := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	deadline := metav1.NewTime(at)
	p := &corev1.Pod{}
	if unattended(p, at.Add(time.Hour)) {
		t.Error("a Pod not being deleted")
	}
	p.DeletionTimestamp = &deadline
	if unattended(p, at.Add(unattendedAfter)) || !unattended(p, at.Add(unattendedAfter+time.Second)) {
		t.Error("a Pod past its deletion's deadline")
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: taintEvicted}}
	if !unattended(p, at.Add(-time.Minute)) {
		t.Error("a Pod its node's taint evicted")
	}
}

// A Pod taken away before its tool started (its node's taint evicted it
// while it was Pending, or it was deleted at once) is a lost attempt, and
// the Job's next Pod is followed; a Pod that cannot run (its image) is
// not run; a Pod whose tool runs has started. Against client-go's fake
// clientset, whose watch delivers each change as the API server would.
func TestLostBeforeStart(t *testing.T) {
	const job = "trial-r1-x-01"
	lbl := map[string]string{LabelJob: job}
	pod := func(name string, statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name), Labels: lbl},
			Spec: corev1.PodSpec{NodeName: "worker-1"}, Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: statuses}}
	}
	running := corev1.ContainerStatus{Name: toolName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	pullErr := corev1.ContainerStatus{Name: toolName, Image: "x:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}

	client := fake.NewClientset()
	c := &Cluster{Client: client, Namespace: "ns", StartTimeout: 20 * time.Second}
	pods := client.CoreV1().Pods("ns")
	ctx := t.Context()
	type result struct {
		pod       *corev1.Pod
		lost, why string
	}
	// watches is how many watches of Pods the client has been asked for.
	watches := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "watch" && a.GetResource().Resource == "pods" {
				n++
			}
		}
		return n
	}
	// watching waits until n more watches of Pods than before are up.
	watching := func(before, n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); watches() < before+n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d watches of Pods, want %d", watches()-before, n)
			}
		}
	}
	wait := func(next bool, seen map[types.UID]bool, change func()) result {
		t.Helper()
		before := watches()
		done := make(chan result, 1)
		go func() {
			var r result
			if next {
				r.pod, r.lost, r.why = c.nextAttempt(ctx, job, seen)
			} else {
				r.pod, r.lost, r.why = c.waitStarted(ctx, job, seen)
			}
			done <- r
		}()
		watching(before, 1) // waitStarted's, or nextAttempt's for the next Pod
		change()
		select {
		case r := <-done:
			return r
		case <-time.After(15 * time.Second):
			t.Fatal("no answer within 15 s")
			return result{}
		}
	}
	create := func(p *corev1.Pod) {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Evicted by its node's taint while Pending: lost, with Kubernetes' words.
	seen := map[types.UID]bool{}
	create(pod("p1"))
	r := wait(false, seen, func() {
		p := pod("p1")
		now := metav1.Now()
		p.DeletionTimestamp = &now
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: taintEvicted,
			Message: "Taint manager: deleting due to NoExecute taint"}}
		if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if r.pod == nil || r.pod.Name != "p1" || r.why != "" || r.lost != "before it started: DeletionByTaintManager: Taint manager: deleting due to NoExecute taint" {
		t.Errorf("evicted before it started: %+v", r)
	}
	seen["p1"] = true

	// The Job's next Pod, deleted at once (a forced deletion) before it
	// started: lost too.
	r = wait(true, seen, func() {
		before := watches()
		create(pod("p2"))
		watching(before, 1) // waitStarted's, which has listed p2
		if err := pods.Delete(ctx, "p2", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if r.pod == nil || r.pod.Name != "p2" || r.lost != "before it started: the Pod was deleted" {
		t.Errorf("deleted before it started: %+v", r)
	}
	seen["p2"] = true

	// The next one runs its tool: started, neither lost nor not run.
	r = wait(true, seen, func() { create(pod("p3", running)) })
	if r.pod == nil || r.pod.Name != "p3" || r.lost != "" || r.why != "" {
		t.Errorf("started: %+v", r)
	}
	seen["p3"] = true

	// A Pod that cannot run is not run, not lost: a retry would meet it again.
	r = wait(true, seen, func() { create(pod("p4", pullErr)) })
	if r.pod == nil || r.lost != "" || r.why != "container tool (x:1): ErrImagePull" {
		t.Errorf("its image: %+v", r)
	}
}
