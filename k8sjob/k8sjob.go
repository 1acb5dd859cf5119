// Package k8sjob writes the Kubernetes Job that runs one aimeter test as N
// shards on N nodes: an Indexed Job (completionMode Indexed, parallelism =
// completions = N) whose pod of index I runs
//
//	aimeter run --shards N --start-at T --output-dir /results/shard-I …
//
// with I taken from JOB_COMPLETION_INDEX, which the pod gets from the
// downward API (the batch.kubernetes.io/job-completion-index annotation
// that the Job controller sets). Kubernetes itself schedules, starts and
// watches the shards; aimeter adds no controller of its own.
//
// The Job is built so that a test is either whole or visibly failed:
// backoffLimit 0 and restartPolicy Never (a failed shard is not retried,
// which would start it after the common start time T, on a shifted
// schedule), a required pod anti-affinity on kubernetes.io/hostname by a
// label unique to the test (no two shards on one node, so that the shards
// are N load generators and not one node's N processes), and resource
// requests and limits equal by default (the Guaranteed QoS class, whose
// pods the kubelet evicts last and the static CPU manager gives whole
// cores).
//
// The shards write their bundles to a volume mounted at /results: a
// PersistentVolumeClaim (Options.PVC; it must be ReadWriteMany to be
// mounted on N nodes at once), under a folder named after the test, or
// an emptyDir when each shard uploads its bundle to the tester's service
// itself (Options.Server and Options.TokenSecret).
//
// Build returns the Job as Kubernetes API types (k8s.io/api batch/v1);
// Marshal writes it as the YAML that kubectl apply -f reads.
package k8sjob

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxShards is the most shards one Job may have. Each shard needs a node
// of its own (the anti-affinity is required), and clusters of more than
// a thousand load-generator nodes are not what this is for; the Indexed
// Job API itself allows 100,000.
const MaxShards = 1000

// MaxLead is how far after Options.Now the start time may be: a Job whose
// pods would wait longer than this holds N nodes idle, and a start a day
// away is more likely a mistyped date than a plan.
const MaxLead = 24 * time.Hour

// Paths and names inside the pods.
const (
	// ResultsDir is where the results volume is mounted; shard I writes
	// its bundle to ResultsDir/shard-I.
	ResultsDir = "/results"
	// UploadDir is where the Secret of Options.TokenSecret is mounted.
	UploadDir = "/var/run/aimeter/upload"
	// IndexEnv is the environment variable that holds the shard's index
	// (the name the Job controller gives it, declared in the manifest
	// from the downward API, so that $(JOB_COMPLETION_INDEX) in the
	// arguments is expanded by the kubelet).
	IndexEnv = "JOB_COMPLETION_INDEX"
	// IndexAnnotation is the pod annotation that holds the index.
	IndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// TokenEnv is the environment variable that holds the client token
	// (from the Secret's key SecretTokenKey) when the shards upload.
	TokenEnv = "AIMETER_TOKEN"
	// TestLabel is the label whose value, the Job's name, marks the Job
	// and its pods; the anti-affinity selects the pods by it.
	TestLabel = "aimeter/test"
	// ContainerName is the name of the pods' one container.
	ContainerName = "aimeter"
)

// The keys of the Secret named by Options.TokenSecret.
const (
	// SecretTokenKey holds the test item's client token ('aimeter server
	// register' prints it).
	SecretTokenKey = "token"
	// SecretKeyKey holds the Ed25519 private key (PEM) that signs the
	// bundles, registered with the test item.
	SecretKeyKey = "client.key"
	// SecretCAKey holds the service's certificate to trust (PEM), used
	// when Options.SecretHasCA is set.
	SecretCAKey = "ca.pem"
)

// Default resources of a shard's container: requests, and limits equal
// to them.
const (
	DefaultCPU    = "4"
	DefaultMemory = "8Gi"
)

// Options describe the Job. Name, Image, Shards and StartAt are required;
// so is a place for the bundles (PVC, or Server with TokenSecret, or both).
type Options struct {
	// Name is the Job's name: a DNS-1123 label (lower-case letters,
	// digits and '-'), short enough that the pods' host names NAME-INDEX
	// stay labels of at most 63 characters. It also names the test's
	// folder on the PVC and is the value of the TestLabel label.
	Name string
	// Namespace of the Job; "" leaves it out (kubectl apply's current
	// namespace).
	Namespace string
	// Image is the container image that holds aimeter: it must name a
	// tag other than "latest", or a digest, so that every node runs the
	// same aimeter (the merge refuses shards of different versions).
	Image string
	// Command is the executable in the image that is run; "" means
	// "aimeter" (looked up on the image's PATH).
	Command string
	// Shards is N, the number of shards (1 to MaxShards).
	Shards int
	// StartAt is the common wall-clock start of all shards; it must lie
	// after Now and at most MaxLead after it. It is written in UTC, to
	// the second (a fraction is refused).
	StartAt time.Time
	// Now is the time StartAt is checked against; the zero time means
	// time.Now().
	Now time.Time
	// RunArgs are the arguments of 'aimeter run' that describe the test
	// (the SUT, scenario, settings); the Job adds --shards, --start-at
	// and --output-dir (and --server, --token, --key, --ca when the
	// shards upload; --no-store unless RunArgs name --store or
	// --no-store), so RunArgs must not hold those. nil runs aimeter
	// run's defaults.
	RunArgs []string
	// CPU and Memory are the container's resource requests (Kubernetes
	// quantities: "4", "500m", "8Gi"); "" means DefaultCPU and
	// DefaultMemory.
	CPU, Memory string
	// CPULimit and MemoryLimit are the container's limits: "" means the
	// request (the Guaranteed QoS class), "none" no limit.
	CPULimit, MemoryLimit string
	// PVC is the PersistentVolumeClaim that holds the bundles, mounted at
	// ResultsDir with the sub-path Name; "" uses an emptyDir, which needs
	// Server (the bundles are uploaded, then lost with the pods).
	PVC string
	// Server is the URL of the tester's service (https://HOST:PORT) that
	// each shard uploads its bundle to; "" uploads nothing.
	Server string
	// TokenSecret names the Secret that holds SecretTokenKey and
	// SecretKeyKey (and SecretCAKey with SecretHasCA); required with
	// Server, refused without it.
	TokenSecret string
	// SecretHasCA says the Secret also holds SecretCAKey, the service's
	// certificate to trust (a self-signed tls/cert.pem); false trusts the
	// image's system roots.
	SecretHasCA bool
	// NodeSelector restricts the shards to nodes with these labels (a
	// pool of load-generator nodes); nil places them on any node.
	NodeSelector map[string]string
	// EnvSecret names a Secret whose keys become environment variables
	// of the shards (OPENAI_API_KEY, read by aimeter run's --api-key-env),
	// so that no secret is written into the manifest; "" uses none.
	EnvSecret string
	// ImagePullSecret names a Secret for pulling Image; "" uses none.
	ImagePullSecret string
	// Deadline is the Job's activeDeadlineSeconds, counted from the
	// Job's start (so it includes the wait until StartAt): Kubernetes
	// ends a Job that runs longer; 0 sets none. It is whole seconds.
	Deadline time.Duration
}

// OptionError is a refused option: Field names the Options field, Value
// is what was given (empty when it is missing).
type OptionError struct {
	Field string
	Value string
	Err   error
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Err.Error()
	}
	return e.Field + " " + e.Value + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

func optErr(field, value, format string, args ...any) error {
	return &OptionError{Field: field, Value: value, Err: fmt.Errorf(format, args...)}
}

// reservedRunFlags are the flags of 'aimeter run' that the Job sets
// itself, with why; RunArgs may not hold them.
var reservedRunFlags = map[string]string{
	"shards":     "the Job sets it from Shards",
	"shard":      "the Job gives each pod its index through " + IndexEnv,
	"start-at":   "the Job sets it from StartAt",
	"output-dir": "the Job sets it to " + ResultsDir + "/shard-INDEX",
	"server":     "the Job sets it from Server",
	"config":     "the Job uploads with Server and TokenSecret",
	"token":      "a token in a manifest is a leaked secret; the Job reads it from TokenSecret",
	"key":        "the Job reads the signing key from TokenSecret",
	"ca":         "the Job reads the certificate from TokenSecret (SecretHasCA)",
	"from":       "a pod holds no bundle to repeat",
}

// ReservedRunFlag returns the flag of 'aimeter run' in args that the Job
// sets itself ("--output-dir" as "output-dir") and why, or "" when args
// hold none. A "--" ends the flags.
func ReservedRunFlag(args []string) (flag, why string) {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if why, ok := reservedRunFlags[name]; ok {
			return name, why
		}
	}
	return "", ""
}

// The parts of an image reference, host:port/repo:tag@sha256:…: a tag,
// a digest, and the repository (the host lower-cased before it is
// matched).
var (
	imageTag    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigest = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[A-Fa-f0-9]{32,}$`)
	imageRepo   = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
)

// checkImage refuses an image without a tag or digest, or with the tag
// "latest": the shards on N nodes must run one aimeter.
func checkImage(image string) error {
	if image == "" {
		return optErr("Image", "", "required: the image that holds aimeter, with a tag or digest (registry.example/aimeter:1.0)")
	}
	rest, digest, hasDigest := strings.Cut(image, "@")
	if hasDigest && !imageDigest.MatchString(digest) {
		return optErr("Image", image, "%q is not a digest (sha256:<64 hex digits>)", digest)
	}
	repo, tag := rest, ""
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		repo, tag = rest[:i], rest[i+1:]
	}
	// A registry's host may be upper-case; the path may not.
	host, path, hasHost := strings.Cut(repo, "/")
	check := repo
	if hasHost {
		check = strings.ToLower(host) + "/" + path
	}
	if !imageRepo.MatchString(check) {
		return optErr("Image", image, "%q is not an image repository (lower-case path components)", repo)
	}
	switch {
	case tag != "" && !imageTag.MatchString(tag):
		return optErr("Image", image, "%q is not an image tag", tag)
	case tag == "" && !hasDigest:
		return optErr("Image", image, "no tag or digest: every node would pull whatever \"latest\" is when its shard starts; name a version (%s:1.0) or a digest (@sha256:…)", repo)
	case tag == "latest" && !hasDigest:
		return optErr("Image", image, "the tag \"latest\" may name different images on different nodes; name a version or a digest")
	}
	return nil
}

// quantity parses a resource quantity of field; "none" is allowed only for
// limits.
func quantity(field, s string) (*resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return nil, optErr(field, s, "not a Kubernetes quantity (e.g. 4, 500m, 8Gi)")
	}
	if q.Sign() <= 0 {
		return nil, optErr(field, s, "must be more than 0")
	}
	return &q, nil
}

// resources returns the container's requests and limits.
func (o *Options) resources() (corev1.ResourceRequirements, error) {
	var r corev1.ResourceRequirements
	type res struct {
		name                      corev1.ResourceName
		req, lim                  string
		reqField, limField, deflt string
	}
	for _, x := range []res{
		{corev1.ResourceCPU, o.CPU, o.CPULimit, "CPU", "CPULimit", DefaultCPU},
		{corev1.ResourceMemory, o.Memory, o.MemoryLimit, "Memory", "MemoryLimit", DefaultMemory},
	} {
		if x.req == "" {
			x.req = x.deflt
		}
		req, err := quantity(x.reqField, x.req)
		if err != nil {
			return r, err
		}
		if r.Requests == nil {
			r.Requests, r.Limits = corev1.ResourceList{}, corev1.ResourceList{}
		}
		r.Requests[x.name] = *req
		switch x.lim {
		case "none":
			continue
		case "":
			r.Limits[x.name] = *req
			continue
		}
		lim, err := quantity(x.limField, x.lim)
		if err != nil {
			return r, err
		}
		if lim.Cmp(*req) < 0 {
			return r, optErr(x.limField, x.lim, "less than the request %s (%s)", x.reqField, req)
		}
		r.Limits[x.name] = *lim
	}
	if len(r.Limits) == 0 {
		r.Limits = nil
	}
	return r, nil
}

// dnsLabel refuses a value that is not a DNS-1123 label.
func dnsLabel(field, v string) error {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return optErr(field, v, "not a DNS-1123 label: %s", strings.Join(errs, "; "))
	}
	return nil
}

// dnsSubdomain refuses a value that is not a DNS-1123 subdomain (the
// names of Secrets and PersistentVolumeClaims).
func dnsSubdomain(field, v string) error {
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return optErr(field, v, "not a Kubernetes object name: %s", strings.Join(errs, "; "))
	}
	return nil
}

// check refuses options that cannot make a Job that runs one test.
func (o *Options) check(now time.Time) error {
	if o.Name == "" {
		return optErr("Name", "", "required: the Job's name, a DNS-1123 label such as bench-8")
	}
	if err := dnsLabel("Name", o.Name); err != nil {
		return err
	}
	if o.Namespace != "" {
		if err := dnsLabel("Namespace", o.Namespace); err != nil {
			return err
		}
	}
	switch {
	case o.Shards < 1:
		return optErr("Shards", strconv.Itoa(o.Shards), "at least 1 shard")
	case o.Shards > MaxShards:
		return optErr("Shards", strconv.Itoa(o.Shards), "at most %d shards (each needs a node of its own)", MaxShards)
	}
	if host := o.Name + "-" + strconv.Itoa(o.Shards-1); len(host) > validation.DNS1123LabelMaxLength {
		return optErr("Name", o.Name, "too long for %d shards: the pods' host names (%s) must be at most %d characters", o.Shards, host, validation.DNS1123LabelMaxLength)
	}
	if err := checkImage(o.Image); err != nil {
		return err
	}
	if o.Command != "" && strings.TrimSpace(o.Command) != o.Command {
		return optErr("Command", o.Command, "blanks around the executable's name")
	}
	switch {
	case o.StartAt.IsZero():
		return optErr("StartAt", "", "required: the shards' common start")
	case o.StartAt.Nanosecond() != 0:
		return optErr("StartAt", o.StartAt.Format(time.RFC3339Nano), "give whole seconds")
	case !o.StartAt.After(now):
		return optErr("StartAt", o.StartAt.Format(time.RFC3339), "in the past (now is %s): the shards could not start together", now.UTC().Format(time.RFC3339))
	case o.StartAt.Sub(now) > MaxLead:
		return optErr("StartAt", o.StartAt.Format(time.RFC3339), "%v after now, more than %v", o.StartAt.Sub(now).Round(time.Second), MaxLead)
	}
	if f, why := ReservedRunFlag(o.RunArgs); f != "" {
		return optErr("RunArgs", "--"+f, "%s", why)
	}
	if o.PVC == "" && o.Server == "" {
		return optErr("PVC", "", "the bundles need a place: a PersistentVolumeClaim (PVC), or the tester's service (Server with TokenSecret)")
	}
	if o.PVC != "" {
		if err := dnsSubdomain("PVC", o.PVC); err != nil {
			return err
		}
	}
	switch {
	case o.Server != "" && o.TokenSecret == "":
		return optErr("TokenSecret", "", "required with Server: the Secret holding the client token (%q) and signing key (%q)", SecretTokenKey, SecretKeyKey)
	case o.Server == "" && o.TokenSecret != "":
		return optErr("TokenSecret", o.TokenSecret, "without Server nothing uploads")
	case o.Server == "" && o.SecretHasCA:
		return optErr("SecretHasCA", "true", "without Server nothing uploads")
	case o.Server != "" && !strings.HasPrefix(o.Server, "https://") && !strings.HasPrefix(o.Server, "http://"):
		return optErr("Server", o.Server, "not a URL (https://HOST:PORT)")
	}
	if o.TokenSecret != "" {
		if err := dnsSubdomain("TokenSecret", o.TokenSecret); err != nil {
			return err
		}
	}
	for field, v := range map[string]string{"ImagePullSecret": o.ImagePullSecret, "EnvSecret": o.EnvSecret} {
		if v != "" {
			if err := dnsSubdomain(field, v); err != nil {
				return err
			}
		}
	}
	for k, v := range o.NodeSelector {
		if errs := content.IsLabelKey(k); len(errs) > 0 {
			return optErr("NodeSelector", k+"="+v, "not a label key: %s", strings.Join(errs, "; "))
		}
		if errs := content.IsLabelValue(v); len(errs) > 0 {
			return optErr("NodeSelector", k+"="+v, "not a label value: %s", strings.Join(errs, "; "))
		}
	}
	if o.Deadline < 0 || o.Deadline%time.Second != 0 {
		return optErr("Deadline", o.Deadline.String(), "whole seconds, 0 or more")
	}
	if o.Deadline > 0 && o.Deadline <= o.StartAt.Sub(now) {
		return optErr("Deadline", o.Deadline.String(), "ends before the start (%v from now)", o.StartAt.Sub(now).Round(time.Second))
	}
	return nil
}

// Args returns the arguments of 'aimeter run' in shard pods: "run", the
// flags the Job sets, then RunArgs. The output directory holds
// $(JOB_COMPLETION_INDEX), which the kubelet expands.
func (o *Options) Args() []string {
	args := []string{"run",
		"--shards", strconv.Itoa(o.Shards),
		"--start-at", o.StartAt.UTC().Format(time.RFC3339),
		"--output-dir", ResultsDir + "/shard-$(" + IndexEnv + ")",
	}
	if o.Server != "" {
		args = append(args, "--server", o.Server, "--token", "$("+TokenEnv+")", "--key", UploadDir+"/"+SecretKeyKey)
		if o.SecretHasCA {
			args = append(args, "--ca", UploadDir+"/"+SecretCAKey)
		}
	}
	if !slices.ContainsFunc(o.RunArgs, func(a string) bool {
		return a == "--store" || strings.HasPrefix(a, "--store=") || a == "--no-store" || strings.HasPrefix(a, "--no-store=")
	}) {
		// A shard's pod has no results store worth recording into; the
		// merged bundle is what is recorded.
		args = append(args, "--no-store")
	}
	return append(args, o.RunArgs...)
}

// Build checks o and returns the Job.
func Build(o Options) (*batchv1.Job, error) {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	if err := o.check(now); err != nil {
		return nil, err
	}
	res, err := o.resources()
	if err != nil {
		return nil, err
	}
	n := int32(o.Shards)
	labels := map[string]string{TestLabel: o.Name, "app.kubernetes.io/name": "aimeter"}
	command := o.Command
	if command == "" {
		command = "aimeter"
	}
	env := []corev1.EnvVar{{
		Name: IndexEnv,
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['" + IndexAnnotation + "']",
		}},
	}}
	resultsVolume := corev1.Volume{Name: "results"}
	mount := corev1.VolumeMount{Name: "results", MountPath: ResultsDir}
	if o.PVC != "" {
		resultsVolume.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.PVC}
		mount.SubPath = o.Name
	} else {
		resultsVolume.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	volumes := []corev1.Volume{resultsVolume}
	mounts := []corev1.VolumeMount{mount}
	if o.Server != "" {
		env = append(env, corev1.EnvVar{
			Name: TokenEnv,
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: o.TokenSecret},
				Key:                  SecretTokenKey,
			}},
		})
		items := []corev1.KeyToPath{{Key: SecretKeyKey, Path: SecretKeyKey}}
		if o.SecretHasCA {
			items = append(items, corev1.KeyToPath{Key: SecretCAKey, Path: SecretCAKey})
		}
		// The default mode (0644): the image's user, root or not, reads
		// the key; the Secret's tmpfs is the pod's own.
		volumes = append(volumes, corev1.Volume{Name: "upload", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: o.TokenSecret, Items: items},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: "upload", MountPath: UploadDir, ReadOnly: true})
	}
	var envFrom []corev1.EnvFromSource
	if o.EnvSecret != "" {
		envFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.EnvSecret},
		}}}
	}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{TestLabel: o.Name}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}},
		NodeSelector: o.NodeSelector,
		Containers: []corev1.Container{{
			Name:            ContainerName,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{command},
			Args:            o.Args(),
			Env:             env,
			EnvFrom:         envFrom,
			Resources:       res,
			VolumeMounts:    mounts,
		}},
		Volumes: volumes,
	}
	if o.ImagePullSecret != "" {
		pod.ImagePullSecrets = []corev1.LocalObjectReference{{Name: o.ImagePullSecret}}
	}
	indexed := batchv1.IndexedCompletion
	zero := int32(0)
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      o.Name,
			Namespace: o.Namespace,
			Labels:    maps.Clone(labels),
			Annotations: map[string]string{
				"aimeter/start-at": o.StartAt.UTC().Format(time.RFC3339),
				"aimeter/shards":   strconv.Itoa(o.Shards),
			},
		},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod,
			},
		},
	}
	if o.Deadline > 0 {
		s := int64(o.Deadline / time.Second)
		job.Spec.ActiveDeadlineSeconds = &s
	}
	return job, nil
}
