package benchmark

import (
	"slices"
	"strings"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/sut"
	"aimeter/tokenize"
)

// invocation is how the run was asked for, as the bundle records it.
func (r *runner) invocation(st *resolved, o *opened) *invocation.Invocation {
	p := r.plan
	inv := &invocation.Invocation{
		CommandLine: RedactArgs(p.CommandLine),
		SUT:         o.cfg.Redacted(),
		Settings: bundle.SettingsInput{Model: p.Settings.Model, Scenario: p.Settings.Scenario, Mode: p.Settings.Mode,
			Files: st.files, Set: p.Settings.Set},
		Control: bundle.Control{Timeout: p.Timeout, StallTimeout: p.StallTimeout, SpinWindow: p.SpinWindow, MaxMemory: p.MaxMemory, MaxMemorySource: p.MaxMemorySource,
			FindPeakResolution: p.FindPeakResolution, KeepProbeRecords: p.KeepProbeRecords,
			WarmupRequests: p.Warmup.Requests, WarmupDuration: p.Warmup.Duration},
		Client: clientStats(o.sut),
		Warmup: r.warmed,
	}
	if p.GBT != nil {
		in := p.GBT.Input
		inv.GBT = &in
	}
	if r.replay != nil {
		in := r.replay.in
		inv.Replay = &in
	}
	if r.sessions != nil {
		in := r.sessions.in
		inv.Sessions = &in
	}
	if p.SLO != nil && *p.SLO != (bundle.SLO{}) {
		slo := *p.SLO
		inv.SLO = &slo
	}
	if k := o.cfg.KServe; k != nil && k.InputData != "" {
		inv.Settings.Files = append(inv.Settings.Files, bundle.InputFile{Role: "input-data", Path: k.InputData, SHA256: k.InputDataSHA256})
	}
	if o.cfg.OpenAI != nil && o.cfg.OpenAI.Prompts != "" {
		inv.Settings.Files = append(inv.Settings.Files, bundle.InputFile{Role: "prompts", Path: o.cfg.OpenAI.Prompts, SHA256: o.cfg.OpenAI.PromptsSHA256})
	}
	if oc := o.cfg.OpenAI; oc != nil {
		for _, f := range []struct{ role, spec, sum string }{
			{"input-lengths", oc.InputLengths, oc.InputLengthsSHA256},
			{"output-lengths", oc.OutputLengths, oc.OutputLengthsSHA256},
		} {
			if path, ok := tokenize.HistogramFile(f.spec); ok && f.sum != "" {
				inv.Settings.Files = append(inv.Settings.Files, bundle.InputFile{Role: f.role, Path: path, SHA256: f.sum})
			}
		}
	}
	return inv
}

// secretWords mark an option whose value is secret.
var secretWords = []string{"key", "apikey", "token", "secret", "password", "passwd", "auth", "credential", "credentials", "bearer"}

// RedactArgs returns a command line args with the value of every
// secret-looking option (an option named api-key X, token=X, ...) and of
// every secret-looking header (the header option's "Authorization: Bearer
// X") replaced by "REDACTED", and the user information of URLs dropped.
// The names of environment variables that hold secrets (an option whose
// name ends in -env, such as api-key-env) are kept: they are not secret.
// nil gives nil.
func RedactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	secret := func(name string) bool {
		name = strings.ToLower(strings.TrimLeft(name, "-"))
		if strings.HasSuffix(name, "-env") {
			return false
		}
		// A whole word of the name: api-key and auth-token are secret,
		// output-tokens is not.
		for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
			if slices.Contains(secretWords, part) {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		// The header option's "Authorization: Bearer …": the value of a
		// secret-looking header.
		if name, h, ok := strings.Cut(a, "="); ok && isHeaderOption(name) {
			out[i] = name + "=" + sut.RedactHeader(h)
			continue
		}
		if isHeaderOption(a) && i+1 < len(args) {
			out[i], out[i+1] = a, sut.RedactHeader(args[i+1])
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			if name, _, ok := strings.Cut(a, "="); ok && secret(name) {
				out[i] = name + "=REDACTED"
				continue
			}
			if secret(a) && i+1 < len(args) {
				out[i], out[i+1] = a, "REDACTED"
				i++
				continue
			}
		}
		out[i] = a
		if strings.Contains(a, "://") && strings.Contains(a, "@") {
			if name, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
				out[i] = name + "=" + sut.RedactURL(val)
			} else {
				out[i] = sut.RedactURL(a)
			}
		}
	}
	return out
}

// isHeaderOption reports whether arg names the option of an extra HTTP
// header (sut.OpenAIConfig.Headers), "header" after its dashes.
func isHeaderOption(arg string) bool {
	return strings.HasPrefix(arg, "-") && strings.TrimLeft(arg, "-") == "header"
}
