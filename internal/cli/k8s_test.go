package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/yaml"

	"aimeter/internal/golden"
	"aimeter/k8sjob"
)

// k8sDoc is docs/kubernetes.md.
func k8sDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docK8sJobs returns the arguments of every `aimeter k8s job` command of
// the doc's code blocks.
func docK8sJobs(t *testing.T, doc string) [][]string {
	t.Helper()
	var out [][]string
	for _, args := range readmeCommands(doc) {
		if len(args) >= 2 && args[0] == "k8s" && args[1] == "job" {
			out = append(out, args)
		}
	}
	if len(out) < 2 {
		t.Fatalf("docs/kubernetes.md has %d aimeter k8s job commands, want the PVC one and the upload one: %q", len(out), out)
	}
	return out
}

// flagValue returns the value of --name in args (before "--"), or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// docBlocks returns the text of the doc's fenced code blocks of language
// lang.
func docBlocks(doc, lang string) []string {
	var out []string
	var cur []string
	in, keep := false, false
	for _, line := range strings.Split(doc, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			if in && keep {
				out = append(out, strings.Join(cur, "\n")+"\n")
			}
			in, keep, cur = !in, !in && strings.TrimPrefix(trim, "```") == lang, nil
			continue
		}
		if in {
			cur = append(cur, line)
		}
	}
	return out
}

var rfc3339Second = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// Every `aimeter k8s job` command of docs/kubernetes.md runs as written
// and writes the manifest of its golden file (the start time, which
// depends on when the test runs, and aimeter's version replaced), which
// decodes strictly into a batchv1.Job of the command's name and shards.
// The golden files are the doc's commands' output: go test -update
// rewrites them from the doc.
func TestK8sDocCommandsMatchGolden(t *testing.T) {
	doc := k8sDoc(t)
	pkgDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range docK8sJobs(t, doc) {
		name, out := flagValue(args, "name"), flagValue(args, "output")
		lead, err := time.ParseDuration(flagValue(args, "lead"))
		if name == "" || out == "" || err != nil {
			t.Fatalf("doc command %q: give --name, --output and --lead (the golden file needs a file and a start relative to now)", args)
		}
		before := time.Now()
		r := runCLI(t, dir, args...)
		after := time.Now()
		if r.code != ExitOK {
			t.Errorf("doc command `aimeter %s`: %v", strings.Join(args, " "), r)
			continue
		}
		if !strings.Contains(r.stderr, "kubectl apply -f "+out) {
			t.Errorf("%s: stderr does not say how to apply it: %q", name, r.stderr)
		}
		y, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		starts := rfc3339Second.FindAllString(string(y), -1)
		if len(starts) != 3 { // the header, the annotation, the argument
			t.Errorf("%s: %d times in the manifest (%q), want the start three times", name, len(starts), starts)
		}
		for _, s := range starts {
			st, _ := time.Parse(time.RFC3339, s)
			if s != starts[0] || st.Before(before.Add(lead).Add(-time.Second)) || st.After(after.Add(lead)) {
				t.Errorf("%s: start %s, want now + --lead %v (between %s and %s)", name, s, lead, before.Add(lead).UTC().Format(time.RFC3339), after.Add(lead).UTC().Format(time.RFC3339))
			}
		}
		shards, _ := strconv.Atoi(flagValue(args, "shards"))
		var job batchv1.Job
		if err := k8sjob.DecodeStrict(y, &job); err != nil {
			t.Errorf("%s: the manifest does not decode strictly: %v", name, err)
		} else if job.Name != name || *job.Spec.Completions != int32(shards) {
			t.Errorf("%s: Job %s of %d completions, want the command's --name and --shards", name, job.Name, *job.Spec.Completions)
		}
		norm := strings.ReplaceAll(string(y), starts[0], "START-AT")
		norm = strings.Replace(norm, "aimeter "+Version+":", "aimeter VERSION:", 1)
		golden.Check(t, filepath.Join(pkgDir, "testdata", "k8s_job_"+name+".golden.yaml"), []byte(norm))
	}
}

// The page is one procedure: its YAML blocks decode strictly into the
// Kubernetes API types, and its kubectl commands name the files, Jobs,
// labels, pods, claim, Secrets and paths that its aimeter k8s job
// commands and YAML blocks create.
func TestK8sDocIsConsistent(t *testing.T) {
	doc := k8sDoc(t)
	jobs := map[string][]string{} // name -> args
	files := map[string]string{}  // file -> what it holds
	for _, args := range docK8sJobs(t, doc) {
		jobs[flagValue(args, "name")] = args
		files[flagValue(args, "output")] = "Job " + flagValue(args, "name")
	}
	pods := map[string]corev1.Pod{}
	claims := map[string]bool{}
	for _, y := range docBlocks(doc, "yaml") {
		first, _, _ := strings.Cut(y, "\n")
		file, ok := strings.CutPrefix(first, "# ")
		if !ok {
			t.Errorf("a YAML block does not name its file on its first line (# FILE):\n%s", y)
			continue
		}
		var meta metav1.TypeMeta // its kind; the strict decoding follows
		if err := yaml.Unmarshal([]byte(y), &meta); err != nil {
			t.Errorf("%s: %v", file, err)
		}
		switch meta.Kind {
		case "Pod":
			var p corev1.Pod
			if err := k8sjob.DecodeStrict([]byte(y), &p); err != nil {
				t.Errorf("%s: %v", file, err)
			}
			pods[p.Name] = p
			files[file] = "Pod " + p.Name
		case "PersistentVolumeClaim":
			var c corev1.PersistentVolumeClaim
			if err := k8sjob.DecodeStrict([]byte(y), &c); err != nil {
				t.Errorf("%s: %v", file, err)
			}
			if !slices.Contains(c.Spec.AccessModes, corev1.ReadWriteMany) {
				t.Errorf("%s: access modes %v: N nodes mount the claim at once, it must be ReadWriteMany", file, c.Spec.AccessModes)
			}
			claims[c.Name] = true
			files[file] = "PersistentVolumeClaim " + c.Name
		default:
			t.Errorf("%s: a YAML block of kind %q, which the test does not decode", file, meta.Kind)
		}
	}
	for name, args := range jobs {
		if pvc := flagValue(args, "pvc"); pvc != "" && !claims[pvc] {
			t.Errorf("Job %s writes to --pvc %s, which no YAML block of the page creates", name, pvc)
		}
	}
	secrets := map[string][]string{} // name -> keys
	var lines [][]string
	for _, block := range docBlocks(doc, "sh") {
		for _, line := range strings.Split(block, "\n") {
			if w := shellWords(strings.TrimSpace(line)); len(w) > 0 && w[0] == "kubectl" {
				lines = append(lines, w)
			}
		}
	}
	if len(lines) < 10 {
		t.Fatalf("found %d kubectl commands in docs/kubernetes.md", len(lines))
	}
	job := func(line []string, name string) {
		if _, ok := jobs[name]; !ok {
			t.Errorf("%q names the Job %s, which no aimeter k8s job command of the page writes", strings.Join(line, " "), name)
		}
	}
	pod := func(line []string, name string) corev1.Pod {
		p, ok := pods[name]
		if !ok {
			t.Errorf("%q names the pod %s, which no YAML block of the page holds", strings.Join(line, " "), name)
		}
		return p
	}
	for _, w := range lines {
		line := strings.Join(w, " ")
		for i, a := range w {
			switch {
			case strings.HasPrefix(a, "job/"):
				job(w, strings.TrimPrefix(a, "job/"))
			case a == "job" && i+1 < len(w):
				job(w, w[i+1])
			case strings.HasPrefix(a, "pod/"):
				pod(w, strings.TrimPrefix(a, "pod/"))
			case a == "pod" && i+1 < len(w):
				pod(w, w[i+1])
			case a == "-l" && i+1 < len(w):
				k, v, _ := strings.Cut(w[i+1], "=")
				if k != k8sjob.TestLabel {
					t.Errorf("%q selects by %s; the Job's pods carry %s", line, k, k8sjob.TestLabel)
				}
				job(w, v)
			case a == "-f" && i+1 < len(w):
				if _, ok := files[w[i+1]]; !ok {
					t.Errorf("%q applies %s, which the page neither writes nor shows", line, w[i+1])
				}
			}
		}
		if len(w) >= 5 && w[1] == "create" && w[2] == "secret" && w[3] == "generic" {
			for _, a := range w[5:] {
				for _, p := range []string{"--from-literal=", "--from-file="} {
					if kv, ok := strings.CutPrefix(a, p); ok {
						k, _, _ := strings.Cut(kv, "=")
						secrets[w[4]] = append(secrets[w[4]], k)
					}
				}
			}
		}
		if len(w) == 4 && w[1] == "cp" {
			// kubectl cp POD:/MOUNT/NAME NAME copies Job NAME's folder of
			// the claim, holding shard-0 … shard-(N-1).
			src, path, _ := strings.Cut(w[2], ":")
			p := pod(w, src)
			name := filepath.Base(path)
			job(w, name)
			if w[3] != name {
				t.Errorf("%q copies into %s; the page then names the shards %s/shard-I", line, w[3], name)
			}
			pvc := flagValue(jobs[name], "pvc")
			var mounted string
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc {
					for _, m := range p.Spec.Containers[0].VolumeMounts {
						if m.Name == v.Name && m.SubPath == "" {
							mounted = m.MountPath
						}
					}
				}
			}
			if mounted == "" {
				t.Errorf("%q copies from %s, which does not mount --pvc %s (of Job %s) whole", line, src, pvc, name)
			} else if path != mounted+"/"+name {
				t.Errorf("%q copies %s; Job %s's shards are at %s/%s (the pod mounts --pvc %s at %q, the Job writes under the sub-path NAME)", line, path, name, mounted, name, pvc, mounted)
			}
		}
	}
	for name, args := range jobs {
		if s := flagValue(args, "token-secret"); s != "" {
			want := []string{k8sjob.SecretTokenKey, k8sjob.SecretKeyKey}
			if slices.Contains(args, "--ca-in-secret") {
				want = append(want, k8sjob.SecretCAKey)
			}
			if got := secrets[s]; !slices.Equal(got, want) {
				t.Errorf("Job %s reads the keys %q of the Secret %s; the page creates it with %q", name, want, s, got)
			}
		}
		if s := flagValue(args, "env-secret"); s != "" && len(secrets[s]) == 0 {
			t.Errorf("Job %s takes environment variables from the Secret %s, which the page does not create", name, s)
		}
	}
	for _, want := range []string{"aimeter run --shards N --start-at T --output-dir /results/shard-I --no-store RUN-FLAGS…"} {
		if !strings.Contains(doc, want) || !strings.Contains(helpText("k8s_job"), want) {
			t.Errorf("the doc and aimeter k8s job --help should both show %q", want)
		}
	}
}

// Bad input is refused with exit 2, naming the flag, and no manifest is
// written.
func TestK8sJobRefuses(t *testing.T) {
	dir := t.TempDir()
	base := []string{"k8s", "job", "--name", "bench", "--image", "registry.example/aimeter:0.1.0", "--shards", "4", "--pvc", "results", "--output", "job.yaml"}
	set := func(flag, v string) []string {
		args := slices.Clone(base)
		i := slices.Index(args, flag)
		if i < 0 {
			return append(args, flag, v)
		}
		args[i+1] = v
		return args
	}
	for _, r := range []struct {
		why  string
		args []string
		want string
	}{
		{"no shards", set("--shards", "0"), "--shards 0: at least 1"},
		{"too many shards", set("--shards", "1001"), "--shards 1001: at most 1000"},
		{"a name that is not a DNS-1123 label", set("--name", "Bench_8"), "--name Bench_8: not a DNS-1123 label"},
		{"a name too long for its pods' host names", set("--name", strings.Repeat("b", 62)), "--name " + strings.Repeat("b", 62) + ": too long for 4 shards"},
		{"an image without a tag", set("--image", "registry.example/aimeter"), "--image registry.example/aimeter: no tag or digest"},
		{"an image tagged latest", set("--image", "aimeter:latest"), `--image aimeter:latest: the tag "latest"`},
		{"a start in the past", append(slices.Clone(base), "--start-at", "2020-01-01T00:00:00Z"), "--start-at 2020-01-01T00:00:00Z: in the past"},
		{"a start far in the future", append(slices.Clone(base), "--start-at", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339)), "more than 24h"},
		{"a start that is no time", append(slices.Clone(base), "--start-at", "tomorrow"), "--start-at tomorrow: not an RFC 3339 time"},
		{"a lead of zero", set("--lead", "0s"), "--lead 0s: at least 1s"},
		{"a lead of two days", set("--lead", "48h"), "--lead 48h0m0s: more than 24h0m0s"},
		{"no place for the bundles", slices.Delete(slices.Clone(base), 8, 10), "--pvc: the bundles need a place"},
		{"a server without its secret", set("--server", "https://tester:8443"), "--token-secret: required with --server"},
		{"a limit below the request", set("--memory-limit", "1Gi"), "--memory-limit 1Gi: less than the request --memory"},
		{"a CPU that is no quantity", set("--cpu", "lots"), "--cpu lots: not a Kubernetes quantity"},
		{"a node selector without =", set("--node-selector", "loadgen"), "--node-selector loadgen: want KEY=VALUE"},
		{"a deadline before the start", set("--deadline", "1m"), "--deadline 1m0s: ends before the start"},
		{"a flag the Job sets", append(slices.Clone(base), "--", "--output-dir", "x"), "--output-dir after --: the Job sets it"},
		{"the shard index by hand", append(slices.Clone(base), "--", "--shard", "1/4"), "--shard after --: the Job gives each pod its index"},
		{"a token in the manifest", append(slices.Clone(base), "--", "--token", "amt_x"), "--token after --: a token in a manifest is a leaked secret; the Job reads it from --token-secret"},
		{"a flag aimeter run does not know", append(slices.Clone(base), "--", "--concurency", "8"), "aimeter run's flags: unknown flag: --concurency"},
		{"a value of the wrong type", append(slices.Clone(base), "--", "--concurrency", "eight"), `invalid argument "eight" for "--concurrency"`},
		{"an argument that is no flag", append(slices.Clone(base), "--", "Offline"), `"Offline" after --: aimeter run takes flags only`},
		{"an argument before --", append(slices.Clone(base), "Offline"), `"Offline": aimeter k8s job takes no arguments`},
	} {
		res := runCLI(t, dir, r.args...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, r.want) {
			t.Errorf("%s: want exit 2 saying %q, got %v", r.why, r.want, res)
		}
		if _, err := os.Stat(filepath.Join(dir, "job.yaml")); err == nil {
			t.Fatalf("%s: job.yaml written although the command was refused", r.why)
		}
	}
}

// The header's command line reads back, through a shell's word
// splitting, as the arguments that wrote the manifest; a single quote
// inside a quoted word is written as sh reads it.
func TestK8sShellQuote(t *testing.T) {
	args := []string{"k8s", "job", "--name", "b", "--", "--set", "target_qps=800", "--header", "X-Team: ml ops", "--extra-body", `{"a":1}`, ""}
	q := shellQuote(args)
	if got := shellWords(q); !slices.Equal(got, args) {
		t.Errorf("shellQuote(%q) = %s, which splits into %q", args, q, got)
	}
	if want := `k8s job --name b -- --set target_qps=800 --header 'X-Team: ml ops' --extra-body '{"a":1}' ''`; q != want {
		t.Errorf("shellQuote = %s, want %s", q, want)
	}
	if got, want := shellQuote([]string{"it's"}), `'it'\''s'`; got != want {
		t.Errorf("shellQuote(it's) = %s, want %s", got, want)
	}
}

// The page's status note and merge step say what is not built yet, and
// only that: when aimeter merge, or aimeter run's --shards and --start-at,
// come, this fails until the page gives them as built.
func TestK8sDocStatusIsTrue(t *testing.T) {
	doc := strings.Join(strings.Fields(strings.ReplaceAll(k8sDoc(t), "\n> ", "\n")), " ")
	root := newRootCommand(&State{})
	merge, _, err := root.Find([]string{"merge"})
	hasMerge := err == nil && merge.Name() == "merge"
	if saysNot := strings.Contains(doc, "there is no `aimeter merge` command yet"); saysNot == hasMerge {
		t.Errorf("docs/kubernetes.md says there is no aimeter merge command yet: %v; there is one: %v", saysNot, hasMerge)
	}
	run, _, _ := root.Find([]string{"run"})
	hasShards := run.Flags().Lookup("shards") != nil && run.Flags().Lookup("start-at") != nil
	saysNot := !strings.Contains(doc, "`aimeter run --shards N --start-at T` (docs/sharding.md), are here")
	if saysNot == hasShards {
		t.Errorf("docs/kubernetes.md says aimeter run --shards and --start-at are being built: %v; they are there: %v", saysNot, hasShards)
	}
}

// Every flag the Job gives aimeter run is one of aimeter run's, and the
// whole argument list parses as its flags; --shards and --start-at, which
// are being built, are the only ones allowed to be missing (and
// TestK8sDocStatusIsTrue holds the page to that).
func TestK8sJobArgsAreRunFlags(t *testing.T) {
	o := k8sjob.Options{Name: "b", Image: "a:1", Shards: 4, StartAt: time.Now().Add(time.Hour).Truncate(time.Second),
		PVC: "p", Server: "https://t:8443", TokenSecret: "s", SecretHasCA: true,
		RunArgs: []string{"--scenario", "Offline", "-q"}}
	args := o.Args()
	if args[0] != "run" {
		t.Fatalf("args %q: want aimeter run", args)
	}
	run := newRunCommand(&State{}).Flags()
	pending := map[string]bool{"shards": true, "start-at": true}
	var kept []string
	for i := 1; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			kept = append(kept, args[i])
			continue
		}
		f := run.Lookup(name)
		switch {
		case f == nil && pending[name]:
			i++ // and its value
			continue
		case f == nil:
			t.Errorf("the Job passes --%s, which aimeter run does not have", name)
		}
		kept = append(kept, args[i])
	}
	if err := run.Parse(kept); err != nil || len(run.Args()) > 0 {
		t.Errorf("aimeter run does not parse the Job's arguments %q: %v (left %q)", kept, err, run.Args())
	}
	if got := run.Lookup("output-dir").Value.String(); got != "/results/shard-$(JOB_COMPLETION_INDEX)" {
		t.Errorf("--output-dir %q", got)
	}
}
