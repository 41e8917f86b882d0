package agent

import (
	"bytes"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
