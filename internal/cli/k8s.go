package cli

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/k8sjob"
)

func newK8sCommand(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Write the Kubernetes manifests that run one test on many nodes",
		Long:  helpText("k8s"),
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newK8sJobCommand(st))
	return cmd
}

// k8sJobFlags are the flags of aimeter k8s job that are not fields of
// k8sjob.Options as they are.
type k8sJobFlags struct {
	startAt      string
	lead         time.Duration
	nodeSelector []string
	output       string
}

// k8sFieldFlags names the flag of each k8sjob.Options field.
var k8sFieldFlags = map[string]string{
	"Name": "--name", "Namespace": "--namespace", "Image": "--image", "Command": "--command",
	"Shards": "--shards", "StartAt": "--start-at", "CPU": "--cpu", "Memory": "--memory",
	"CPULimit": "--cpu-limit", "MemoryLimit": "--memory-limit", "PVC": "--pvc", "Server": "--server",
	"TokenSecret": "--token-secret", "SecretHasCA": "--ca-in-secret", "NodeSelector": "--node-selector",
	"ImagePullSecret": "--image-pull-secret", "EnvSecret": "--env-secret", "Deadline": "--deadline", "RunArgs": "the arguments after --",
}

var k8sFieldWord = regexp.MustCompile(`\b(Name|Namespace|Image|Command|Shards|StartAt|CPU|Memory|CPULimit|MemoryLimit|PVC|Server|TokenSecret|SecretHasCA|NodeSelector|ImagePullSecret|EnvSecret|Deadline|RunArgs)\b`)

// k8sFlagText names the k8sjob.Options fields in s by their flags; StartAt
// by --lead when the start was computed from it.
func k8sFlagText(s string, fromLead bool) string {
	return k8sFieldWord.ReplaceAllStringFunc(s, func(w string) string {
		if w == "StartAt" && fromLead {
			return "--lead"
		}
		return k8sFieldFlags[w]
	})
}

func newK8sJobCommand(st *State) *cobra.Command {
	var o k8sjob.Options
	var f k8sJobFlags
	cmd := &cobra.Command{
		Use:   "job --name NAME --image IMAGE --shards N (--pvc CLAIM | --server URL --token-secret SECRET) [flags] [-- RUN-FLAGS…]",
		Short: "Write an Indexed Job that runs one aimeter test as N shards on N nodes",
		Long:  helpText("k8s_job"),
		Example: `  aimeter k8s job --name bench-8 --image registry.example/aimeter:0.1.0 --shards 8 --pvc aimeter-results -- --sut openai --url http://vllm:8000 --scenario Server --set target_qps=800
  aimeter k8s job --name bench-4 --image registry.example/aimeter:0.1.0 --shards 4 --lead 5m --server https://tester.example:8443 --token-secret aimeter-upload --ca-in-secret -- --scenario Offline`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); (dash < 0 && len(args) > 0) || dash > 0 {
				return usageError("%q: aimeter k8s job takes no arguments; the flags of aimeter run go after --", args[0])
			}
			o.RunArgs = args
			if err := checkRunArgs(args); err != nil {
				return err
			}
			now := time.Now()
			o.Now = now
			fromLead := !cmd.Flags().Changed("start-at")
			if fromLead {
				switch {
				case f.lead < time.Second:
					return usageError("--lead %v: at least 1s (the time to apply the Job, schedule the pods and pull the image)", f.lead)
				case f.lead > k8sjob.MaxLead:
					return usageError("--lead %v: more than %v (the nodes would be held idle until the start)", f.lead, k8sjob.MaxLead)
				}
				// Whole seconds: at most a second before now + lead.
				o.StartAt = now.Add(f.lead).Truncate(time.Second)
			} else {
				t, err := time.Parse(time.RFC3339, f.startAt)
				if err != nil {
					return usageError("--start-at %s: not an RFC 3339 time (2026-11-29T12:00:00Z)", f.startAt)
				}
				o.StartAt = t
			}
			sel, err := parseNodeSelector(f.nodeSelector)
			if err != nil {
				return err
			}
			o.NodeSelector = sel
			job, err := k8sjob.Build(o)
			if err != nil {
				var oe *k8sjob.OptionError
				if errors.As(err, &oe) {
					return usageError("%s", k8sFlagText(err.Error(), fromLead))
				}
				return withCode(ExitFailure, err)
			}
			header := fmt.Sprintf("Written by aimeter %s:\n  aimeter %s\nThe %d shards start at %s; apply it before then.",
				Version, shellQuote(st.Args), o.Shards, o.StartAt.UTC().Format(time.RFC3339))
			y, err := k8sjob.Marshal(job, header)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if f.output == "" || f.output == "-" {
				_, err := st.Stdout.Write(y)
				return err
			}
			if err := os.WriteFile(f.output, y, 0o644); err != nil {
				return withCode(ExitFailure, fmt.Errorf("--output: %w", err))
			}
			fmt.Fprintf(st.Stderr, "wrote %s: Job %s, %d shards starting at %s (in %v); kubectl apply -f %s\n",
				f.output, o.Name, o.Shards, o.StartAt.UTC().Format(time.RFC3339), o.StartAt.Sub(now).Round(time.Second), f.output)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Name, "name", "", "the Job's name, a DNS-1123 label (lower-case letters, digits, '-'); also the label that keeps the shards on different nodes and the test's folder on --pvc")
	fl.StringVarP(&o.Namespace, "namespace", "n", "", "the Job's namespace (default: none written, kubectl's current namespace)")
	fl.StringVar(&o.Image, "image", "", "the container image holding aimeter, with a version tag or a digest (not :latest: every node must run the same aimeter)")
	fl.StringVar(&o.Command, "command", "aimeter", "the aimeter executable in the image (a path, or a name on the image's PATH)")
	fl.IntVar(&o.Shards, "shards", 0, fmt.Sprintf("N, the number of shards: one pod each, on N different nodes (1 to %d)", k8sjob.MaxShards))
	fl.StringVar(&f.startAt, "start-at", "", "the shards' common start, RFC 3339 in whole seconds (2026-11-29T12:00:00Z); default: now + --lead")
	fl.DurationVar(&f.lead, "lead", 2*time.Minute, "the start is this long after now (to the whole second below): time to apply the Job, schedule the pods and pull the image")
	cmd.MarkFlagsMutuallyExclusive("start-at", "lead")
	fl.StringVar(&o.CPU, "cpu", k8sjob.DefaultCPU, "CPU request of each shard (a Kubernetes quantity: 4, 500m)")
	fl.StringVar(&o.Memory, "memory", k8sjob.DefaultMemory, "memory request of each shard (a Kubernetes quantity: 8Gi)")
	fl.StringVar(&o.CPULimit, "cpu-limit", "", "CPU limit of each shard; default: the request (the Guaranteed QoS class); none: no limit")
	fl.StringVar(&o.MemoryLimit, "memory-limit", "", "memory limit of each shard; default: the request; none: no limit")
	fl.StringVar(&o.PVC, "pvc", "", "a ReadWriteMany PersistentVolumeClaim for the bundles: shard I writes NAME/shard-I on it")
	fl.StringVar(&o.Server, "server", "", "the tester's service (https://HOST:PORT) that each shard uploads its bundle to (with --token-secret)")
	fl.StringVar(&o.TokenSecret, "token-secret", "", `the Secret holding the test item's client token (key "token") and signing key (key "client.key") for --server`)
	fl.BoolVar(&o.SecretHasCA, "ca-in-secret", false, `the --token-secret Secret also holds the service's certificate to trust (key "ca.pem")`)
	fl.StringArrayVar(&f.nodeSelector, "node-selector", nil, "KEY=VALUE: run the shards only on nodes with this label (repeatable)")
	fl.StringVar(&o.EnvSecret, "env-secret", "", "a Secret whose keys become the shards' environment variables (OPENAI_API_KEY for aimeter run's --api-key-env)")
	fl.StringVar(&o.ImagePullSecret, "image-pull-secret", "", "a Secret for pulling --image from a private registry")
	fl.DurationVar(&o.Deadline, "deadline", 0, "end the Job after this long from its creation, whole seconds (activeDeadlineSeconds; 0 = no deadline)")
	fl.StringVarP(&f.output, "output", "o", "", "write the manifest to this file (default: standard output)")
	return cmd
}

// checkRunArgs refuses arguments for aimeter run that the Job sets itself
// or that aimeter run would refuse as flags (an unknown flag, a value of
// the wrong type, an argument that is not a flag), before any pod starts.
func checkRunArgs(args []string) error {
	if name, why := k8sjob.ReservedRunFlag(args); name != "" {
		return usageError("--%s after --: %s", name, k8sFlagText(why, false))
	}
	run := newRunCommand(&State{})
	fs := run.Flags()
	fs.SetOutput(discard{})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return usageError("--help after --: the shards would print aimeter run's help and exit")
		}
		return usageError("the arguments after -- are aimeter run's flags: %v", err)
	}
	if rest := fs.Args(); len(rest) > 0 {
		return usageError("%q after --: aimeter run takes flags only", rest[0])
	}
	return nil
}

// discard is an io.Writer that drops what it is given (pflag's usage
// text on a parse error).
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// parseNodeSelector parses --node-selector KEY=VALUE flags.
func parseNodeSelector(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError("--node-selector %s: want KEY=VALUE", kv)
		}
		if old, dup := m[k]; dup && old != v {
			return nil, usageError("--node-selector %s: %s is already %s", kv, k, old)
		}
		m[k] = v
	}
	return m, nil
}

// shellQuote joins args as a shell command line, quoting the words that
// need it.
func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
