// What a trial is on the cluster: its Job (the instance as a native
// sidecar, the tool's container, Guaranteed resources, the restricted
// profile), its NetworkPolicy, their names and labels, and what the
// agent's result puts into the trial.

package kube

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/judge/trials/runner"
)

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
