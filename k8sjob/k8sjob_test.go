package k8sjob

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"aimeter/internal/golden"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fullOptions uses every option: both places for the bundles, limits
// above the requests, a node selector, the Secrets and a deadline.
func fullOptions() Options {
	return Options{
		Name:            "bench-8",
		Namespace:       "loadgen",
		Image:           "registry.example:5000/team/aimeter:0.1.0@sha256:" + strings.Repeat("ab", 32),
		Command:         "/usr/local/bin/aimeter",
		Shards:          8,
		StartAt:         testNow.Add(3 * time.Minute),
		Now:             testNow,
		RunArgs:         []string{"--sut", "openai", "--url", "http://vllm.inference:8000", "--scenario", "Server", "--set", "target_qps=800"},
		CPU:             "8",
		Memory:          "16Gi",
		CPULimit:        "none",
		MemoryLimit:     "32Gi",
		PVC:             "aimeter-results",
		Server:          "https://tester.example:8443",
		TokenSecret:     "aimeter-upload",
		SecretHasCA:     true,
		NodeSelector:    map[string]string{"node-pool": "loadgen"},
		EnvSecret:       "vllm-key",
		ImagePullSecret: "registry-creds",
		Deadline:        time.Hour,
	}
}

// decode marshals job and decodes it back strictly.
func decode(t *testing.T, job *batchv1.Job) (*batchv1.Job, []byte) {
	t.Helper()
	y, err := Marshal(job, "a header\nof two lines")
	if err != nil {
		t.Fatal(err)
	}
	var back batchv1.Job
	if err := DecodeStrict(y, &back); err != nil {
		t.Fatalf("the manifest does not decode strictly into batchv1.Job: %v\n%s", err, y)
	}
	return &back, y
}

// The manifest decodes strictly back into the Job that Build returned,
// and every field that makes it one test on N nodes holds what it must.
func TestBuildDecodesStrictly(t *testing.T) {
	o := fullOptions()
	built, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	job, y := decode(t, built)
	if !equality.Semantic.DeepEqual(job, built) {
		t.Errorf("decoded Job differs from the built one:\nbuilt %+v\nback  %+v", built, job)
	}
	if !strings.HasPrefix(string(y), "# a header\n# of two lines\napiVersion: batch/v1\n") {
		t.Errorf("the manifest does not start with the header and apiVersion:\n%.200s", y)
	}
	if strings.Contains(string(y), "status") || strings.Contains(string(y), "creationTimestamp") {
		t.Errorf("the manifest carries the empty status or a null creationTimestamp:\n%s", y)
	}
	spec := job.Spec
	pod := spec.Template.Spec
	c := pod.Containers[0]
	envNames := func(c corev1.Container) []string {
		var n []string
		for _, e := range c.Env {
			n = append(n, e.Name)
		}
		return n
	}
	var volumes = map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	start := "2026-11-29T12:03:00Z"
	rows := []struct {
		what string
		got  any
		want any
		why  string
	}{
		{"apiVersion/kind", job.APIVersion + "/" + job.Kind, "batch/v1/Job", "kubectl apply needs both"},
		{"name", job.Name, "bench-8", "kubectl wait job/NAME names it"},
		{"namespace", job.Namespace, "loadgen", "--namespace"},
		{"completionMode", *spec.CompletionMode, batchv1.IndexedCompletion, "each pod gets its shard index"},
		{"completions", *spec.Completions, int32(8), "N shards, each once"},
		{"parallelism", *spec.Parallelism, int32(8), "all N run at once, to start together"},
		{"backoffLimit", *spec.BackoffLimit, int32(0), "a retried shard would start after the common start"},
		{"activeDeadlineSeconds", *spec.ActiveDeadlineSeconds, int64(3600), "--deadline"},
		{"restartPolicy", pod.RestartPolicy, corev1.RestartPolicyNever, "no restart in place either"},
		{"anti-affinity topology", pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey, "kubernetes.io/hostname", "one shard per node"},
		{"anti-affinity terms", len(pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution), 1, "required, not preferred"},
		{"pod label", spec.Template.Labels[TestLabel], "bench-8", "the anti-affinity selects by it"},
		{"containers", len(pod.Containers), 1, "one aimeter per pod"},
		{"image", c.Image, o.Image, "--image as given"},
		{"pull policy", c.ImagePullPolicy, corev1.PullIfNotPresent, "a pinned image need not be pulled again"},
		{"command", c.Command, []string{"/usr/local/bin/aimeter"}, "--command"},
		{"args", c.Args, []string{"run", "--shards", "8", "--start-at", start, "--output-dir", "/results/shard-$(JOB_COMPLETION_INDEX)",
			"--server", "https://tester.example:8443", "--token", "$(AIMETER_TOKEN)", "--key", "/var/run/aimeter/upload/client.key", "--ca", "/var/run/aimeter/upload/ca.pem",
			"--no-store", "--sut", "openai", "--url", "http://vllm.inference:8000", "--scenario", "Server", "--set", "target_qps=800"},
			"the Job's flags, then the test's"},
		{"env", envNames(c), []string{"JOB_COMPLETION_INDEX", "AIMETER_TOKEN"}, "the index and the token, nothing else"},
		{"index from the downward API", c.Env[0].ValueFrom.FieldRef.FieldPath, "metadata.annotations['batch.kubernetes.io/job-completion-index']", "the annotation the Job controller sets"},
		{"token from the Secret", *c.Env[1].ValueFrom.SecretKeyRef, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "aimeter-upload"}, Key: "token"}, "no token in the manifest"},
		{"envFrom", c.EnvFrom[0].SecretRef.Name, "vllm-key", "--env-secret"},
		{"cpu request", c.Resources.Requests.Cpu().String(), "8", "--cpu"},
		{"memory request", c.Resources.Requests.Memory().String(), "16Gi", "--memory"},
		{"cpu limit", c.Resources.Limits.Cpu().IsZero(), true, "--cpu-limit none"},
		{"memory limit", c.Resources.Limits.Memory().String(), "32Gi", "--memory-limit"},
		{"results volume", volumes["results"].PersistentVolumeClaim.ClaimName, "aimeter-results", "--pvc"},
		{"results mount", c.VolumeMounts[0], corev1.VolumeMount{Name: "results", MountPath: "/results", SubPath: "bench-8"}, "each test its folder on the claim"},
		{"upload volume", volumes["upload"].Secret.Items, []corev1.KeyToPath{{Key: "client.key", Path: "client.key"}, {Key: "ca.pem", Path: "ca.pem"}}, "the key and the certificate, not the token"},
		{"upload mount", c.VolumeMounts[1], corev1.VolumeMount{Name: "upload", MountPath: UploadDir, ReadOnly: true}, "the path of --key and --ca"},
		{"node selector", pod.NodeSelector, map[string]string{"node-pool": "loadgen"}, "--node-selector"},
		{"image pull secret", pod.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "registry-creds"}}, "--image-pull-secret"},
		{"start annotation", job.Annotations["aimeter/start-at"], start, "kubectl get job shows when it starts"},
	}
	for _, r := range rows {
		if !equality.Semantic.DeepEqual(r.got, r.want) {
			t.Errorf("%s: %v, want %v (%s)", r.what, r.got, r.want, r.why)
		}
	}
	golden.Check(t, filepath.Join("testdata", "full.golden.yaml"), y)
}

// The anti-affinity selects the Job's own pods (so that no two of them
// share a node) and no pod of another test.
func TestAntiAffinitySelectsItsOwnPods(t *testing.T) {
	a, _ := Build(fullOptions())
	o := fullOptions()
	o.Name = "other"
	b, _ := Build(o)
	term := a.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(a.Spec.Template.Labels)) {
		t.Errorf("the selector %v does not match the Job's pods (%v): shards could share a node", sel, a.Spec.Template.Labels)
	}
	if sel.Matches(labels.Set(b.Spec.Template.Labels)) {
		t.Errorf("the selector %v matches another test's pods (%v): two tests could not share the cluster's nodes", sel, b.Spec.Template.Labels)
	}
}

// Every $(VAR) in the container's arguments names a variable of its env:
// the kubelet expands only those and leaves any other as written, which
// would send every shard's bundle to one folder.
func TestArgsExpandDeclaredVariables(t *testing.T) {
	job, _ := Build(fullOptions())
	c := job.Spec.Template.Spec.Containers[0]
	declared := map[string]bool{}
	for _, e := range c.Env {
		declared[e.Name] = true
	}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var seen []string
	for _, a := range c.Args {
		for _, m := range ref.FindAllStringSubmatch(a, -1) {
			seen = append(seen, m[1])
			if !declared[m[1]] {
				t.Errorf("argument %q uses $(%s), which the container's env does not declare", a, m[1])
			}
		}
	}
	if !slices.Contains(seen, IndexEnv) || !slices.Contains(seen, TokenEnv) {
		t.Errorf("the arguments use %v; want the index and the token", seen)
	}
}

// The defaults: requests and limits equal (Guaranteed QoS), an emptyDir
// only with uploads, no namespace written, "aimeter" as the command,
// --no-store unless the test's flags name the store.
func TestDefaults(t *testing.T) {
	o := Options{Name: "b", Image: "a:1", Shards: 2, StartAt: testNow.Add(time.Minute), Now: testNow, PVC: "p"}
	job, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !equality.Semantic.DeepEqual(c.Resources.Requests, c.Resources.Limits) || c.Resources.Requests.Cpu().String() != DefaultCPU || c.Resources.Requests.Memory().String() != DefaultMemory {
		t.Errorf("default resources %v: want requests = limits = %s CPU, %s memory (Guaranteed QoS)", c.Resources, DefaultCPU, DefaultMemory)
	}
	if job.Namespace != "" || c.Command[0] != "aimeter" || len(job.Spec.Template.Spec.Volumes) != 1 || job.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("defaults: namespace %q, command %q, volumes %v, deadline %v", job.Namespace, c.Command, job.Spec.Template.Spec.Volumes, job.Spec.ActiveDeadlineSeconds)
	}
	if !slices.Contains(c.Args, "--no-store") || slices.Contains(c.Args, "--server") {
		t.Errorf("args %q: want --no-store and no upload", c.Args)
	}
	o.RunArgs = []string{"--store", "postgres://db/aimeter"}
	job, _ = Build(o)
	if args := job.Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--no-store") {
		t.Errorf("args %q: --no-store added although the test names --store", args)
	}
	// Uploads only: an emptyDir, no sub-path.
	o = Options{Name: "b", Image: "a:1", Shards: 2, StartAt: testNow.Add(time.Minute), Now: testNow, Server: "https://t:8443", TokenSecret: "s"}
	job, _ = Build(o)
	pod := job.Spec.Template.Spec
	if pod.Volumes[0].EmptyDir == nil || pod.Containers[0].VolumeMounts[0].SubPath != "" || slices.Contains(pod.Containers[0].Args, "--ca") {
		t.Errorf("uploads only: volumes %v, mounts %v, args %q", pod.Volumes, pod.Containers[0].VolumeMounts, pod.Containers[0].Args)
	}
}

// Strict decoding means something: a misspelt, a wrongly cased or a
// repeated field of a manifest is refused, naming it.
func TestDecodeStrictRefuses(t *testing.T) {
	job, _ := Build(fullOptions())
	y, _ := Marshal(job, "")
	for _, r := range []struct {
		why, old, new, want string
	}{
		{"a misspelt field", "completionMode: Indexed", "completionMod: Indexed", "completionMod"},
		{"a field in the wrong case", "backoffLimit: 0", "BackoffLimit: 0", "BackoffLimit"},
		{"a field given twice", "parallelism: 8", "parallelism: 8\n  parallelism: 4", "parallelism"},
	} {
		bad := strings.Replace(string(y), r.old, r.new, 1)
		if bad == string(y) {
			t.Fatalf("%s: %q is not in the manifest", r.why, r.old)
		}
		var back batchv1.Job
		err := DecodeStrict([]byte(bad), &back)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: DecodeStrict gave %v, want an error naming %q", r.why, err, r.want)
		}
	}
}

// Bad options are refused, each naming its field, and no Job is built.
func TestBuildRefuses(t *testing.T) {
	for _, r := range []struct {
		why   string
		set   func(*Options)
		field string
		want  string
	}{
		{"no name", func(o *Options) { o.Name = "" }, "Name", "required"},
		{"a name in capitals", func(o *Options) { o.Name = "Bench" }, "Name", "DNS-1123"},
		{"a name with a dot", func(o *Options) { o.Name = "bench.8" }, "Name", "DNS-1123"},
		{"a name too long for the pods' host names", func(o *Options) { o.Name = strings.Repeat("a", 62) }, "Name", "host names"},
		{"a namespace with '_'", func(o *Options) { o.Namespace = "load_gen" }, "Namespace", "DNS-1123"},
		{"no shards", func(o *Options) { o.Shards = 0 }, "Shards", "at least 1"},
		{"negative shards", func(o *Options) { o.Shards = -2 }, "Shards", "at least 1"},
		{"more shards than MaxShards", func(o *Options) { o.Shards = MaxShards + 1 }, "Shards", "at most 1000"},
		{"no image", func(o *Options) { o.Image = "" }, "Image", "required"},
		{"an image without tag or digest", func(o *Options) { o.Image = "registry.example:5000/aimeter" }, "Image", "no tag or digest"},
		{"the tag latest", func(o *Options) { o.Image = "aimeter:latest" }, "Image", "latest"},
		{"a digest that is not one", func(o *Options) { o.Image = "aimeter@sha256:xyz" }, "Image", "not a digest"},
		{"an upper-case repository", func(o *Options) { o.Image = "Aimeter:1" }, "Image", "repository"},
		{"a bad tag", func(o *Options) { o.Image = "aimeter:-1" }, "Image", "not an image tag"},
		{"a command with blanks", func(o *Options) { o.Command = " aimeter" }, "Command", "blanks"},
		{"no start", func(o *Options) { o.StartAt = time.Time{} }, "StartAt", "required"},
		{"a start in the past", func(o *Options) { o.StartAt = testNow.Add(-time.Second) }, "StartAt", "in the past"},
		{"a start now", func(o *Options) { o.StartAt = testNow }, "StartAt", "in the past"},
		{"a start too far ahead", func(o *Options) { o.StartAt = testNow.Add(MaxLead + time.Second) }, "StartAt", "more than 24h"},
		{"a start with a fraction of a second", func(o *Options) { o.StartAt = testNow.Add(time.Minute + time.Millisecond) }, "StartAt", "whole seconds"},
		{"--output-dir in the test's flags", func(o *Options) { o.RunArgs = []string{"--output-dir=x"} }, "RunArgs", "the Job sets it"},
		{"--shard in the test's flags", func(o *Options) { o.RunArgs = []string{"--scenario", "Offline", "--shard", "1/4"} }, "RunArgs", "JOB_COMPLETION_INDEX"},
		{"--token in the test's flags", func(o *Options) { o.RunArgs = []string{"--token", "amt_x"} }, "RunArgs", "leaked secret"},
		{"nowhere for the bundles", func(o *Options) { o.PVC, o.Server, o.TokenSecret, o.SecretHasCA = "", "", "", false }, "PVC", "need a place"},
		{"a claim name in capitals", func(o *Options) { o.PVC = "Results" }, "PVC", "object name"},
		{"a server without a token secret", func(o *Options) { o.TokenSecret = "" }, "TokenSecret", "required with Server"},
		{"a token secret without a server", func(o *Options) { o.Server = "" }, "TokenSecret", "nothing uploads"},
		{"a CA without a server", func(o *Options) { o.Server, o.TokenSecret = "", "" }, "SecretHasCA", "nothing uploads"},
		{"a server that is no URL", func(o *Options) { o.Server = "tester:8443" }, "Server", "not a URL"},
		{"a CPU that is no quantity", func(o *Options) { o.CPU = "four" }, "CPU", "quantity"},
		{"a zero memory", func(o *Options) { o.Memory = "0" }, "Memory", "more than 0"},
		{"a limit below the request", func(o *Options) { o.MemoryLimit = "8Gi" }, "MemoryLimit", "less than the request"},
		{"a node selector key with blanks", func(o *Options) { o.NodeSelector = map[string]string{"node pool": "x"} }, "NodeSelector", "label key"},
		{"a node selector value too long", func(o *Options) { o.NodeSelector = map[string]string{"pool": strings.Repeat("x", 64)} }, "NodeSelector", "label value"},
		{"an env secret in capitals", func(o *Options) { o.EnvSecret = "Key" }, "EnvSecret", "object name"},
		{"a negative deadline", func(o *Options) { o.Deadline = -time.Second }, "Deadline", "whole seconds"},
		{"a deadline before the start", func(o *Options) { o.Deadline = 3 * time.Minute }, "Deadline", "before the start"},
	} {
		o := fullOptions()
		r.set(&o)
		job, err := Build(o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != r.field || !strings.Contains(err.Error(), r.want) || job != nil {
			t.Errorf("%s: Build gave %v (%v), want an OptionError of %s saying %q", r.why, err, job != nil, r.field, r.want)
		}
	}
}

// Images that pin one aimeter are accepted.
func TestImagesAccepted(t *testing.T) {
	for _, image := range []string{
		"aimeter:0.1.0",
		"registry.example/team/aimeter:v1",
		"Registry.Example:5000/team/aimeter:1.0-rc1",
		"aimeter@sha256:" + strings.Repeat("0f", 32),
		"ghcr.io/org/aimeter:latest@sha256:" + strings.Repeat("0f", 32),
		"localhost:5000/aimeter:dev_2",
	} {
		if err := checkImage(image); err != nil {
			t.Errorf("%s: %v", image, err)
		}
	}
}

// ReservedRunFlag finds the flags the Job sets in both spellings, and
// nothing after "--" or in values.
func TestReservedRunFlag(t *testing.T) {
	for _, r := range []struct {
		args []string
		want string
	}{
		{[]string{"--start-at", "x"}, "start-at"},
		{[]string{"--start-at=x"}, "start-at"},
		{[]string{"--scenario", "Offline", "--key=k"}, "key"},
		{[]string{"--scenario", "Offline"}, ""},
		{[]string{"--set", "output-dir"}, ""},
		{[]string{"--", "--server"}, ""},
		{[]string{"--servers"}, ""},
	} {
		if got, _ := ReservedRunFlag(r.args); got != r.want {
			t.Errorf("ReservedRunFlag(%q) = %q, want %q", r.args, got, r.want)
		}
	}
}
