package agent

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	Coordinator bool
	RunArgs     []string // the coordinator's `fathom run` arguments (workload, target, clients …)
}

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
func (k *K8s) job(name string, labels map[string]string, args []string, res corev1.ResourceRequirements) *batchv1.Job {
	zero := int32(0)
	nonRoot := true
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &nonRoot},
					Containers: []corev1.Container{{
						Name: "fathom", Image: k.Image, Args: args, Resources: res,
						EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.Secret}}}},
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
