package agent

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/fathom-lab/fathom/internal/errkind"
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

// jobs builds the Jobs; mistakes are usage errors.
func (k *K8s) jobs() ([]*job, error) {
	switch {
	case k.Agents < 1:
		return nil, errkind.Usagef("--agents: give the number of agent pods (1 or more)")
	case k.Name == "":
		return nil, errkind.Usagef("--name: give the run's name, which the agents join")
	case k.Coordinator && len(k.RunArgs) == 0:
		return nil, errkind.Usagef("--coordinator: give the coordinator's fathom run arguments after --, e.g. -- --workload tpcb -c 64 -T 5m --target postgres://bench@db/bench")
	case !k.Coordinator && len(k.RunArgs) > 0:
		return nil, errkind.Usagef("arguments after -- are the coordinator's: add --coordinator")
	}
	// The name is the Jobs' names' stem ("NAME-coordinator") and a label value: a
	// DNS-1123 label of at most 63 characters with the longest suffix.
	if !isDNSLabel(k.Name) || !isDNSLabel(k.Name+"-coordinator") {
		return nil, errkind.Usagef("--name %q: Kubernetes names are lower-case letters, digits and '-', starting and ending with a letter or digit, at most %d characters here (e.g. big-1)", k.Name, dnsLabelMax-len("-coordinator"))
	}
	wait, err := time.ParseDuration(k.Wait)
	if err != nil || wait <= 0 {
		return nil, errkind.Usagef("--agents-wait %q: give a duration such as 10m", k.Wait)
	}
	deadline, err := time.ParseDuration(cmp.Or(k.Deadline, defaultDeadline))
	if err != nil || deadline <= wait {
		return nil, errkind.Usagef("--deadline %q: give a duration longer than --agents-wait (%s) plus the run, such as 6h", k.Deadline, k.Wait)
	}
	ttl, err := time.ParseDuration(cmp.Or(k.TTL, defaultTTL))
	if err != nil || ttl < 0 {
		return nil, errkind.Usagef("--ttl %q: give a duration such as 24h (0 keeps finished Jobs)", k.TTL)
	}
	k.deadline, k.ttl = int64(deadline/time.Second), int32(min(ttl/time.Second, math.MaxInt32))
	for _, a := range k.RunArgs {
		if target.RedactString(a) != a {
			return nil, errkind.Usagef("a password in the coordinator's arguments would be in the manifest: put the target in the Secret as FATHOM_TARGET (or its password as PGPASSWORD / MYSQL_PWD) and leave it out here")
		}
	}
	res := resources{Requests: map[string]string{}, Limits: map[string]string{}}
	for _, q := range []struct {
		flag, v, name string
		list          map[string]string
	}{{"--cpu", k.CPU, "cpu", res.Requests}, {"--memory", k.Memory, "memory", res.Requests},
		{"--limit-cpu", k.LimitCPU, "cpu", res.Limits}, {"--limit-memory", k.LimitMemory, "memory", res.Limits}} {
		if q.v == "" {
			continue
		}
		if !quantity.MatchString(q.v) {
			return nil, errkind.Usagef("%s %q: not a Kubernetes quantity (e.g. 500m, 2, 256Mi)", q.flag, q.v)
		}
		q.list[q.name] = q.v
	}
	if _, ok := res.Limits["memory"]; !ok && res.Requests["memory"] != "" {
		res.Limits["memory"] = res.Requests["memory"]
	}
	n := int32(k.Agents)
	labels := map[string]string{"app.kubernetes.io/name": "fathom", "app.kubernetes.io/component": "agent", "fathom/run": k.Name}
	agents := k.job(k.Name+"-agents", labels, []string{"agent", "--run", k.Name, "--wait", k.Wait}, res)
	agents.Spec.Completions, agents.Spec.Parallelism = &n, &n
	agents.Spec.CompletionMode = "Indexed"
	// Agents on different nodes where the cluster can: that is the point.
	agents.Spec.Template.Spec.Affinity = &affinity{PodAntiAffinity: &podAntiAffinity{
		Preferred: []weightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: podAffinityTerm{
			LabelSelector: &labelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}}}}
	jobs := []*job{agents}
	if k.Coordinator {
		cl := map[string]string{"app.kubernetes.io/name": "fathom", "app.kubernetes.io/component": "coordinator", "fathom/run": k.Name}
		args := append([]string{"run", "--agents", strconv.Itoa(k.Agents), "--name", k.Name}, k.RunArgs...)
		small := resources{Requests: map[string]string{"cpu": "100m", "memory": "128Mi"}}
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
func (k *K8s) job(name string, labels map[string]string, args []string, res resources) *job {
	zero := int32(0)
	yes, no := true, false
	user := int64(podUser)
	var ttl *int32
	if k.ttl > 0 {
		ttl = &k.ttl
	}
	return &job{
		APIVersion: "batch/v1", Kind: "Job",
		Metadata: objectMeta{Name: name, Namespace: k.Namespace, Labels: labels},
		Spec: jobSpec{
			BackoffLimit:            &zero,
			ActiveDeadlineSeconds:   &k.deadline,
			TTLSecondsAfterFinished: ttl,
			Template: podTemplateSpec{
				Metadata: objectMeta{Labels: labels},
				Spec: podSpec{
					RestartPolicy:                "Never",
					AutomountServiceAccountToken: &no, // fathom never talks to the Kubernetes API
					SecurityContext: &podSecurityContext{
						RunAsNonRoot: &yes, RunAsUser: &user, RunAsGroup: &user, FSGroup: &user,
						SeccompProfile: &seccompProfile{Type: "RuntimeDefault"},
					},
					Volumes: []volume{{Name: "scratch", EmptyDir: &struct{}{}}},
					Containers: []container{{
						Name: "fathom", Image: k.Image, Args: args, Resources: res,
						WorkingDir:   scratchDir,
						Env:          []envVar{{Name: "HOME", Value: scratchDir}, {Name: "TMPDIR", Value: scratchDir}},
						EnvFrom:      []envFromSource{{SecretRef: &localObjectReference{Name: k.Secret}}},
						VolumeMounts: []volumeMount{{Name: "scratch", MountPath: scratchDir}},
						SecurityContext: &securityContext{
							RunAsNonRoot: &yes, RunAsUser: &user,
							AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &capabilities{Drop: []string{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// The Kubernetes objects fathom writes: the fields it sets of the API's Job (batch/v1)
// and what it holds, under the API's JSON names. They are plain structs rather than
// k8s.io/api's types, which would add some 40 packages and several MB to every build
// for a command that only prints YAML; the tests read the output back strictly into
// k8s.io/api's types (an unknown or misspelt field fails) and run the restricted Pod
// Security checks of k8s.io/pod-security-admission on what they read.
type (
	job struct {
		APIVersion string     `json:"apiVersion"`
		Kind       string     `json:"kind"`
		Metadata   objectMeta `json:"metadata"`
		Spec       jobSpec    `json:"spec"`
	}
	objectMeta struct {
		Name      string            `json:"name,omitempty"`
		Namespace string            `json:"namespace,omitempty"`
		Labels    map[string]string `json:"labels,omitempty"`
	}
	jobSpec struct {
		Parallelism             *int32          `json:"parallelism,omitempty"`
		Completions             *int32          `json:"completions,omitempty"`
		ActiveDeadlineSeconds   *int64          `json:"activeDeadlineSeconds,omitempty"`
		BackoffLimit            *int32          `json:"backoffLimit,omitempty"`
		Template                podTemplateSpec `json:"template"`
		TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
		CompletionMode          string          `json:"completionMode,omitempty"`
	}
	podTemplateSpec struct {
		Metadata objectMeta `json:"metadata"`
		Spec     podSpec    `json:"spec"`
	}
	podSpec struct {
		Volumes                      []volume            `json:"volumes,omitempty"`
		Containers                   []container         `json:"containers"`
		RestartPolicy                string              `json:"restartPolicy,omitempty"`
		AutomountServiceAccountToken *bool               `json:"automountServiceAccountToken,omitempty"`
		SecurityContext              *podSecurityContext `json:"securityContext,omitempty"`
		Affinity                     *affinity           `json:"affinity,omitempty"`
	}
	volume struct {
		Name     string    `json:"name"`
		EmptyDir *struct{} `json:"emptyDir,omitempty"`
	}
	container struct {
		Name            string           `json:"name"`
		Image           string           `json:"image,omitempty"`
		Args            []string         `json:"args,omitempty"`
		WorkingDir      string           `json:"workingDir,omitempty"`
		EnvFrom         []envFromSource  `json:"envFrom,omitempty"`
		Env             []envVar         `json:"env,omitempty"`
		Resources       resources        `json:"resources"`
		VolumeMounts    []volumeMount    `json:"volumeMounts,omitempty"`
		SecurityContext *securityContext `json:"securityContext,omitempty"`
	}
	envFromSource struct {
		SecretRef *localObjectReference `json:"secretRef,omitempty"`
	}
	localObjectReference struct {
		Name string `json:"name"`
	}
	envVar struct {
		Name  string `json:"name"`
		Value string `json:"value,omitempty"`
	}
	resources struct { // quantities as written by the user, checked against the API's grammar
		Limits   map[string]string `json:"limits,omitempty"`
		Requests map[string]string `json:"requests,omitempty"`
	}
	volumeMount struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	}
	podSecurityContext struct {
		RunAsUser      *int64          `json:"runAsUser,omitempty"`
		RunAsGroup     *int64          `json:"runAsGroup,omitempty"`
		RunAsNonRoot   *bool           `json:"runAsNonRoot,omitempty"`
		FSGroup        *int64          `json:"fsGroup,omitempty"`
		SeccompProfile *seccompProfile `json:"seccompProfile,omitempty"`
	}
	seccompProfile struct {
		Type string `json:"type"`
	}
	securityContext struct {
		Capabilities             *capabilities `json:"capabilities,omitempty"`
		RunAsUser                *int64        `json:"runAsUser,omitempty"`
		RunAsNonRoot             *bool         `json:"runAsNonRoot,omitempty"`
		ReadOnlyRootFilesystem   *bool         `json:"readOnlyRootFilesystem,omitempty"`
		AllowPrivilegeEscalation *bool         `json:"allowPrivilegeEscalation,omitempty"`
	}
	capabilities struct {
		Drop []string `json:"drop,omitempty"`
	}
	affinity struct {
		PodAntiAffinity *podAntiAffinity `json:"podAntiAffinity,omitempty"`
	}
	podAntiAffinity struct {
		Preferred []weightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
	}
	weightedPodAffinityTerm struct {
		Weight          int32           `json:"weight"`
		PodAffinityTerm podAffinityTerm `json:"podAffinityTerm"`
	}
	podAffinityTerm struct {
		LabelSelector *labelSelector `json:"labelSelector,omitempty"`
		TopologyKey   string         `json:"topologyKey"`
	}
	labelSelector struct {
		MatchLabels map[string]string `json:"matchLabels,omitempty"`
	}
)

// quantity is the API's grammar for a resource quantity (a non-negative number with
// an optional binary, decimal or exponent suffix: 500m, 2, 1.5, 256Mi, 1e3); the tests
// compare it with k8s.io/apimachinery's parser.
var quantity = regexp.MustCompile(`^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]{1,3})?$`)

// A DNS-1123 label (RFC 1123), as the API checks the names and label values here.
const dnsLabelMax = 63

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func isDNSLabel(s string) bool { return len(s) <= dnsLabelMax && dnsLabel.MatchString(s) }

// Write writes the Jobs as YAML documents.
func (k *K8s) Write(w io.Writer) error {
	jobs, err := k.jobs()
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
