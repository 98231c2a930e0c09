// Cleanup: a trial's Job, fence and Pods deleted and waited for (a Pod
// no kubelet ends force-deleted), and Clean, which removes what runs
// left in a namespace.

package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

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
