package agent

import (
	"bytes"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	psapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// The manifests read back, strictly (no unknown field), into the same Jobs.
func TestK8sRoundTrip(t *testing.T) {
	k := K8s{Agents: 5, Name: "big1", Namespace: "perf", Image: "registry.example/fathom:1", Secret: "fathom-creds", CPU: "2",
		Memory: "512Mi", LimitCPU: "3", Wait: "5m", Coordinator: true, RunArgs: []string{"--workload", "tpcb", "-c", "50", "-T", "10m"}}
	jobs, err := k.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := k.Write(&b); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(b.String(), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), b.String())
	}
	for i, d := range docs {
		var got batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(d), &got); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if !equality.Semantic.DeepEqual(&got, jobs[i]) {
			t.Errorf("document %d does not read back as written:\n%s", i, d)
		}
	}
	a := jobs[0]
	spec := a.Spec.Template.Spec
	if *a.Spec.Completions != 5 || *a.Spec.Parallelism != 5 || *a.Spec.CompletionMode != batchv1.IndexedCompletion || *a.Spec.BackoffLimit != 0 ||
		a.Namespace != "perf" || spec.RestartPolicy != "Never" || spec.Containers[0].EnvFrom[0].SecretRef.Name != "fathom-creds" ||
		strings.Join(spec.Containers[0].Args, " ") != "agent --run big1 --wait 5m" ||
		spec.Containers[0].Resources.Requests.Cpu().String() != "2" || spec.Containers[0].Resources.Limits.Memory().String() != "512Mi" {
		t.Errorf("agents' Job: %+v", a)
	}
	if got := strings.Join(jobs[1].Spec.Template.Spec.Containers[0].Args, " "); got != "run --agents 5 --name big1 --workload tpcb -c 50 -T 10m" {
		t.Errorf("coordinator runs %q", got)
	}
}

func TestK8sRefuses(t *testing.T) {
	for _, k := range []K8s{
		{Agents: 0, Name: "x"},
		{Agents: 2},
		{Agents: 2, Name: "x", CPU: "lots"},
		{Agents: 2, Name: "x", Coordinator: true},
		{Agents: 2, Name: "x", RunArgs: []string{"-c", "4"}},
		{Agents: 2, Name: "x", Coordinator: true, RunArgs: []string{"--target", "postgres://bench:s3cret@db/bench"}},
	} {
		if _, err := k.Jobs(); err == nil {
			t.Errorf("%+v: no error", k)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// Every pod the manifests make passes the restricted Pod Security level, as the
// admission controller itself evaluates it (k8s.io/pod-security-admission's checks,
// the code the API server runs), and the Jobs clean up after themselves.
func TestK8sRestricted(t *testing.T) {
	k := K8s{Agents: 3, Name: "big-1", Image: "fathom:1", Secret: "fathom", CPU: "1", Memory: "256Mi", Wait: "10m",
		Coordinator: true, RunArgs: []string{"--workload", "tpcb", "-T", "10m"}}
	jobs, err := k.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	eval, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, j := range jobs {
		pod := j.Spec.Template
		for _, r := range eval.EvaluatePod(level, &pod.ObjectMeta, &pod.Spec) {
			if !r.Allowed {
				t.Errorf("%s: restricted level refuses it: %s: %s", j.Name, r.ForbiddenReason, r.ForbiddenDetail)
			}
		}
		if j.Spec.TTLSecondsAfterFinished == nil || *j.Spec.TTLSecondsAfterFinished != 24*3600 ||
			j.Spec.ActiveDeadlineSeconds == nil || *j.Spec.ActiveDeadlineSeconds != 6*3600 || *j.Spec.BackoffLimit != 0 {
			t.Errorf("%s: ttl %v, deadline %v, backoff %v", j.Name, j.Spec.TTLSecondsAfterFinished, j.Spec.ActiveDeadlineSeconds, *j.Spec.BackoffLimit)
		}
		if u := pod.Spec.SecurityContext.RunAsUser; u == nil || *u == 0 {
			t.Errorf("%s: no numeric non-root user: the kubelet cannot verify a user name", j.Name)
		}
	}
	// The test can fail: the same evaluator refuses the pod spec fathom printed before.
	old := jobs[0].Spec.Template.DeepCopy()
	old.Spec.SecurityContext = &corev1.PodSecurityContext{}
	old.Spec.Containers[0].SecurityContext = nil
	refused := false
	for _, r := range eval.EvaluatePod(level, &old.ObjectMeta, &old.Spec) {
		refused = refused || !r.Allowed
	}
	if !refused {
		t.Error("the evaluator allows a pod with no security context: the check proves nothing")
	}
}

// Names that Kubernetes would refuse are refused before anything is printed, with
// the form that works; the Job names that come out are valid DNS-1123 labels.
func TestK8sNames(t *testing.T) {
	for _, name := range []string{"Big_1", "big1-", "-big1", "UPPER", strings.Repeat("a", 52), "a.b"} {
		k := K8s{Agents: 1, Name: name, Wait: "1m"}
		var b bytes.Buffer
		if err := k.Write(&b); err == nil || !strings.Contains(err.Error(), "--name") || b.Len() != 0 {
			t.Errorf("--name %q: err %v, printed %d bytes", name, err, b.Len())
		}
	}
	for _, k := range []K8s{{Agents: 1, Name: "x", Wait: "10m", Deadline: "5m"}, {Agents: 1, Name: "x", Wait: "10m", TTL: "soon"}} {
		if _, err := k.Jobs(); err == nil {
			t.Errorf("%+v: no error", k)
		}
	}
	k := K8s{Agents: 1, Name: strings.Repeat("a", 51), Wait: "1m", Coordinator: true, RunArgs: []string{"-T", "1m"}}
	jobs, err := k.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if errs := validation.IsDNS1123Label(j.Name); len(errs) > 0 {
			t.Errorf("Job name %q: %v", j.Name, errs)
		}
	}
}
