package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"aimeter/bundle"
	"aimeter/dataset"
	"aimeter/dataset/prompts"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
	"aimeter/sut"
	"aimeter/sut/dispatch"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
	"aimeter/sut/null"
	"aimeter/sut/openai"
	"aimeter/tokenize"
)

// Endpoint is one network server as package netsut drives it.
type Endpoint = netsut.Endpoint

// defaultCheckTimeout bounds the check of every server when
// sut.Net.CheckTimeout is 0.
const defaultCheckTimeout = 10 * time.Second

// opened is a system under test built for a run, with what the run needs
// to know of it.
type opened struct {
	cfg *sut.Config
	sut loadgen.SUT
	qsl loadgen.QSL
	// closers run after the run, last first.
	closers []func()
	// labels gives the ground truth of a labelled data set; nil for none.
	labels func(uint64) uint8
	// scoreLog scores an accuracy log whose responses are no class bytes
	// (the ocr-dbnet boxes), over the samples it holds; nil for top-1
	// against labels.
	scoreLog func([]loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error)
	// target is the top-1 fraction an accuracy run must reach (0: none).
	target float64
	// correct scores the classes a SUT predicts as it runs (GB-7.3-f-2);
	// nil where the SUT reports none.
	correct *onlineScorer
	// info is what aimeter knows of the SUT for the GB/T test information.
	info testinfo.Info
	// prompts is the prompt set of an OpenAI run, read or made once.
	prompts *prompts.Set
	// images is the data set sent to KServe servers, loaded once.
	images *dataset.QSL
	// warmups mark the requests of the OpenAI clients as a warm-up's
	// (true) or the measured run's (false): openai.Endpoint.Warmup.
	warmups []func(bool)
}

func (o *opened) close() {
	for i := len(o.closers) - 1; i >= 0; i-- {
		o.closers[i]()
	}
}

// endpointOf is the Endpoint a network SUT sends with; nil for any other
// SUT.
func endpointOf(s loadgen.SUT) Endpoint {
	if ns, ok := s.(interface{ Endpoint() netsut.Endpoint }); ok {
		return ns.Endpoint()
	}
	return nil
}

// nodes names the nodes of a dispatched run (an Endpoint that is
// netsut.Nodes) for its bundle; nil for any other SUT.
func (o *opened) nodes() []bundle.Node {
	disp, ok := endpointOf(o.sut).(netsut.Nodes)
	if !ok {
		return nil
	}
	var nodes []bundle.Node
	for i, name := range disp.NodeNames() {
		n := bundle.Node{Number: i + 1, Name: name}
		if i < len(o.cfg.Net.URLs) {
			n.URL = sut.RedactURL(o.cfg.Net.URLs[i])
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// infoNote says where the SUT's test information comes from and which of
// the fields that can be known were not provided.
func (o *opened) infoNote(info testinfo.Info) string { return infoNote(o.cfg.KindOrNull(), info) }

func infoNote(kind sut.Kind, info testinfo.Info) string {
	var missing []string
	if info.Framework.Name == "" {
		missing = append(missing, "framework")
	}
	if info.ModelName == "" && info.ModelNo == "" {
		missing = append(missing, "model")
	}
	if len(info.Precision) == 0 {
		missing = append(missing, "precision")
	}
	if info.BatchSize == 0 {
		missing = append(missing, "batch size")
	}
	from := "Test information: the " + string(kind) + " SUT computes nothing, so framework, model, precision and batch size come only from the test information file."
	switch kind {
	case sut.Reference:
		from = "Test information: framework, model, precision (FP32), batch size (dynamic, at most 64) and data set come from the reference SUT; the test information file overrides them."
	case sut.ONNX:
		from = "Test information: framework (ONNX Runtime and its version), model, precision (FP32), batch size and data set come from the onnx SUT; the test information file overrides them."
	case sut.OpenAI, sut.KServe, sut.Dispatch:
		from = "Test information: aimeter cannot see inside a " + string(kind) + " server, so framework, model, precision and batch size come only from the test information file."
	}
	if len(missing) == 0 {
		return from
	}
	return from + " Not provided: " + strings.Join(missing, ", ") + "."
}

// open builds the SUT and QSL of the plan and checks them before the run.
func (r *runner) open(st *resolved) (*opened, error) {
	p := r.plan
	if c := p.Custom; c != nil {
		if c.SUT == nil || c.QSL == nil {
			return nil, usage("Custom", "Custom: a Custom SUT needs both SUT and QSL")
		}
		cfg := sut.Config{Kind: sut.Custom, Name: c.SUT.Name()}
		return &opened{cfg: &cfg, sut: c.SUT, qsl: c.QSL, labels: c.Labels, target: c.Target}, nil
	}
	o := &opened{cfg: &p.SUT}
	var err error
	switch k := p.SUT.KindOrNull(); k {
	case sut.Null, sut.NullAsync:
		o.qsl = null.QSL{Total: p.SUT.QSLSizeOrDefault(), Performance: p.SUT.PerformanceSampleCount}
		if k == sut.Null {
			o.sut = null.SUT{}
		} else {
			async := null.NewAsync()
			o.sut, o.closers = async, append(o.closers, async.Close)
		}
	case sut.Reference:
		err = r.openReference(o, p.GBT != nil)
	case sut.OpenAI, sut.KServe:
		err = r.openServer(o, st)
	case sut.Dispatch:
		err = r.openDispatch(o, st)
	case sut.ONNX:
		err = r.openONNX(o)
	default:
		err = usage("SUT.Kind", "SUT.Kind %q: want %s", k, strings.Join(kindNames(), ", "))
	}
	if err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

func kindNames() []string {
	var out []string
	for _, k := range sut.Kinds() {
		out = append(out, string(k))
	}
	return out
}

func (r *runner) checkTimeout() time.Duration {
	if t := r.plan.SUT.Net.CheckTimeout; t > 0 {
		return t
	}
	return defaultCheckTimeout
}

// openServer builds an OpenAI-compatible or KServe v2 client of one server
// and checks the server before the run.
func (r *runner) openServer(o *opened, st *resolved) error {
	c := &r.plan.SUT
	ep, err := r.endpoint(o, st, c.Backend(), c.Net.URLs[0])
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(r.ctx, r.checkTimeout())
	err = ep.Check(cctx)
	cancel()
	if err != nil {
		_ = ep.Close()
		if c.Kind == sut.KServe {
			if _, ok := errors.AsType[*kserve.InputsError](err); ok {
				return &UsageError{Field: "SUT.KServe.InputData", Err: fmt.Errorf("SUT.KServe.InputData: the model's inputs: %w", err)}
			}
			if _, ok := errors.AsType[*kserve.CompressionError](err); ok {
				return &UsageError{Field: "SUT.KServe.Compression", Err: fmt.Errorf("SUT.KServe.Compression: %w", err)}
			}
			return fmt.Errorf("the kserve server is not ready for the run: %w", err)
		}
		return fmt.Errorf("the openai server is not usable: %w", err)
	}
	if c.Kind == sut.OpenAI {
		r.notify(Info, "%s; %d prompts from %s", ep.Name(), o.prompts.Len(), o.prompts.Name())
		o.qsl = o.prompts
	} else if in := ownInputs(ep); in != nil {
		// A model other than the reference model: its own inputs, built
		// from its metadata, and no labels to score.
		r.notify(Info, "%s; %s", ep.Name(), in.Name())
		o.qsl, o.labels, o.target = in, nil, 0
	} else {
		if c.QSLSize != 0 {
			r.notify(Warning, "SUT.QSLSize %d is not used: the model takes the reference data set, of %d samples", c.QSLSize, o.images.TotalSampleCount())
		}
		o.qsl, o.labels = o.images, o.images.Label
	}
	if ke, ok := ep.(*kserve.Endpoint); ok {
		o.qsl = ke.Loading(o.qsl) // compression prepares the samples as they load
	}
	ns := netsut.New(context.Background(), ep, netsut.Options{RequestTimeout: c.Net.RequestTimeout})
	o.sut, o.closers = ns, append(o.closers, func() { _ = ns.Close() })
	return nil
}

// openDispatch builds a dispatcher over one endpoint per URL, checks every
// node (names gathered, nodes down left out or refused) before the run.
func (r *runner) openDispatch(o *opened, st *resolved) error {
	c := &r.plan.SUT
	d := c.Dispatch
	if d == nil {
		d = &sut.DispatchConfig{}
	}
	policyName := d.Policy
	if policyName == "" {
		policyName = "round-robin"
	}
	policy, err := dispatch.ParsePolicy(policyName)
	if err != nil {
		return usage("SUT.Dispatch.Policy", "SUT.Dispatch.Policy: %v", err)
	}
	backend := c.Backend()
	eps := make([]netsut.Endpoint, 0, len(c.Net.URLs))
	closeAll := func() {
		for _, ep := range eps {
			_ = ep.Close()
		}
	}
	for _, u := range c.Net.URLs {
		ep, err := r.endpoint(o, st, backend, u)
		if err != nil {
			closeAll()
			return err
		}
		eps = append(eps, ep)
	}
	disp, err := dispatch.New(eps, dispatch.Options{Policy: policy, AllowDownNodes: d.AllowDownNodes})
	if err != nil {
		closeAll()
		return usage("SUT.Kind", "SUT.Kind dispatch: %v", err)
	}
	cctx, cancel := context.WithTimeout(r.ctx, r.checkTimeout())
	err = disp.Check(cctx)
	cancel()
	if err != nil {
		_ = disp.Close()
		return fmt.Errorf("checking the dispatcher's nodes before the run (%s each, SUT.Net.CheckTimeout): %w", r.checkTimeout(), err)
	}
	for _, s := range disp.Stats() {
		if s.Down {
			r.notify(Warning, "node %d (%s) is down and left out of the run (SUT.Dispatch.AllowDownNodes)", s.Number, sut.RedactURL(c.Net.URLs[s.Number-1]))
		}
	}
	switch {
	case o.prompts != nil:
		o.qsl = o.prompts
	case o.images != nil:
		o.qsl, o.labels = o.images, o.images.Label
	default:
		o.qsl = null.QSL{Total: c.QSLSizeOrDefault(), Performance: c.PerformanceSampleCount}
	}
	ns := netsut.New(r.ctx, disp, netsut.Options{RequestTimeout: c.Net.RequestTimeout})
	o.sut, o.closers = ns, append(o.closers, func() { _ = ns.Close() })
	return nil
}

// BackendNames lists the node protocols of a Dispatch SUT: the built-in
// ones and those of extra, sorted.
func BackendNames(extra map[string]Backend) []string {
	names := []string{string(sut.OpenAI), string(sut.KServe)}
	for k := range extra {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// endpoint builds the client of one server speaking backend at rawURL. It
// does not contact the server.
func (r *runner) endpoint(o *opened, st *resolved, backend, rawURL string) (netsut.Endpoint, error) {
	c := &r.plan.SUT
	var ep netsut.Endpoint
	var err error
	switch backend {
	case string(sut.OpenAI):
		ep, err = r.openaiEndpoint(o, st, rawURL)
	case string(sut.KServe):
		ep, err = r.kserveEndpoint(o, rawURL)
	default:
		mk, ok := r.plan.Backends[backend]
		if !ok {
			return nil, usage("SUT.Dispatch.Backend", "SUT.Dispatch.Backend %q: not available in this build (available: %s)", backend, strings.Join(BackendNames(r.plan.Backends), ", "))
		}
		ep, err = mk(rawURL, c)
		if err != nil {
			err = usage("SUT.Net.URLs", "SUT.Net.URLs %s (SUT.Dispatch.Backend %s): %w", sut.RedactURL(rawURL), backend, err)
		}
	}
	return ep, err
}

// openaiEndpoint builds the client of one OpenAI-compatible server.
func (r *runner) openaiEndpoint(o *opened, st *resolved, rawURL string) (*openai.Endpoint, error) {
	c := &r.plan.SUT
	oc := c.OpenAI
	if oc == nil {
		oc = &sut.OpenAIConfig{}
	}
	if err := needFile("SUT.OpenAI.CACert", oc.CACert); err != nil {
		return nil, err
	}
	set, err := r.prompts(o)
	if err != nil {
		return nil, err
	}
	key := ""
	if oc.APIKeyEnv != "" {
		key = os.Getenv(oc.APIKeyEnv)
	}
	api := oc.API
	if api == "" {
		api = openai.APIChat
	}
	hdr, err := oc.HTTPHeader()
	if err != nil {
		return nil, &UsageError{Field: "SUT.OpenAI.Headers", Err: err}
	}
	tok, err := r.tokenizer()
	if err != nil {
		return nil, err
	}
	exact := st.exactPrompts || r.replay != nil || r.sessions != nil // shared prefixes (a trace's, a session's history) must reach the server as they are
	if oc.SaltSeed != nil && exact {
		return nil, usage("SUT.OpenAI.SaltSeed", "SUT.OpenAI.SaltSeed: this run sends its prompts exactly (an accuracy or audit run, a trace replay or sessions), and a salt would change them; drop SUT.OpenAI.SaltSeed")
	}
	ep, err := openai.New(openai.Options{
		BaseURL: rawURL, Model: oc.ServedModel, API: api, Stream: !oc.NoStream, MaxTokens: oc.OutputTokens, IgnoreEOS: oc.IgnoreEOS,
		APIKey: key, TLS: openai.TLSOptions{CAFile: oc.CACert, InsecureSkipVerify: oc.InsecureSkipVerify},
		MaxConns: c.Net.MaxConns, LimitConns: c.Net.MaxConns > 0,
		Prompts: set, AllowRepeatedPrompts: exact, Salt: oc.SaltSeed,
		Headers: hdr, AllowHeaderOverride: oc.AllowHeaderOverride, ExtraBody: []byte(oc.ExtraBody), Temperature: oc.Temperature,
		HTTPClient: oc.HTTPClient, Tokenizer: tok, History: r.sessionHistory(),
	})
	if err != nil {
		return nil, &UsageError{Field: "SUT.Net.URLs", Err: err}
	}
	o.warmups = append(o.warmups, ep.Warmup)
	return ep, nil
}

// prompts reads or makes the prompt set of an OpenAI run, once, and
// records the prompts file's digest.
func (r *runner) prompts(o *opened) (*prompts.Set, error) {
	if o.prompts != nil {
		return o.prompts, nil
	}
	c := &r.plan.SUT
	if set := r.replayPrompts(); set != nil {
		o.prompts = set
		if c.OpenAI == nil {
			c.OpenAI = &sut.OpenAIConfig{}
		}
		return set, nil
	}
	oc := c.OpenAI
	if oc == nil {
		oc = &sut.OpenAIConfig{}
	}
	var set *prompts.Set
	if oc.Prompts != "" {
		sum, err := pinnedFile("SUT.OpenAI.Prompts", oc.Prompts, oc.PromptsSHA256)
		if err != nil {
			return nil, err
		}
		oc.PromptsSHA256 = sum
		set, err = prompts.ReadJSONL(oc.Prompts)
		if err != nil {
			return nil, &UsageError{Field: "SUT.OpenAI.Prompts", Err: err}
		}
	} else {
		n := c.QSLSizeOrDefault()
		if n > 1<<24 {
			return nil, usage("SUT.QSLSize", "SUT.QSLSize %d: at most %d synthetic prompts", n, 1<<24)
		}
		words := oc.InputTokens
		if words == 0 {
			words = 128
		}
		tok, terr := r.tokenizer()
		if terr != nil {
			return nil, terr
		}
		lengths, err := lengthsField("SUT.OpenAI.InputLengths", oc.InputLengths, &oc.InputLengthsSHA256)
		if err != nil {
			return nil, err
		}
		outputs, err := lengthsField("SUT.OpenAI.OutputLengths", oc.OutputLengths, &oc.OutputLengthsSHA256)
		if err != nil {
			return nil, err
		}
		set, err = prompts.Synthetic(prompts.SyntheticOptions{Count: int(n), InputWords: words, InputLengths: lengths, OutputLengths: outputs, Tokenizer: tok})
		if err != nil {
			return nil, &UsageError{Field: "SUT.OpenAI.InputTokens", Err: err}
		}
	}
	set.SetPerformanceSampleCount(c.PerformanceSampleCount)
	o.prompts = set
	if c.OpenAI == nil {
		c.OpenAI = oc
	}
	return set, nil
}

// lengthsField reads the length distribution the field at path field
// gives (tokenize.ParseLengths; the zero Lengths for ""), first pinning
// the SHA-256 of a "hist:FILE" spec's file in *sum, as the run records it.
func lengthsField(field, spec string, sum *string) (tokenize.Lengths, error) {
	if spec == "" {
		return tokenize.Lengths{}, nil
	}
	if path, ok := tokenize.HistogramFile(spec); ok && path != "" {
		s, err := pinnedFile(field, path, *sum)
		if err != nil {
			return tokenize.Lengths{}, err
		}
		*sum = s
	}
	l, err := tokenize.ParseLengths(spec)
	if err != nil {
		return tokenize.Lengths{}, usage(field, "%s: %w", field, err)
	}
	return l, nil
}

// kserveEndpoint builds the client of one KServe v2 server, which is sent
// the reference data set, or, for a model the reference data set does not
// fit or when the options ask for them, inputs built from the model's
// metadata (its Check decides; openServer then takes them as the QSL).
func (r *runner) kserveEndpoint(o *opened, rawURL string) (*kserve.Endpoint, error) {
	c := &r.plan.SUT
	k := c.KServe
	if k == nil {
		k = &sut.KServeConfig{}
	}
	var token string
	if k.TokenEnv != "" {
		token = os.Getenv(k.TokenEnv)
		if token == "" {
			return nil, usage("SUT.KServe.TokenEnv", "SUT.KServe.TokenEnv %s: the variable is not set or empty", k.TokenEnv)
		}
	}
	if c.Kind == sut.Dispatch && k.OwnInputs() {
		return nil, usage("SUT.Kind", "SUT.Kind dispatch with SUT.Dispatch.Backend kserve sends the reference data set only: SUT.KServe.Shapes, SUT.KServe.BatchSize, SUT.KServe.InputData and SUT.KServe.DataMode need SUT.Kind kserve")
	}
	if k.InputData != "" {
		sum, err := pinnedFile("SUT.KServe.InputData", k.InputData, k.InputDataSHA256)
		if err != nil {
			return nil, err
		}
		k.InputDataSHA256 = sum
		if c.KServe == nil {
			c.KServe = k
		}
	}
	// The reference data set, unless the options ask for the model's own
	// inputs; Check decides from the metadata whether it fits the model.
	var inputs kserve.SampleSource
	inputSize := 0
	if !k.OwnInputs() {
		if o.images == nil {
			qsl, target, err := r.referenceData(true)
			if err != nil {
				return nil, err
			}
			o.images, o.target = qsl, target
		}
		set := o.images.Set()
		inputs, inputSize = o.images, set.Rows*set.Cols
	}
	model := k.Model
	if model == "" {
		model = "fashion-mlp"
	}
	var data *kserve.InputOptions
	if c.Kind == sut.KServe { // a dispatcher's nodes share the reference data set's QSL
		data = &kserve.InputOptions{Shapes: k.Shapes, BatchSize: k.BatchSize, Mode: kserve.DataMode(k.DataMode), Seed: k.Seed,
			File: k.InputData, Samples: c.QSLSize, PerformanceSamples: c.PerformanceSampleCount}
	}
	ep, err := kserve.New(kserve.Options{
		URL: rawURL, GRPC: k.GRPC, Model: model, ModelVersion: k.ModelVersion,
		Inputs: inputs, InputSize: inputSize, Data: data,
		BinaryData: k.BinaryData, Stream: k.Stream, BearerToken: token, StageTimes: k.ServerTiming, MaxConns: c.Net.MaxConns,
		Compression: kserve.Compression(k.Compression),
	})
	if err != nil {
		return nil, &UsageError{Field: "SUT.Net.URLs", Err: err}
	}
	return ep, nil
}

// ownInputs is the sample library an endpoint built from its model's
// metadata (netsut.InputsProvider); nil where it sends the reference data
// set.
func ownInputs(ep Endpoint) loadgen.QSL {
	if p, ok := ep.(netsut.InputsProvider); ok {
		return p.OwnInputs()
	}
	return nil
}

// clientStats are the network client's own counters after a run (an
// Endpoint that is a netsut.StatsReporter); nil for other SUTs, a
// dispatcher, and an endpoint that counted nothing.
func clientStats(s loadgen.SUT) *bundle.ClientStats {
	sr, ok := endpointOf(s).(netsut.StatsReporter)
	if !ok {
		return nil
	}
	st, ok := sr.ClientStats()
	if !ok {
		return nil
	}
	l := st.SendLateness
	return &bundle.ClientStats{Requests: st.Requests, Errors: st.Errors, TokenMismatches: st.TokenMismatches,
		MissingUsage: st.MissingUsage, TokenTimesDropped: st.TokenTimesDropped,
		SendLatenessCount: l.Count, SendLatenessP50: l.P50, SendLatenessP99: l.P99, SendLatenessMax: l.Max}
}

// onlineScorer keeps the class the SUT predicted for each QSL index, so
// that a run over a labelled data set is scored as it returns
// (GB-7.3-f-2). Its zero value is ready; it is safe for concurrent use.
type onlineScorer struct {
	mu sync.Mutex
	// class holds the predicted class + 1 by QSL index; 0 is unscored.
	class []uint16
}

// classified records the class predicted for sample index (the
// reference.Options.OnClassified hook).
func (s *onlineScorer) classified(index uint64, class uint8) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if index >= uint64(len(s.class)) {
		s.class = append(s.class, make([]uint16, index+1-uint64(len(s.class)))...)
	}
	s.class[index] = uint16(class) + 1
}

// score returns the gbt.Test.Correct string of total samples: '1' where
// the predicted class is label(i), '0' where it is not, '-' where nothing
// was predicted. It returns "" when no sample was classified or there are
// no labels.
func (s *onlineScorer) score(total uint64, label func(uint64) uint8) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.class) == 0 || label == nil {
		return ""
	}
	b := make([]byte, total)
	for i := range b {
		switch {
		case i >= len(s.class) || s.class[i] == 0:
			b[i] = '-'
		case s.class[i]-1 == uint16(label(uint64(i))):
			b[i] = '1'
		default:
			b[i] = '0'
		}
	}
	return string(b)
}

// System is a system under test built from a sut.Config, for programs that
// drive loadgen themselves (the video-stream search builds one per probe).
type System struct {
	SUT loadgen.SUT
	QSL loadgen.QSL
	o   *opened
}

// Close releases the system's connections and workers.
func (s *System) Close() { s.o.close() }

// Open builds the system under test of cfg and checks it as Run does
// before a run; notify, if set, receives its notices.
func Open(ctx context.Context, cfg sut.Config, notify func(Notice)) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, sutUsage(err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	r := &runner{plan: &Plan{SUT: cfg, Notify: notify}, ctx: ctx}
	o, err := r.open(&resolved{})
	if err != nil {
		return nil, err
	}
	return &System{SUT: o.sut, QSL: o.qsl, o: o}, nil
}
