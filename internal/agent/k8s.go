package agent

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/fathom-lab/fathom/internal/fault"
	"github.com/fathom-lab/fathom/internal/target"
)

// K8s says what Kubernetes manifests to write for a run made by agents: an Indexed
// Job of Agents pods running `fathom agent --run Name` (each pod's index comes from
// JOB_COMPLETION_INDEX), and optionally the coordinator as a second Job running
// `fathom run --agents N --name Name` with RunArgs. Credentials come from a Secret
// whose keys become the pods' environment (FATHOM_STORE, PGPASSWORD, MYSQL_PWD …).
type K8s struct {
	Agents      int
	Name        string
	Namespace   string
	Image       string
	Secret      string
	CPU, Memory string // requests per agent pod (also the limits when LimitCPU/LimitMemory are empty)
	LimitCPU    string
	LimitMemory string
	Wait        string // how long agents wait for the coordinator (fathom agent --wait)
	Deadline    string // the Jobs' activeDeadlineSeconds, as a duration
	TTL         string // the Jobs' ttlSecondsAfterFinished, as a duration
	Coordinator bool
	RunArgs     []string // the coordinator's `fathom run` arguments (workload, target, clients …)

	deadline int64 // seconds, from Deadline
	ttl      int32 // seconds, from TTL
}

// The image's user (distroless's nonroot) and the pods' only writable directory: the
// root filesystem is read-only, as the restricted Pod Security level asks of a pod
// that needs nothing else.
const (
	defaultDeadline, defaultTTL = "6h", "24h"

	podUser    = 65532
	scratchDir = "/var/lib/fathom"
)

// Register adds the flags to fs.
func (k *K8s) Register(fs *pflag.FlagSet) {
	fs.IntVar(&k.Agents, "agents", 0, "agent pods (the Job's completions and parallelism)")
	fs.StringVar(&k.Name, "name", "", "the run's name: agents join it, the coordinator opens it (fathom run --name)")
	fs.StringVar(&k.Namespace, "namespace", "", "Kubernetes namespace of the Jobs (default: kubectl's)")
	fs.StringVar(&k.Image, "image", "fathom:latest", "container image holding the fathom binary (see deploy/Dockerfile)")
	fs.StringVar(&k.Secret, "secret", "fathom", "Secret whose keys become the pods' environment: FATHOM_STORE (the postgres:// store with its password), PGPASSWORD …")
	fs.StringVar(&k.CPU, "cpu", "1", "CPU request of each agent pod")
	fs.StringVar(&k.Memory, "memory", "256Mi", "memory request of each agent pod")
	fs.StringVar(&k.LimitCPU, "limit-cpu", "", "CPU limit of each agent pod (default: none)")
	fs.StringVar(&k.LimitMemory, "limit-memory", "", "memory limit of each agent pod (default: the request)")
	fs.StringVar(&k.Wait, "agents-wait", "10m", "how long agent pods wait for the coordinator to open the run")
	fs.StringVar(&k.Deadline, "deadline", defaultDeadline, "the Jobs' active deadline: Kubernetes stops pods still running after this long (activeDeadlineSeconds; longer than --agents-wait plus the run)")
	fs.StringVar(&k.TTL, "ttl", defaultTTL, "Kubernetes deletes finished Jobs and their pods after this long (ttlSecondsAfterFinished; 0 keeps them); the results are in the store")
	fs.BoolVar(&k.Coordinator, "coordinator", false, "also write the coordinator's Job, running fathom run with the arguments after --")
}

// Jobs builds the Jobs; mistakes are usage errors.
func (k *K8s) Jobs() ([]*batchv1.Job, error) {
	switch {
	case k.Agents < 1:
		return nil, fault.Usagef("--agents: give the number of agent pods (1 or more)")
	case k.Name == "":
		return nil, fault.Usagef("--name: give the run's name, which the agents join")
	case k.Coordinator && len(k.RunArgs) == 0:
		return nil, fault.Usagef("--coordinator: give the coordinator's fathom run arguments after --, e.g. -- --workload tpcb -c 64 -T 5m --target postgres://bench@db/bench")
	case !k.Coordinator && len(k.RunArgs) > 0:
		return nil, fault.Usagef("arguments after -- are the coordinator's: add --coordinator")
	}
	// The name is the Jobs' names' stem ("NAME-coordinator") and a label value: a
	// DNS-1123 label of at most 63 characters with the longest suffix.
	if len(validation.IsDNS1123Label(k.Name)) > 0 || len(validation.IsDNS1123Label(k.Name+"-coordinator")) > 0 {
		return nil, fault.Usagef("--name %q: Kubernetes names are lower-case letters, digits and '-', starting and ending with a letter or digit, at most %d characters here (e.g. big-1)", k.Name, validation.DNS1123LabelMaxLength-len("-coordinator"))
	}
	wait, err := time.ParseDuration(k.Wait)
	if err != nil || wait <= 0 {
		return nil, fault.Usagef("--agents-wait %q: give a duration such as 10m", k.Wait)
	}
	deadline, err := time.ParseDuration(cmp.Or(k.Deadline, defaultDeadline))
	if err != nil || deadline <= wait {
		return nil, fault.Usagef("--deadline %q: give a duration longer than --agents-wait (%s) plus the run, such as 6h", k.Deadline, k.Wait)
	}
	ttl, err := time.ParseDuration(cmp.Or(k.TTL, defaultTTL))
	if err != nil || ttl < 0 {
		return nil, fault.Usagef("--ttl %q: give a duration such as 24h (0 keeps finished Jobs)", k.TTL)
	}
	k.deadline, k.ttl = int64(deadline/time.Second), int32(min(ttl/time.Second, math.MaxInt32))
	for _, a := range k.RunArgs {
		if target.RedactString(a) != a {
			return nil, fault.Usagef("a password in the coordinator's arguments would be in the manifest: put the target in the Secret as FATHOM_TARGET (or its password as PGPASSWORD / MYSQL_PWD) and leave it out here")
		}
	}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, q := range []struct {
		flag, v string
		name    corev1.ResourceName
		list    corev1.ResourceList
	}{{"--cpu", k.CPU, corev1.ResourceCPU, res.Requests}, {"--memory", k.Memory, corev1.ResourceMemory, res.Requests},
		{"--limit-cpu", k.LimitCPU, corev1.ResourceCPU, res.Limits}, {"--limit-memory", k.LimitMemory, corev1.ResourceMemory, res.Limits}} {
		if q.v == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.v)
		if err != nil {
			return nil, fault.Usagef("%s %q: not a Kubernetes quantity (e.g. 500m, 2, 256Mi)", q.flag, q.v)
		}
		q.list[q.name] = v
	}
	if _, ok := res.Limits[corev1.ResourceMemory]; !ok {
		res.Limits[corev1.ResourceMemory] = res.Requests[corev1.ResourceMemory]
	}
	n := int32(k.Agents)
	labels := map[string]string{"app.kubernetes.io/name": "fathom", "app.kubernetes.io/component": "agent", "fathom/run": k.Name}
	agents := k.job(k.Name+"-agents", labels, []string{"agent", "--run", k.Name, "--wait", k.Wait}, res)
	agents.Spec.Completions, agents.Spec.Parallelism = &n, &n
	mode := batchv1.IndexedCompletion
	agents.Spec.CompletionMode = &mode
	// Agents on different nodes where the cluster can: that is the point.
	agents.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}}}}
	jobs := []*batchv1.Job{agents}
	if k.Coordinator {
		cl := map[string]string{"app.kubernetes.io/name": "fathom", "app.kubernetes.io/component": "coordinator", "fathom/run": k.Name}
		args := append([]string{"run", "--agents", strconv.Itoa(k.Agents), "--name", k.Name}, k.RunArgs...)
		small := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}
		jobs = append(jobs, k.job(k.Name+"-coordinator", cl, args, small))
	}
	return jobs, nil
}

// job is a Job of one container running fathom with args, never restarted: an agent
// that died cannot rejoin a started run, and a second coordinator would open another.
//
// The pods meet the restricted Pod Security level: a numeric non-root user (the
// kubelet cannot verify a user name), the runtime's default seccomp profile, no
// privilege escalation, every capability dropped, a read-only root filesystem with
// one emptyDir for HOME and temporary files. Finished Jobs are deleted after TTL; a
// Job still running after Deadline is stopped.
func (k *K8s) job(name string, labels map[string]string, args []string, res corev1.ResourceRequirements) *batchv1.Job {
	zero := int32(0)
	yes, no := true, false
	user := int64(podUser)
	var ttl *int32
	if k.ttl > 0 {
		ttl = &k.ttl
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:            &zero,
			ActiveDeadlineSeconds:   &k.deadline,
			TTLSecondsAfterFinished: ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &no, // fathom never talks to the Kubernetes API
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: &yes, RunAsUser: &user, RunAsGroup: &user, FSGroup: &user,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					Containers: []corev1.Container{{
						Name: "fathom", Image: k.Image, Args: args, Resources: res,
						WorkingDir:   scratchDir,
						Env:          []corev1.EnvVar{{Name: "HOME", Value: scratchDir}, {Name: "TMPDIR", Value: scratchDir}},
						EnvFrom:      []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.Secret}}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: scratchDir}},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: &yes, RunAsUser: &user,
							AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// Write writes the Jobs as YAML documents.
func (k *K8s) Write(w io.Writer) error {
	jobs, err := k.Jobs()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# fathom: %d agents for run %q; credentials from Secret %q (FATHOM_STORE, PGPASSWORD …)\n", k.Agents, k.Name, k.Secret)
	for i, j := range jobs {
		y, err := yaml.Marshal(j)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	_, err = w.Write(b.Bytes())
	return err
}
