// A trial's attempts: each of its Job's Pods followed from its start to
// its end, or to its loss (evicted, preempted, gone with its node), and
// what Kubernetes says of a Pod that could not start or run.

package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/judge/trials/runner"
)

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
