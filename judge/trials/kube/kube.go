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
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/defectshowcase/showcase/judge/trials"
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
