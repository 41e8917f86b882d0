package agent

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	psapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// apiJobs reads what k.Write printed into k8s.io/api's Jobs, strictly: a field the
// API does not have (misspelt, misplaced) fails the test.
func apiJobs(t *testing.T, k K8s) []*batchv1.Job {
	t.Helper()
	var b bytes.Buffer
	if err := k.Write(&b); err != nil {
		t.Fatal(err)
	}
	var jobs []*batchv1.Job
	for i, d := range strings.Split(b.String(), "\n---\n") {
		var j batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(d), &j); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, d)
		}
		jobs = append(jobs, &j)
	}
	return jobs
}

// The manifests read back, strictly (no unknown field), into the API's Jobs, and from
// them into the same objects: nothing written is dropped or read otherwise.
func TestK8sRoundTrip(t *testing.T) {
	k := K8s{Agents: 5, Name: "big1", Namespace: "perf", Image: "registry.example/fathom:1", Secret: "fathom-creds", CPU: "2",
		Memory: "512Mi", LimitCPU: "3", Wait: "5m", Coordinator: true, RunArgs: []string{"--workload", "tpcb", "-c", "50", "-T", "10m"}}
	mine, err := k.jobs()
	if err != nil {
		t.Fatal(err)
	}
	jobs := apiJobs(t, k)
	if len(jobs) != 2 {
		t.Fatalf("%d documents, want 2", len(jobs))
	}
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		var back job
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, mine[i]) {
			t.Errorf("document %d does not read back as written:\n%s", i, b)
		}
	}
	a := jobs[0]
	spec := a.Spec.Template.Spec
	if *a.Spec.Completions != 5 || *a.Spec.Parallelism != 5 || *a.Spec.CompletionMode != batchv1.IndexedCompletion || *a.Spec.BackoffLimit != 0 ||
		a.Namespace != "perf" || spec.RestartPolicy != "Never" || spec.Containers[0].EnvFrom[0].SecretRef.Name != "fathom-creds" ||
		strings.Join(spec.Containers[0].Args, " ") != "agent --run big1 --wait 5m" ||
		spec.Containers[0].Resources.Requests.Cpu().String() != "2" || spec.Containers[0].Resources.Limits.Memory().String() != "512Mi" ||
		spec.Containers[0].Resources.Limits.Cpu().String() != "3" || spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" ||
		spec.Volumes[0].EmptyDir == nil || spec.Containers[0].VolumeMounts[0].MountPath != scratchDir {
		t.Errorf("agents' Job: %+v", a)
	}
	if got := strings.Join(jobs[1].Spec.Template.Spec.Containers[0].Args, " "); got != "run --agents 5 --name big1 --workload tpcb -c 50 -T 10m" {
		t.Errorf("coordinator runs %q", got)
	}
}

// Every quantity fathom accepts, the API accepts with the same value; the usual forms
// are accepted; what the API refuses, fathom refuses before printing anything.
func TestK8sQuantities(t *testing.T) {
	for _, q := range []string{"1", "500m", "0.5", "1.5", "2.", ".5", "+2", "256Mi", "1Gi", "1G", "1k", "100M", "1e3", "1E3", "2E", "1e-3", "10u", "100n", "0"} {
		k := K8s{Agents: 1, Name: "q", Wait: "1m", CPU: q, Memory: q}
		jobs := apiJobs(t, k)
		want, err := resource.ParseQuantity(q)
		if err != nil {
			t.Fatalf("%q: the API refuses it too: %v", q, err)
		}
		if got := jobs[0].Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; got.Cmp(want) != 0 {
			t.Errorf("%q: the API reads %s, want %s", q, got.String(), want.String())
		}
	}
	// The API also reads a suffix with no number ("Mi", "e3") as 0; fathom refuses it.
	for _, q := range []string{"lots", "1 Gi", "1GB", "1gi", "-1", "1.2.3", "", "e3", "1e", "Mi", "1Kii"} {
		if quantity.MatchString(q) {
			t.Errorf("%q accepted", q)
		}
		if _, err := resource.ParseQuantity(q); err == nil && q != "-1" && q != "e3" && q != "Mi" {
			t.Errorf("%q: the API accepts it: the table is wrong", q)
		}
	}
}

// What fathom's quantity grammar accepts, the API's parser accepts.
func FuzzK8sQuantity(f *testing.F) {
	for _, q := range []string{"1", "500m", "0.5", ".5", "256Mi", "1e3", "1E3", "2E", "+2", "1e-3", "lots", "1Kii", "0e9227000000000000000", "1e9223372036854775807"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if !quantity.MatchString(q) {
			return
		}
		v, err := resource.ParseQuantity(q)
		if err != nil {
			t.Fatalf("%q: fathom accepts it, the API refuses it: %v", q, err)
		}
		if v.Sign() < 0 {
			t.Fatalf("%q: negative", q)
		}
		// A plain or exponent form the API reads must keep its value (an int64
		// exponent wraps inside the parser: 1e9223372036854775807 reads as 100e-3).
		// The API's value is read back exactly (AsDec), not by its float approximation.
		if f, err := strconv.ParseFloat(strings.TrimPrefix(q, "+"), 64); err == nil && f >= 1 {
			got, err := strconv.ParseFloat(v.AsDec().String(), 64)
			if err != nil || math.Abs(got-f) > 1e-6*f {
				t.Fatalf("%q: the API reads %s", q, v.AsDec().String())
			}
		}
	})
}

// fathom's name check is the API's.
func FuzzK8sName(f *testing.F) {
	for _, n := range []string{"big-1", "Big_1", "big1-", "-big1", "a.b", strings.Repeat("a", 63), strings.Repeat("a", 64), ""} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		if got, want := isDNSLabel(n), len(validation.IsDNS1123Label(n)) == 0; got != want {
			t.Fatalf("%q: fathom says %v, the API %v", n, got, want)
		}
	})
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
		if _, err := k.jobs(); err == nil {
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
	jobs := apiJobs(t, k) // as printed, read by the API's types
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
		if _, err := k.jobs(); err == nil {
			t.Errorf("%+v: no error", k)
		}
	}
	k := K8s{Agents: 1, Name: strings.Repeat("a", 51), Wait: "1m", Coordinator: true, RunArgs: []string{"-T", "1m"}}
	for _, j := range apiJobs(t, k) {
		if errs := validation.IsDNS1123Label(j.Name); len(errs) > 0 {
			t.Errorf("Job name %q: %v", j.Name, errs)
		}
	}
}
