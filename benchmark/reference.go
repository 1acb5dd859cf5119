package benchmark

import (
	"strings"

	"aimeter/dataset"
	"aimeter/gbt/testinfo"
	"aimeter/sut"
	"aimeter/sut/reference/mlp"
)

// referenceData loads the reference data set of the plan (Fashion-MNIST
// when installed, else the synthetic set) as a QSL, with its quality
// target; forServer notes which set is sent when it is not Fashion-MNIST
// (a KServe server's model must have been trained on it).
func (r *runner) referenceData(forServer bool) (*dataset.QSL, float64, error) {
	cfg := r.plan.SUT.Reference
	if cfg == nil {
		cfg = &sut.ReferenceConfig{}
	}
	data, err := r.loadData(cfg)
	if err != nil {
		return nil, 0, err
	}
	if forServer && !strings.Contains(strings.ToLower(data.Test.Name), "fashion") {
		r.notify(Note, "sending the %s data set; the server's model must have been trained on it", data.Test.Name)
	}
	return dataset.NewQSL(data.Test, mlp.QSLPerformanceSamples), data.Target, nil
}

// openReference builds the reference SUT: the model (trained or loaded
// from the cache) serving the reference data set in process. In a GB/T
// test it scores each answer as it returns (GB-7.3-f-2).
func (r *runner) openReference(o *opened, gbtTest bool) error {
	cfg := r.plan.SUT.Reference
	if cfg == nil {
		cfg = &sut.ReferenceConfig{}
	}
	data, err := r.loadData(cfg)
	if err != nil {
		return err
	}
	m, how, err := mlp.ObtainModel(r.ctx, data.Train, mlp.ModelOptions{Weights: cfg.Weights})
	if err != nil {
		return err
	}
	if how.SaveErr != nil {
		r.notify(Warning, "could not cache the weights: %v", how.SaveErr)
	}
	r.notify(Info, "reference SUT: MLP %v %s", m.Layers(), how)
	qsl := dataset.NewQSL(data.Test, mlp.QSLPerformanceSamples)
	opts := mlp.ServeOptions{}
	if gbtTest {
		o.correct = &onlineScorer{}
		opts.OnClassified = o.correct.classified
	}
	s, err := mlp.Serve(m, qsl, opts)
	if err != nil {
		return err
	}
	o.sut, o.qsl, o.closers = s, qsl, append(o.closers, s.Close)
	o.labels, o.target = qsl.Label, data.Target
	o.info = referenceInfo(qsl.Name(), r.version())
	return nil
}

// referenceInfo is the test information (GB-7.1-a) aimeter knows of the
// reference SUT: the framework and its version, the model, the precision
// it computes in (FP32, GB-7.3-c), its dynamic batching up to
// mlp.MaxBatch samples (GB-7.2-e) and the data set (fixed; its name, under
// extra.dataset). The test information file (GBT.InfoFile) overrides any
// of these field by field.
func referenceInfo(dataset, version string) testinfo.Info {
	return testinfo.Info{
		ModelName:     mlp.ModelName,
		DatasetType:   testinfo.DatasetFixed,
		Framework:     testinfo.Component{Name: mlp.Framework, Version: version},
		BatchVariable: testinfo.Used,
		BatchSize:     mlp.MaxBatch,
		Precision:     testinfo.PrecisionList{testinfo.FP32},
		Extra:         map[string]any{"dataset": dataset},
	}
}

// loadData loads the reference data set the plan names ("auto" by
// default).
func (r *runner) loadData(cfg *sut.ReferenceConfig) (*mlp.Data, error) {
	name := cfg.Dataset
	if name == "" {
		name = "auto"
	}
	data, err := mlp.LoadData(name, mlp.DataOptions{Notify: func(s string) { r.notify(Note, "%s", s) }})
	if err != nil {
		return nil, err
	}
	return data, nil
}
