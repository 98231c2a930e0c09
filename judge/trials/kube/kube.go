// Package kube runs trials on a Kubernetes cluster: each trial a Job of
// one Pod, holding a fresh showcase (the gateway's image, one process) as
// a native sidecar and the tool's container, which reaches the instance on
// the Pod's loopback. Both containers are given requests equal to limits
// (Guaranteed QoS), so that trials sharing a node do not take each
// other's CPU; the Pod meets the restricted Pod Security profile, and a
// NetworkPolicy of its own lets no packet in or out of it. In the tool's
// container showcase-agent (package agent) runs the tool within its
// budget and writes the trial's folder to its log, which the runner
// follows; the instance's log is followed too. Everything created carries
// the run's labels, the Pods their Job as owner, the Jobs a TTL.
//
// It speaks to the cluster as its own tools do, through client-go: it
// watches the Pod rather than polling it, and needs Jobs, Pods, their logs
// and NetworkPolicies in one namespace, nothing cluster-wide (listing the
// nodes, for the default parallelism, is optional).
package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/judge/trials/runner"
)

// The labels on everything a run creates.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "showcase-trials"
	LabelRun       = "trials.defect-showcase.org/run"
	LabelTool      = "trials.defect-showcase.org/tool"
	LabelTrial     = "trials.defect-showcase.org/trial"
	LabelJob       = "trials.defect-showcase.org/job"
)

// Inside the Pod.
const (
	agentDir    = "/agent"
	trialDir    = "/trial"
	base        = "http://127.0.0.1:8080"
	admin       = "http://127.0.0.1:9090"
	toolName    = "tool"
	showcase    = "showcase"
	installName = "install-agent"
	nonRoot     = 65532 // the showcase's images' user, and the tool's
)

// Cluster is where the trials run, and how.
type Cluster struct {
	Client    kubernetes.Interface
	Namespace string
	// Run names this run's objects (the label LabelRun).
	Run string
	// Showcase is the instance's image (the gateway's), Agent the image
	// holding showcase-agent.
	Showcase, Agent string
	// CPU and Memory are each container's requests and limits.
	CPU, Memory resource.Quantity
	// StartTimeout is how long a trial may take to start (scheduled, its
	// images there, the instance ready) before it is recorded as not run.
	StartTimeout time.Duration
	// TTL is how long a finished Job stays if the runner does not delete
	// it (the runner was killed).
	TTL time.Duration
	// Retries is how many times a trial whose attempt was lost runs
	// again: its Job's backoffLimit.
	Retries int
}

// Connect is a client for the kubeconfig (""; the usual: $KUBECONFIG,
// ~/.kube/config, or in a Pod its service account), and the namespace
// (""; the kubeconfig's).
func Connect(kubeconfig, namespace string) (kubernetes.Interface, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	if namespace == "" {
		if namespace, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("kubeconfig: %w", err)
		}
	}
	cfg.UserAgent = "showcase-trials"
	c, err := kubernetes.NewForConfig(cfg)
	return c, namespace, err
}

// NewRun is a run's name: short, random, a label value.
func NewRun() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "r" + hex.EncodeToString(b)
}

// Parallel is how many trials the nodes' allocatable CPU holds at once,
// each trial's Pod asking twice cpu (the tool and the instance); an error
// when the nodes cannot be listed (the runner's Role needs not allow it).
func Parallel(ctx context.Context, c kubernetes.Interface, cpu resource.Quantity) (int, error) {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	per := 2 * cpu.MilliValue()
	if per <= 0 {
		return 0, errors.New("no CPU per trial")
	}
	n := 0
	for _, nd := range nodes.Items {
		if nd.Spec.Unschedulable || !ready(nd) {
			continue
		}
		n += int(nd.Status.Allocatable.Cpu().MilliValue() / per)
	}
	if n == 0 {
		return 0, fmt.Errorf("no Ready node has %dm of CPU allocatable for a trial", per)
	}
	return n, nil
}

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Execute runs the trial as a Job and collects its folder into s.Dir.
// Each of the Job's Pods is an attempt: one lost (evicted, preempted,
// deleted by anyone but the runner, gone with its node) is recorded,
// never scored, and the Job's next Pod is followed, up to Retries; the
// Job's pod failure policy is what makes Kubernetes run it again.
func (c *Cluster) Execute(ctx context.Context, s runner.Spec, t *trials.Trial) error {
	if s.Tool.Image == "" {
		return fmt.Errorf("%s: no image: on a cluster each tool names the image its command runs in", s.Tool.Name)
	}
	name := jobName(c.Run, s.Tool.Name, t.Number)
	t.Where = "kube"
	t.URL = base
	t.Command = runner.Expand(s.Tool.Command, base, t.Seed, trialDir+"/"+trials.ToolDir, s.Defects)
	t.Resources = &trials.Resources{CPU: c.CPU.String(), Memory: c.Memory.String()}
	lbl := map[string]string{LabelManagedBy: ManagedBy, LabelRun: c.Run, LabelTool: label(s.Tool.Name), LabelTrial: strconv.Itoa(t.Number), LabelJob: name}
	s.Say("%s trial %d: starting as Job %s/%s (seed %s): %s", t.Tool, t.Number, c.Namespace, name, t.Seed, strings.Join(t.Command, " "))

	// The fence first, so that the Pod never runs without it; then the
	// Job; then the fence owned by the Job, to go with it.
	jobs := c.Client.BatchV1().Jobs(c.Namespace)
	pols := c.Client.NetworkingV1().NetworkPolicies(c.Namespace)
	// Resumed, a Job the earlier runner made is taken up again as it is
	// (running, or ended while no runner was there), its logs read from
	// their start; one that is gone (ended and deleted at its TTL) took its
	// trial's result with it: that is a lost attempt, and the trial runs
	// again.
	pol, err := pols.Create(ctx, c.policy(name, lbl), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) && s.Resumed {
		pol, err = pols.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("the trial's NetworkPolicy: %w", err)
	}
	job, err := jobs.Create(ctx, c.job(name, lbl, s, t), metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err) && s.Resumed:
		if job, err = jobs.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("the trial's Job: %w", err)
		}
		s.Say("%s trial %d: re-attached to Job %s/%s, made %s", t.Tool, t.Number, c.Namespace, name, job.CreationTimestamp.UTC().Format(time.RFC3339))
	case err != nil:
		_ = pols.Delete(context.WithoutCancel(ctx), pol.Name, metav1.DeleteOptions{})
		return fmt.Errorf("the trial's Job: %w", err)
	case s.StartedBefore:
		why := fmt.Sprintf("its Job was gone when the runner came back (ended and deleted at its TTL, %s, or deleted by someone): its result went with it", c.TTL)
		t.Attempts = append(t.Attempts, trials.Attempt{Number: 1, End: time.Now().UTC(), Ended: trials.AttemptLost, Why: why})
		s.Say("%s trial %d: %s; it runs again", t.Tool, t.Number, why)
		if s.Lost != nil {
			s.Lost(t.Attempts)
		}
	}
	if len(pol.OwnerReferences) == 0 {
		pol.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}
		if _, err := pols.Update(ctx, pol, metav1.UpdateOptions{}); err != nil {
			s.Say("%s trial %d: the NetworkPolicy's owner: %v (it stays until -clean)", t.Tool, t.Number, err)
		}
	}
	// Whatever happens next, the Job, its fence and its Pods go before
	// Execute returns.
	defer func() {
		if err := c.deleteJob(context.WithoutCancel(ctx), name); err != nil {
			s.Say("%s trial %d: deleting Job %s: %v", t.Tool, t.Number, name, err)
		}
	}()

	seen := map[types.UID]bool{}
	for pods := 1; ; pods++ { // the Job's Pods so far
		a := trials.Attempt{Number: len(t.Attempts) + 1}
		var pod *corev1.Pod
		var lost, why string
		if pods == 1 {
			pod, lost, why = c.waitStarted(ctx, name, seen)
		} else {
			pod, lost, why = c.nextAttempt(ctx, name, seen)
		}
		if pod != nil {
			seen[pod.UID] = true
			a.Pod, a.Node = pod.Name, pod.Spec.NodeName
			t.Pod, t.Node = pod.Name, pod.Spec.NodeName
		}
		if lost == "" && (pod == nil || why != "") {
			a.End, a.Ended, a.Why = time.Now().UTC(), trials.AttemptNotRun, why
			t.Attempts = append(t.Attempts, a)
			t.NotRun = why
			if n := t.Lost(); n > 0 {
				t.NotRun = fmt.Sprintf("%d attempts lost, then %s", n, why)
			}
			return nil
		}
		// A Pod taken away before its tool started (its node lost while
		// the Pod was Pending or its containers were being made) is lost
		// as one that ran is: the Job counts it failed and makes the next.
		if lost == "" {
			started := time.Now()
			a.Start = ptr.To(started.UTC())
			if s.Started != nil {
				s.Started(started)
			}
			var err error
			lost, err = c.attempt(ctx, s, t, pod)
			if lost == "" {
				a.End, a.Ended = time.Now().UTC(), trials.AttemptRan
				if !t.Ran() {
					a.Ended, a.Why = trials.AttemptNotRun, t.NotRun
				}
				t.Attempts = append(t.Attempts, a)
				return err
			}
			keepAttempt(s.Dir, a.Number)
		}
		a.End, a.Ended, a.Why = time.Now().UTC(), trials.AttemptLost, lost
		t.Attempts = append(t.Attempts, a)
		if pods > c.Retries {
			t.NotRun = fmt.Sprintf("lost %d times (retries: %d), the last on %s: %s", pods, c.Retries, nodeOf(a.Node), lost)
			return nil
		}
		s.Say("%s trial %d: attempt %d lost on %s: %s; it runs again once Kubernetes counts its Pod failed (a node that is gone: once its Node is deleted or tainted %s)",
			t.Tool, t.Number, a.Number, nodeOf(a.Node), lost, corev1.TaintNodeOutOfService)
		if s.Lost != nil {
			s.Lost(t.Attempts)
		}
	}
}

// nodeOf names the node a Pod was bound to, if any.
func nodeOf(node string) string {
	if node == "" {
		return "no node (not yet scheduled)"
	}
	return "node " + node
}

// attempt follows one of the trial's Pods, started, to its end, and reads
// its folder into the trial; or says why the attempt was lost (then the
// trial holds nothing of it).
func (c *Cluster) attempt(ctx context.Context, s runner.Spec, t *trials.Trial, pod *corev1.Pod) (lost string, err error) {
	// The instance's log and the tool's, followed until each container
	// ends, or the attempt is lost: a Pod whose node is gone sends no end
	// of its log. Interrupted, the runner deletes the Job: the Pod's
	// containers get SIGTERM, the agent stops the tool as at the budget
	// and writes its folder, and the logs run to their end.
	follow, stopFollow := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFollow()
	lostc := make(chan string, 1)
	go func() {
		if why := c.watchLost(follow, pod); why != "" {
			lostc <- why
		}
	}()
	var wg sync.WaitGroup
	var serverErr error
	wg.Go(func() {
		serverErr = c.followTo(follow, pod.Name, showcase, filepath.Join(s.Dir, trials.ServerLog), nil)
	})
	toolLog := filepath.Join(s.Dir, agentLog)
	toolDone := make(chan error, 1)
	go func() { toolDone <- c.followTo(follow, pod.Name, toolName, toolLog, s.Live) }()
	var followErr error
	select {
	case followErr = <-toolDone:
	case lost = <-lostc:
		stopFollow()
		<-toolDone
		wg.Wait()
		return lost, nil
	case <-ctx.Done():
		s.Say("%s trial %d: interrupted: deleting Job %s, the tool stopped as at its budget", t.Tool, t.Number, pod.Labels[LabelJob])
		// The logs end when the Pod's containers do; a Pod whose node is
		// gone is given up after its grace.
		grace := time.Duration(ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
		defer time.AfterFunc(grace+30*time.Second, stopFollow).Stop()
		if err := c.deleteJob(follow, pod.Labels[LabelJob]); err != nil {
			s.Say("%s trial %d: deleting Job %s: %v", t.Tool, t.Number, pod.Labels[LabelJob], err)
		}
		followErr = <-toolDone
	}
	wg.Wait()

	// What the Pod says of itself now: its images' digests, how its
	// containers ended, and whether it was taken away (the runner's own
	// interruption aside).
	final, err := c.Client.CoreV1().Pods(c.Namespace).Get(follow, pod.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && ctx.Err() == nil:
		return "the Pod was deleted", nil
	case err != nil:
		final = pod
	case ctx.Err() == nil:
		if why := lostPod(final); why != "" {
			return why, nil
		}
	}
	t.Images = images(final)
	f, err := os.Open(toolLog)
	if err == nil {
		err = agent.ReadFolder(f, s.Dir)
		f.Close()
	}
	if err == nil {
		_ = os.Remove(toolLog)
		return "", c.apply(s.Dir, t)
	}
	// No folder came back: Kubernetes says why, or the log does.
	if why := ended(final); why != "" {
		t.NotRun = why
	} else {
		t.NotRun = fmt.Sprintf("the agent's folder did not come back: %v (its log: %s)", errors.Join(err, followErr, serverErr), toolLog)
	}
	return "", nil
}

// agentLog is the tool's container's log in the trial's folder, until
// the folder it carries is read out of it.
const agentLog = "agent.log"

// keepAttempt moves a lost attempt's logs out of the trial's way, into
// attempts/N: the next attempt writes its own.
func keepAttempt(dir string, n int) {
	to := filepath.Join(dir, "attempts", strconv.Itoa(n))
	if os.MkdirAll(to, 0o755) != nil {
		return
	}
	for _, f := range []string{trials.ServerLog, agentLog} {
		_ = os.Rename(filepath.Join(dir, f), filepath.Join(to, f))
	}
}

// lostPod is why a Pod was taken away before its tool ran to its end
// (started or not), or "": a disruption Kubernetes names (an eviction, a
// preemption, its node's taint, the Pod's garbage collection), its
// deletion, or the agent's own word that a signal stopped it. A tool that
// ended of itself (the agent exited 0) ran to its end, whatever happened
// to the Pod after.
func lostPod(p *corev1.Pod) string {
	x := toolExit(p)
	if x != nil && x.ExitCode == 0 {
		return ""
	}
	for _, cd := range p.Status.Conditions {
		if cd.Type == corev1.DisruptionTarget && cd.Status == corev1.ConditionTrue {
			return reason(cd.Reason, cd.Message, "disrupted")
		}
	}
	if p.DeletionTimestamp != nil {
		return "the Pod was deleted"
	}
	if x != nil && x.ExitCode == agent.ExitStopped {
		return "the Pod was stopped (its tool's agent exited " + strconv.Itoa(agent.ExitStopped) + ")"
	}
	return ""
}

// watchLost watches a Pod that started until it is lost (then why), or
// until ctx ends or its tool has ended ("").
func (c *Cluster) watchLost(ctx context.Context, pod *corev1.Pod) string {
	var why string
	_, _ = watchtools.UntilWithSync(ctx, c.podsOf(pod.Labels[LabelJob]), &corev1.Pod{}, func(store cache.Store) (bool, error) {
		for _, o := range store.List() {
			if o.(*corev1.Pod).UID == pod.UID {
				return false, nil
			}
		}
		why = "the Pod was deleted"
		return true, nil
	}, func(e watch.Event) (bool, error) {
		p, ok := e.Object.(*corev1.Pod)
		if !ok || p.UID != pod.UID {
			return false, nil
		}
		if e.Type == watch.Deleted {
			why = "the Pod was deleted"
			return true, nil
		}
		if toolExit(p) != nil {
			return true, nil
		}
		why = lostPod(p)
		return why != "", nil
	})
	return why
}

// toolExit is how the tool's container ended, or nil while it has not.
func toolExit(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, st := range p.Status.ContainerStatuses {
		if st.Name == toolName {
			return st.State.Terminated
		}
	}
	return nil
}

// nextAttempt waits for the Job's next Pod after a lost one, however long
// Kubernetes takes to count the lost one failed (a Pod on a node that is
// gone stays until its Node is deleted or tainted out-of-service), unless
// the Job gives up first (its retries spent, its deadline passed); then
// waits for it to start, as the first.
func (c *Cluster) nextAttempt(ctx context.Context, name string, seen map[types.UID]bool) (pod *corev1.Pod, lost, why string) {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		if why := c.jobFailed(wctx, name); why != "" {
			cancel(errors.New(why))
		}
	}()
	_, err := watchtools.UntilWithSync(wctx, c.podsOf(name), &corev1.Pod{}, nil, func(e watch.Event) (bool, error) {
		p, ok := e.Object.(*corev1.Pod)
		return ok && e.Type != watch.Deleted && !seen[p.UID], nil
	})
	switch {
	case err == nil:
		return c.waitStarted(ctx, name, seen)
	case ctx.Err() != nil:
		return nil, "", "interrupted before its next attempt"
	default:
		return nil, "", "the Job gave up: " + context.Cause(wctx).Error()
	}
}

// jobFailed watches the Job until it has failed (then its reason), or
// ctx ends ("").
func (c *Cluster) jobFailed(ctx context.Context, name string) string {
	var why string
	_, _ = watchtools.UntilWithSync(ctx, c.jobNamed(name), &batchv1.Job{}, nil, func(e watch.Event) (bool, error) {
		j, ok := e.Object.(*batchv1.Job)
		if !ok {
			return false, nil
		}
		if e.Type == watch.Deleted {
			why = "the Job was deleted"
			return true, nil
		}
		for _, cd := range j.Status.Conditions {
			if (cd.Type == batchv1.JobFailed || cd.Type == batchv1.JobFailureTarget) && cd.Status == corev1.ConditionTrue {
				why = reason(cd.Reason, cd.Message, "failed")
				return true, nil
			}
		}
		return false, nil
	})
	return why
}

// apply reads what the agent said into the trial.
func (c *Cluster) apply(dir string, t *trials.Trial) error {
	raw, err := os.ReadFile(filepath.Join(dir, agent.ResultFile))
	if err != nil {
		return err
	}
	var r agent.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", agent.ResultFile, err)
	}
	t.Start, t.Seconds, t.Outcome, t.ExitCode, t.Signals, t.Machine = r.Start, r.Seconds, r.Outcome, r.ExitCode, r.Signals, r.Machine
	t.ToolVersion = r.ToolVersion
	if t.Machine != nil {
		t.Machine.Hostname = t.Node // the Pod's hostname is its own name
	}
	if r.Error != "" {
		t.NotRun = "the instance: " + r.Error
	}
	// Times: the tool, the instance and the agent share the node's clock.
	t.InstanceSince = nil
	return nil
}

// jobName is a Job's name: the run, the tool and the trial, within the
// 63 characters of a label value (the Job controller labels its Pods
// with it).
func jobName(run, tool string, n int) string {
	suffix := fmt.Sprintf("-%02d", n)
	prefix := "trial-" + run + "-"
	t := label(tool)
	if room := 63 - len(prefix) - len(suffix); len(t) > room {
		t = strings.TrimRight(t[:room], "-.")
	}
	return prefix + t + suffix
}

// label is a name as a label value and a DNS label: lower-case letters,
// digits and dashes.
func label(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	if s == "" {
		s = "tool"
	}
	return s
}

// policy is the trial's fence: its Pod takes no packet in and sends none
// out (the tool reaches the instance on the Pod's loopback, which no
// NetworkPolicy touches).
func (c *Cluster) policy(name string, lbl map[string]string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: lbl},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelJob: name}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
}

func (c *Cluster) resources() corev1.ResourceRequirements {
	rl := corev1.ResourceList{corev1.ResourceCPU: c.CPU, corev1.ResourceMemory: c.Memory}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// restricted is a container's part of the restricted Pod Security profile.
func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		RunAsNonRoot:             ptr.To(true),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func (c *Cluster) job(name string, lbl map[string]string, s runner.Spec, t *trials.Trial) *batchv1.Job {
	l := s.Limits
	grace := int64(math.Ceil((l.InterruptGrace + l.TermGrace).Seconds())) + 30
	// Each attempt's most, and the Job controller's back-off before each
	// retry (10 s, doubled each time, at most 6 minutes).
	attempt := int64(math.Ceil((c.StartTimeout + l.Budget + l.InterruptGrace + l.TermGrace).Seconds())) + 120
	deadline := attempt
	for i, backoff := 0, int64(10); i < c.Retries; i, backoff = i+1, min(2*backoff, 360) {
		deadline += attempt + backoff
	}
	vol := func(n string) corev1.Volume {
		return corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	agentCmd := []string{agentDir + "/showcase-agent", "run", "-dir", trialDir, "-admin", admin,
		"-budget", l.Budget.String(), "-interrupt-grace", l.InterruptGrace.String(), "-term-grace", l.TermGrace.String()}
	if s.Coverage.Kind != "" {
		agentCmd = append(agentCmd, "-coverage", s.Coverage.Kind, "-coverage-every", s.Coverage.EveryOrDefault().String())
	}
	agentCmd = append(append(agentCmd, "--"), t.Command...)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: lbl},
		Spec: batchv1.JobSpec{
			// A lost attempt (a disruption Kubernetes names, or the agent's
			// word that a signal stopped it) counts against the retries; the
			// tool's own failure ends the Job, as a retry would meet it
			// again. A Pod is replaced only once it has failed, never while
			// the lost one may still run.
			BackoffLimit:         ptr.To(int32(c.Retries)),
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionCount,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
			}, {
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To(toolName),
					Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0, agent.ExitStopped}},
			}}},
			ActiveDeadlineSeconds:   ptr.To(deadline),
			TTLSecondsAfterFinished: ptr.To(int32(c.TTL.Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To(grace),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](nonRoot), RunAsGroup: ptr.To[int64](nonRoot), FSGroup: ptr.To[int64](nonRoot),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					// The run's Pods spread over the nodes, each node's share
					// within one of another's where their room allows: a
					// preference of the scheduler's, never a reason to stay
					// Pending while a node has room.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: c.Run}},
					}},
					Volumes: []corev1.Volume{vol("agent"), vol("trial"), vol("tmp")},
					InitContainers: []corev1.Container{{
						Name: installName, Image: c.Agent, ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"/service", "install", agentDir},
						VolumeMounts:    []corev1.VolumeMount{{Name: "agent", MountPath: agentDir}},
						Resources:       c.resources(),
						SecurityContext: restricted(),
					}, {
						// A native sidecar: it starts before the tool, is ready
						// (its /readyz) before the tool starts, and is stopped once
						// the tool has ended.
						Name: showcase, Image: c.Showcase, ImagePullPolicy: corev1.PullIfNotPresent,
						RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
						Env: []corev1.EnvVar{{Name: "DEFECTS", Value: s.Defects.String()},
							{Name: "ADDR", Value: "127.0.0.1:8080"}, {Name: "ADMIN_ADDR", Value: "127.0.0.1:9090"}},
						StartupProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/service", "healthcheck"}}},
							PeriodSeconds: 1, FailureThreshold: int32(max(c.StartTimeout.Seconds(), 30)), TimeoutSeconds: 2,
						},
						Resources:       c.resources(),
						SecurityContext: restricted(),
					}},
					Containers: []corev1.Container{{
						Name: toolName, Image: s.Tool.Image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command:    agentCmd,
						WorkingDir: trialDir,
						Env:        []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}, {Name: "TMPDIR", Value: "/tmp"}},
						VolumeMounts: []corev1.VolumeMount{{Name: "agent", MountPath: agentDir, ReadOnly: true},
							{Name: "trial", MountPath: trialDir}, {Name: "tmp", MountPath: "/tmp"}},
						Resources:       c.resources(),
						SecurityContext: restricted(),
					}},
				},
			},
		},
	}
}

// podsOf lists and watches the Pods of one Job.
func (c *Cluster) podsOf(name string) cache.ListerWatcher {
	sel := labels.SelectorFromSet(labels.Set{LabelJob: name}).String()
	pods := c.Client.CoreV1().Pods(c.Namespace)
	// Wrapped as client-go's informers wrap theirs: a client that cannot
	// stream a watch's initial list (client-go's fake, in tests) is listed.
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return pods.Watch(ctx, o)
		},
	}, c.Client)
}

// waitStarted watches the Job's Pod (one not seen before) until its
// tool's container has started (the Pod, ""), or until the Pod is lost
// before that (the Pod, and why it was lost: taken away by Kubernetes, as
// lostPod says, or deleted), or until it is plain the trial cannot run
// (the Pod if there is one, "", and Kubernetes' reason), or StartTimeout
// passes (then the Pod's state at that moment is the reason).
func (c *Cluster) waitStarted(ctx context.Context, name string, seen map[types.UID]bool) (pod *corev1.Pod, lost, why string) {
	wctx, cancel := context.WithTimeout(ctx, c.StartTimeout)
	defer cancel()
	_, err := watchtools.UntilWithSync(wctx, c.podsOf(name), &corev1.Pod{}, nil, func(e watch.Event) (bool, error) {
		p, ok := e.Object.(*corev1.Pod)
		if !ok || seen[p.UID] {
			return false, nil
		}
		if e.Type == watch.Deleted {
			// Gone at once (a forced deletion): lost if it was the Pod
			// being waited for, and had not started.
			if pod == nil || pod.UID != p.UID || started(p) {
				return false, nil
			}
			lost = beforeStart + "the Pod was deleted"
			return true, nil
		}
		pod = p
		if started(p) {
			return true, nil
		}
		if why := lostPod(p); why != "" {
			lost = beforeStart + why
			return true, nil
		}
		why = cannotRun(p)
		return why != "", nil
	})
	switch {
	case err == nil:
		return pod, lost, why
	case ctx.Err() != nil:
		return pod, "", "interrupted before it started"
	case pod == nil:
		return nil, "", fmt.Sprintf("no Pod within %s: %s", c.StartTimeout, c.jobEvents(ctx, name))
	default:
		return pod, "", fmt.Sprintf("not started within %s: %s", c.StartTimeout, pending(pod))
	}
}

// beforeStart begins the reason of an attempt lost before its tool's
// container started.
const beforeStart = "before it started: "

// jobEvents is what the Job's last warning says (why its Pod was not
// made: a quota, an admission policy).
func (c *Cluster) jobEvents(ctx context.Context, name string) string {
	evs, err := c.Client.CoreV1().Events(c.Namespace).List(context.WithoutCancel(ctx), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Job", "involvedObject.name": name}.String()})
	if err != nil {
		return "the Job's events: " + err.Error()
	}
	msg := "the Job made none, and its events say nothing"
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning {
			msg = reason(e.Reason, e.Message, msg)
		}
	}
	return msg
}

func started(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == toolName && (s.State.Running != nil || s.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// cannotRun is Kubernetes' reason why a Pod will not run its tool, or "".
func cannotRun(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed && !started(p) {
		return reason(p.Status.Reason, p.Status.Message, "the Pod failed")
	}
	all := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range all {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return fmt.Sprintf("container %s (%s): %s", s.Name, s.Image, reason(w.Reason, w.Message, ""))
			}
		}
		if x := s.State.Terminated; x != nil && s.Name != toolName && (x.Reason == "OOMKilled" || s.Name == installName && x.ExitCode != 0) {
			return fmt.Sprintf("container %s: %s", s.Name, reason(x.Reason, x.Message, fmt.Sprintf("exit %d", x.ExitCode)))
		}
	}
	return ""
}

// pending says why a Pod has not started: unschedulable, or its
// containers' waiting reasons.
func pending(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return reason(c.Reason, c.Message, "not scheduled")
		}
	}
	var parts []string
	all := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range all {
		if w := s.State.Waiting; w != nil {
			parts = append(parts, fmt.Sprintf("container %s: %s", s.Name, reason(w.Reason, w.Message, "waiting")))
		} else if s.Started != nil && !*s.Started {
			parts = append(parts, fmt.Sprintf("container %s: not started (its startup probe)", s.Name))
		}
	}
	if len(parts) == 0 {
		return "Pod " + string(p.Status.Phase)
	}
	return strings.Join(parts, "; ")
}

// ended is Kubernetes' reason why a Pod that started gave back no folder
// (evicted, its tool's container killed for its memory), or "".
func ended(p *corev1.Pod) string {
	if p.Status.Reason != "" {
		return reason(p.Status.Reason, p.Status.Message, "")
	}
	for _, s := range p.Status.ContainerStatuses {
		if x := s.State.Terminated; x != nil && s.Name == toolName && x.Reason != "Completed" {
			return fmt.Sprintf("container %s: %s", s.Name, reason(x.Reason, x.Message, fmt.Sprintf("exit %d", x.ExitCode)))
		}
	}
	return ""
}

func reason(r, msg, fallback string) string {
	switch {
	case r == "" && msg == "":
		return fallback
	case msg == "":
		return r
	case r == "":
		return msg
	}
	return r + ": " + msg
}

func images(p *corev1.Pod) []trials.Image {
	var out []trials.Image
	all := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range all {
		out = append(out, trials.Image{Container: s.Name, Image: s.Image, Digest: s.ImageID})
	}
	return out
}

// followTo follows a container's log into a file, until the container
// ends; the agent's live lines go to live too, when it is not nil.
func (c *Cluster) followTo(ctx context.Context, pod, container, file string, live func(trials.Live)) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	rc, err := c.Client.CoreV1().Pods(c.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("%s's log: %w", container, err)
	}
	defer rc.Close()
	var w io.Writer = f
	if live != nil {
		w = agent.LiveLines(f, live)
	}
	_, err = io.Copy(w, rc)
	return err
}

// deleteJob deletes a trial's Job and its fence, then its Pods, and
// waits until they are gone (deletePods).
func (c *Cluster) deleteJob(ctx context.Context, name string) error {
	bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	err := c.Client.BatchV1().Jobs(c.Namespace).Delete(ctx, name, bg)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = c.Client.NetworkingV1().NetworkPolicies(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return deletePods(ctx, c.Client, c.Namespace, labels.SelectorFromSet(labels.Set{LabelJob: name}).String(), func(string, ...any) {})
}

// jobNamed lists and watches one Job.
func (c *Cluster) jobNamed(name string) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	jobs := c.Client.BatchV1().Jobs(c.Namespace)
	// Wrapped as client-go's informers wrap theirs: a client that cannot
	// stream a watch's initial list (client-go's fake, in tests) is listed.
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return jobs.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return jobs.Watch(ctx, o)
		},
	}, c.Client)
}

// Cleanup's patience: how long past its deletion's deadline a Pod may
// stay before it is force-deleted, how often the Pods are looked at, and
// the most the whole may take.
const (
	unattendedAfter = 10 * time.Second
	cleanupEvery    = time.Second
	cleanupLimit    = 10 * time.Minute
)

// deletePods deletes the Pods sel picks and waits until they are gone.
// A Pod no kubelet ends (its node lost: evicted by its node's taint, or
// still there past its deletion's deadline) is force-deleted, as an
// operator would, rather than waited for: the cleanup never hangs on a
// node that is gone. It looks every cleanupEvery (a deadline passing is
// no event to watch for).
func deletePods(ctx context.Context, c kubernetes.Interface, namespace, sel string, say func(string, ...any)) error {
	pods := c.CoreV1().Pods(namespace)
	forced := map[types.UID]bool{}
	limit := time.Now().Add(cleanupLimit)
	for {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		var left []string
		for _, p := range list.Items {
			left = append(left, p.Name)
			opts := metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(p.UID))}
			switch {
			case p.DeletionTimestamp == nil:
			case !forced[p.UID] && unattended(&p, time.Now()):
				forced[p.UID] = true
				opts.GracePeriodSeconds = ptr.To[int64](0)
				say("force-deleting Pod %s/%s: no kubelet ends it (on node %s)", namespace, p.Name, p.Spec.NodeName)
			default:
				continue
			}
			if err := pods.Delete(ctx, p.Name, opts); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
		}
		if time.Now().After(limit) {
			return fmt.Errorf("the Pods still there after %s: %s", cleanupLimit, strings.Join(left, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cleanupEvery):
		}
	}
}

// unattended is whether a Pod being deleted is one no kubelet will end:
// evicted by its node's taint (unreachable or not ready), or still there
// unattendedAfter past the deadline its deletion gave it.
func unattended(p *corev1.Pod, now time.Time) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, cd := range p.Status.Conditions {
		if cd.Type == corev1.DisruptionTarget && cd.Status == corev1.ConditionTrue && cd.Reason == taintEvicted {
			return true
		}
	}
	return now.After(p.DeletionTimestamp.Add(unattendedAfter))
}

// taintEvicted is the DisruptionTarget condition's reason for a Pod
// evicted by a NoExecute taint (its node's unreachable or not-ready).
const taintEvicted = "DeletionByTaintManager"

// Clean deletes what runs left in the namespace (run "": every run's):
// their Jobs, their NetworkPolicies and their Pods, a Pod on a lost node
// force-deleted. It says what it deleted.
func Clean(ctx context.Context, c kubernetes.Interface, namespace, run string, say func(string, ...any)) error {
	set := labels.Set{LabelManagedBy: ManagedBy}
	if run != "" {
		set[LabelRun] = run
	}
	sel := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(set).String()}
	bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	var errs []error
	jobs, err := c.BatchV1().Jobs(namespace).List(ctx, sel)
	if err != nil {
		return err
	}
	for _, j := range jobs.Items {
		if err := c.BatchV1().Jobs(namespace).Delete(ctx, j.Name, bg); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		say("deleted Job %s/%s", namespace, j.Name)
	}
	pols, err := c.NetworkingV1().NetworkPolicies(namespace).List(ctx, sel)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, p := range pols.Items {
		if err := c.NetworkingV1().NetworkPolicies(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		say("deleted NetworkPolicy %s/%s", namespace, p.Name)
	}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, sel)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, p := range pods.Items {
		say("deleting Pod %s/%s", namespace, p.Name)
	}
	if err := deletePods(ctx, c, namespace, sel.LabelSelector, say); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
