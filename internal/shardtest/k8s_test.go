package shardtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"aimeter/shard"
)

// k8sPage is the page whose Job TestKubernetesJobAsProcesses runs.
const k8sPage = "../../docs/kubernetes.md"

// docCommand returns the "aimeter …" command of page that starts with
// prefix, its "\"-continued lines joined, as words (without "aimeter").
func docCommand(t *testing.T, page, prefix string) []string {
	t.Helper()
	md, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(md), prefix)
	if i < 0 {
		t.Fatalf("%s has no command %q…", page, prefix)
	}
	rest := string(md[i:])
	var cmd strings.Builder
	for line := range strings.Lines(rest) {
		line = strings.TrimSpace(line)
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cmd.WriteString(s + " ")
			continue
		}
		cmd.WriteString(line)
		break
	}
	return strings.Fields(cmd.String())[1:]
}

// TestKubernetesJobAsProcesses runs docs/kubernetes.md's test across 8
// hosts without a cluster: `aimeter k8s job` as the page gives it writes
// the Indexed Job (its start 6 s ahead instead of 3 min, the simulator's
// URL for the page's vLLM, and a shorter, slower test), and each of the
// Job's 8 pods is run as a process the way the kubelet would start it:
// the container's arguments as written, $(JOB_COMPLETION_INDEX) expanded
// and set in the environment, the claim's bench-8/ folder at /results.
// The page's `aimeter merge bench-8/shard-* --output-dir bench-8-merged`
// then merges them: its percentiles are DuckDB's over the shards' records,
// its verdict aimeter report's and aimeter check's, and its report shows
// the 8 shards.
func TestKubernetesJobAsProcesses(t *testing.T) {
	t.Parallel()
	python := duckdbPython(t)
	bin := buildAimeter(t)
	dir := t.TempDir()
	url := startServe(t, bin, []string{"serve", "openai", "--addr", docAddr, "--ttft", "2ms"})

	job := docCommand(t, k8sPage, "aimeter k8s job --name bench-8")
	sep := slices.Index(job, "--")
	if sep < 0 {
		t.Fatalf("the page's aimeter k8s job has no -- RUN-FLAGS: %v", job)
	}
	for k := range job {
		switch {
		case k > 0 && job[k-1] == "--lead":
			job[k] = "6s" // the page gives 3 minutes to apply the Job
		case k > sep && job[k-1] == "--url":
			job[k] = url
		}
	}
	// A test of 3 s at 200 queries/s in all; 8 processes starting on a
	// small machine at once may begin a few hundred ms late.
	job = append(job, "--output-tokens", "8", "--qsl-size", "64", "--set", "target_qps=200", "--set", "min_duration=3000", "--start-tolerance", "5s")
	if o := runAimeter(t, bin, dir, job...); o.code != 0 {
		t.Fatalf("%v", o)
	}
	out := job[slices.Index(job, "--output")+1]
	data, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(data, &j); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	n := int(*j.Spec.Completions)
	if n != 8 || *j.Spec.Parallelism != 8 || j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("the Job: %d completions, parallelism %d, mode %v; want 8 indexed", n, *j.Spec.Parallelism, j.Spec.CompletionMode)
	}
	c := j.Spec.Template.Spec.Containers[0]
	var mount string
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/results" {
			mount = m.SubPath
		}
	}
	if mount != "bench-8" {
		t.Fatalf("the Job mounts the claim's %q at /results, want bench-8", mount)
	}
	if err := os.Mkdir(filepath.Join(dir, mount), 0o755); err != nil {
		t.Fatal(err)
	}
	expand := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	var wg sync.WaitGroup
	outs := make([]outcome, n)
	for i := range n {
		env := map[string]string{}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index") {
				env[e.Name] = strconv.Itoa(i)
			}
		}
		if env[shard.EnvIndex] == "" {
			t.Fatalf("the Job's container does not set %s from the completion index: %+v", shard.EnvIndex, c.Env)
		}
		args := make([]string, len(c.Args))
		for k, a := range c.Args {
			a = expand.ReplaceAllStringFunc(a, func(v string) string { return env[v[2:len(v)-1]] })
			if rest, ok := strings.CutPrefix(a, "/results/"); ok {
				a = filepath.Join(dir, mount, rest)
			}
			args[k] = a
		}
		cmd, stdout, stderr := command(bin, dir, args)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", shard.EnvIndex, i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(processTimeout, func() { cmd.Process.Kill() })
		wg.Go(func() {
			defer timer.Stop()
			cmd.Wait()
			outs[i] = outcome{args: args, code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
		})
	}
	wg.Wait()
	for _, o := range outs {
		if o.code != 0 {
			t.Fatalf("a pod: %v", o)
		}
	}

	merge := docCommand(t, k8sPage, "aimeter merge bench-8/shard-*")
	var margs []string
	for _, a := range merge {
		if !strings.Contains(a, "*") {
			margs = append(margs, a)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(dir, a))
		if len(m) != n {
			t.Fatalf("%s matches %v, want the %d shards", a, m, n)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(dir, p)
			margs = append(margs, rel)
		}
	}
	mo := runAimeter(t, bin, dir, margs...)
	if mo.code != 0 && mo.code != 3 {
		t.Fatalf("merge: %v", mo)
	}
	merged := filepath.Join(dir, margs[slices.Index(margs, "--output-dir")+1])
	var m shard.Merge
	readJSON(t, filepath.Join(merged, shard.MergeFile), &m)
	if m.Count != n || len(m.Shards) != n || m.StartAt == nil {
		t.Fatalf("merge.json: %d of %d shards, start %v; want %d with the Job's start", len(m.Shards), m.Count, m.StartAt, n)
	}
	rel, _ := filepath.Rel(dir, merged)
	exactPercentiles(t, python, shardDirs(filepath.Join(dir, mount), n), merged)
	sameVerdict(t, bin, dir, mo, merged, []string{"report", rel}, []string{"check", rel})
	shardTable(t, merged, &m)
}
