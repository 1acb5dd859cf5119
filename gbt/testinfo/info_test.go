package testinfo

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const examplePath = "testdata/info/example.yaml"

func loadExample(t *testing.T) Info {
	t.Helper()
	info, err := Load(examplePath)
	if err != nil {
		t.Fatalf("Load(%s): %v", examplePath, err)
	}
	return info
}

// The example documents every field; it must load and validate, and each
// field must land where its comment says (GB-7.1-a, GB-6.1-a-1 … -20,
// GB-7.1-a-1, GB-7.1-a-2).
func TestLoadInfoExample(t *testing.T) {
	info := loadExample(t)
	if err := info.Validate(nil); err != nil {
		t.Fatalf("example does not validate: %v", err)
	}
	zero := 0
	wantSubmit, _ := time.ParseInLocation(TimestampLayout, "2024:11:28 09:30:00", time.Local)
	want := Info{
		OrgName:           "Example AI Lab",
		TestID:            "GBT-2024-000123",
		TestMode:          TestClosed,
		ScenarioClass:     ScenarioGeneral,
		TaskType:          TaskInference,
		DatasetType:       DatasetFixed,
		RandomTrainEpochs: &zero,
		ModelNo:           "T11-2",
		ModelName:         "resnet50_v1.5",
		ModelVersion:      "1.5",
		SubmitTime:        Timestamp{wantSubmit},
		TargetType:        TargetSingleMachine,
		NodeCount:         1,
		Servers: []Server{{
			Count:            1,
			Model:            "Supermicro SYS-821GE-TNHR",
			NominalCompute:   "8 x 989 TFLOPS FP16 dense",
			AcceleratorCount: 8,
			CPU:              CPU{Model: "Intel(R) Xeon(R) Platinum 8480+", Cores: 112, Threads: 224, FrequencyMHz: 2000},
			CPUSockets:       2,
			Accelerator: Accelerator{Name: "NVIDIA H100 80GB HBM3", CardType: CardTrainingAndInference, ExternalPower: NotUsed,
				Interface: "SXM5", Memory: 80 << 30, DriverVersion: "550.54.15"},
			Storage: []Storage{{Interface: "U.2", Protocol: "NVMe", Count: 8, TotalCapacity: 30_720_000_000_000}},
			Memory:  Memory{Model: "DDR5-4800 RDIMM", Modules: 32, ModuleCapacity: 64 << 30, Total: 2 << 40},
			Bus:     Bus{PCIeVersion: "5.0", Lanes: "x16"},
		}},
		Interconnect:            Interconnect{Protocol: "InfiniBand NDR", Bandwidth: "400 Gb/s"},
		NodeTopology:            TopologySingleNode,
		OS:                      OS{Name: "Ubuntu 22.04.4 LTS", Kernel: "5.15.0-105-generic"},
		Framework:               Component{Name: "PyTorch", Version: "2.3.0"},
		Virtualization:          Used,
		VirtualizationComponent: Component{Name: "Docker", Version: "26.1.3"},
		BatchVariable:           NotUsed,
		BatchSize:               32,
		Sparsity:                NotUsed,
		Quantization:            Used,
		QuantizationMethod:      "post-training static INT8, per-channel weights",
		Precision:               PrecisionList{INT8, FP16},
		Extra: map[string]any{
			"container_image": "registry.example.com/infer/resnet50@sha256:0123abcd",
			"notes":           "accelerators run at the default power limit",
		},
	}
	if !reflect.DeepEqual(info, want) {
		g, _ := json.MarshalIndent(info, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("example decoded as\n%s\nwant\n%s", g, w)
	}
}

// Every key the example uses is a key of Info and vice versa: the
// example documents every field.
func TestExampleDocumentsEveryField(t *testing.T) {
	info := loadExample(t)
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(examplePath)
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Info]()) {
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !strings.Contains(string(text), "\n"+key+":") {
			t.Errorf("example.yaml has no top-level key %q", key)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Server](), reflect.TypeFor[CPU](), reflect.TypeFor[Accelerator](),
		reflect.TypeFor[Storage](), reflect.TypeFor[Memory](), reflect.TypeFor[Bus]()} {
		for _, f := range reflect.VisibleFields(typ) {
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !strings.Contains(string(text), " "+key+":") {
				t.Errorf("example.yaml has no %s key %q", typ.Name(), key)
			}
		}
	}
}

// Strict decoding: unknown keys and invalid values are errors that name the
// line (brief; GB-6.1-a codes; GB-6.7.1-d precisions).
func TestParseInfoStrict(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"unknown top-level key", "org_name: x\ntest_mdoe: 0\n", 2, `unknown field "test_mdoe"`},
		{"unknown nested key", "servers:\n  - model: x\n    cpu:\n      modle: y\n", 4, `unknown field "modle"`},
		{"test mode out of range (GB-6.1-a-3)", "test_mode: 2\n", 1, "invalid test mode 2"},
		{"unknown scenario class name (GB-6.1-a-4)", "org_name: x\nscenario_class: generic\n", 2, `invalid scenario class "generic"`},
		{"topology 5 (GB-6.1-a-14)", "node_topology: 5\n", 1, "invalid node topology 5"},
		{"flag 2 (GB-6.1-a-17)", "\nvirtualization: 2\n", 2, "invalid flag 2"},
		{"FP8 is not a 6.7.1 d) precision (GB-6.7.1-d)", "precision: [INT8, FP8]\n", 1, `invalid precision "FP8"`},
		{"precision listed twice", "precision: [FP16, fp16]\n", 1, "listed twice"},
		{"batch size not a number", "batch_size: many\n", 1, "cannot unmarshal"},
		{"bad capacity unit", "servers:\n  - memory:\n      total: 2 TX\n", 3, `invalid capacity unit "TX"`},
		{"bad submit time (IN-04)", "submit_time: \"2024-11-28 09:30:00\"\n", 1, "invalid timestamp"},
		{"duplicate key", "org_name: a\norg_name: b\n", 2, `mapping key "org_name" already defined`},
		{"card type as a list", "servers:\n  - accelerator:\n      card_type: [a]\n", 3, "expected a scalar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			var pe *PositionError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *PositionError", err, err)
			}
			if pe.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", pe.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
		})
	}
}

func TestLoadInfoErrorNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "info.yaml")
	if err := os.WriteFile(p, []byte("org_name: x\n\nframework:\n  name: torch\n  versoin: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	want := p + ":5:3: unknown field \"versoin\""
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestParseInfoForms(t *testing.T) {
	info, err := Parse([]byte(`
test_mode: open
scenario_class: 1
target_type: cluster
node_topology: master-slave
virtualization: true
batch_variable: variable
sparsity: no
quantization: "1"
precision: bf16
submit_time: [2024:11:28 09:30:05]
random_train_epochs: 3
servers:
  - memory:
      total: 1073741824
      module_capacity: 32GB
`))
	if err != nil {
		t.Fatal(err)
	}
	if info.TestMode != TestOpen || info.ScenarioClass != ScenarioSpecial || info.TargetType != TargetCluster ||
		info.NodeTopology != TopologyMasterSlave || info.Virtualization != Used || info.BatchVariable != Used ||
		info.Sparsity != NotUsed || info.Quantization != Used {
		t.Errorf("codes decoded as %+v", info)
	}
	if !slices.Equal(info.Precision, PrecisionList{BF16}) {
		t.Errorf("precision = %v, want [BF16]", info.Precision)
	}
	if got := info.SubmitTime.String(); got != "[2024:11:28 09:30:05]" {
		t.Errorf("unquoted submit_time = %q", got)
	}
	if info.RandomTrainEpochs == nil || *info.RandomTrainEpochs != 3 {
		t.Errorf("random_train_epochs = %v", info.RandomTrainEpochs)
	}
	if m := info.Servers[0].Memory; m.Total != 1<<30 || m.ModuleCapacity != 32e9 {
		t.Errorf("memory = %+v", m)
	}
	if info, err := Parse([]byte("  \n")); err != nil || !reflect.ValueOf(info).IsZero() {
		t.Errorf("empty document: %+v, %v", info, err)
	}
}

// validInfo is the example, which validates.
func validInfo(t *testing.T) Info { return loadExample(t) }

func TestValidate(t *testing.T) {
	two := 2
	tests := []struct {
		name   string
		mutate func(*Info)
		fields []string // nil: valid
	}{
		{"example is valid", func(*Info) {}, nil},
		{"GB-6.1-a-1 org name", func(i *Info) { i.OrgName = " " }, []string{"org_name"}},
		{"GB-6.1-a-2 test ID", func(i *Info) { i.TestID = "" }, []string{"test_id"}},
		{"GB-6.1-a-3 test mode", func(i *Info) { i.TestMode = 0 }, []string{"test_mode"}},
		{"GB-6.1-a-4 scenario class", func(i *Info) { i.ScenarioClass = 0 }, []string{"scenario_class"}},
		{"GB-6.1-a-5 task type", func(i *Info) { i.TaskType = 0 }, []string{"task_type"}},
		{"IN-38 training is not this information set", func(i *Info) { i.TaskType = TaskTraining }, []string{"task_type"}},
		{"GB-6.1-a-6 dataset type", func(i *Info) { i.DatasetType = 0 }, []string{"dataset_type"}},
		{"GB-6.1-a-7 random data set needs epochs (IN-06)", func(i *Info) { i.DatasetType = DatasetRandom; i.RandomTrainEpochs = nil }, []string{"random_train_epochs"}},
		{"GB-6.1-a-7 few-shot", func(i *Info) { i.DatasetType = DatasetRandom; i.RandomTrainEpochs = &two }, nil},
		{"GB-6.1-a-7 fixed data set needs no epochs", func(i *Info) { i.RandomTrainEpochs = nil }, nil},
		{"GB-6.1-a-8 closed needs model_no", func(i *Info) { i.ModelNo = "" }, []string{"model_no"}},
		{"GB-6.1-a-8 model_no free text accepted", func(i *Info) { i.ModelNo = "lab-model-7" }, nil},
		{"GB-6.1-a-8 open needs name and version", func(i *Info) {
			i.TestMode = TestOpen
			i.ModelName, i.ModelVersion = "", ""
		}, []string{"model_name", "model_version"}},
		{"GB-6.1-a-8 open with name and version", func(i *Info) { i.TestMode = TestOpen; i.ModelNo = "" }, nil},
		{"GB-6.1-a-9 submission time", func(i *Info) { i.SubmitTime = Timestamp{} }, []string{"submit_time"}},
		{"GB-6.1-a-10 target type", func(i *Info) { i.TargetType = 0 }, []string{"target_type"}},
		{"GB-6.1-a-11/-13 cluster", func(i *Info) {
			i.TargetType = TargetCluster
			i.NodeCount = 1
			i.Interconnect = Interconnect{}
		}, []string{"node_count", "interconnect.protocol", "interconnect.bandwidth"}},
		{"GB-6.1-a-11 cluster valid", func(i *Info) { i.TargetType = TargetCluster; i.NodeCount = 4 }, nil},
		{"GB-6.1-a-12 servers", func(i *Info) { i.Servers = nil }, []string{"servers"}},
		{"GB-6.1-a-12 sub-fields 12.1–12.9", func(i *Info) {
			i.Servers = []Server{{AcceleratorCount: 1}}
		}, []string{"servers[0].model", "servers[0].nominal_compute", "servers[0].cpu.model", "servers[0].cpu.cores",
			"servers[0].cpu.frequency_mhz", "servers[0].cpu_sockets", "servers[0].accelerator.name",
			"servers[0].accelerator.card_type", "servers[0].accelerator.external_power", "servers[0].accelerator.interface",
			"servers[0].storage", "servers[0].memory.model", "servers[0].memory.modules", "servers[0].memory.module_capacity",
			"servers[0].memory.total", "servers[0].bus.pcie_version", "servers[0].bus.lanes"}},
		{"GB-6.1-a-12 CPU-only server needs no card info", func(i *Info) {
			i.Servers[0].AcceleratorCount = 0
			i.Servers[0].Accelerator = Accelerator{}
		}, nil},
		{"GB-6.1-a-12 storage entries", func(i *Info) { i.Servers[0].Storage = []Storage{{}} },
			[]string{"servers[0].storage[0].interface", "servers[0].storage[0].protocol", "servers[0].storage[0].count", "servers[0].storage[0].total_capacity"}},
		{"GB-6.1-a-14 topology", func(i *Info) { i.NodeTopology = 0 }, []string{"node_topology"}},
		{"GB-6.1-a-15 OS", func(i *Info) { i.OS = OS{} }, []string{"os.name", "os.kernel"}},
		{"GB-6.1-a-16 framework", func(i *Info) { i.Framework.Version = "" }, []string{"framework.version"}},
		{"GB-6.1-a-17 virtualization", func(i *Info) { i.Virtualization = 0 }, []string{"virtualization"}},
		{"GB-6.1-a-18 component when used", func(i *Info) { i.VirtualizationComponent = Component{} },
			[]string{"virtualization_component.name", "virtualization_component.version"}},
		{"GB-6.1-a-18 no component when not used", func(i *Info) {
			i.Virtualization = NotUsed
			i.VirtualizationComponent = Component{}
		}, nil},
		{"GB-6.1-a-19 batch variability", func(i *Info) { i.BatchVariable = 0 }, []string{"batch_variable"}},
		{"GB-6.1-a-20 fixed batch needs a size (IN-05, GB-7.2-e)", func(i *Info) { i.BatchSize = 0 }, []string{"batch_size"}},
		{"GB-6.1-a-20 variable batch may omit it (IN-05)", func(i *Info) { i.BatchVariable = Used; i.BatchSize = 0 }, nil},
		{"GB-6.1-a-20 negative", func(i *Info) { i.BatchSize = -1 }, []string{"batch_size"}},
		{"GB-7.1-a-1 sparsity flag", func(i *Info) { i.Sparsity = 0 }, []string{"sparsity"}},
		{"GB-7.1-a-1 sparsity method", func(i *Info) { i.Sparsity = Used }, []string{"sparsity_method"}},
		{"GB-7.1-a-2 quantization flag", func(i *Info) { i.Quantization = 0 }, []string{"quantization"}},
		{"GB-7.1-a-2 quantization method", func(i *Info) { i.QuantizationMethod = "" }, []string{"quantization_method"}},
		{"GB-6.7.1-d precision set in code", func(i *Info) { i.Precision = PrecisionList{"FP8"} }, []string{"precision"}},
		{"GB-6.7.1-d precision optional", func(i *Info) { i.Precision = nil }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := validInfo(t)
			tc.mutate(&info)
			err := info.Validate(nil)
			if tc.fields == nil {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			var ve ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			if !slices.Equal(ve.Fields(), tc.fields) {
				t.Fatalf("fields = %q, want %q\n%v", ve.Fields(), tc.fields, err)
			}
		})
	}
}

func TestValidateEmptyNamesRequiredFieldsWithIDs(t *testing.T) {
	err := Info{}.Validate(nil)
	var ve ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	want := []string{"org_name", "test_id", "test_mode", "scenario_class", "task_type", "dataset_type", "submit_time",
		"target_type", "servers", "node_topology", "os.name", "os.kernel", "framework.name", "framework.version",
		"virtualization", "batch_variable", "batch_size", "sparsity", "quantization"}
	if !slices.Equal(ve.Fields(), want) {
		t.Errorf("fields = %q\nwant %q", ve.Fields(), want)
	}
	for _, fe := range ve {
		if !strings.HasPrefix(fe.ReqID, "GB-") {
			t.Errorf("%s has no requirement ID", fe.Field)
		}
	}
	if !strings.Contains(err.Error(), "org_name (GB-6.1-a-1): missing") {
		t.Errorf("message: %v", err)
	}
}

// IN-07: the catalogue check sees a closed-mode model number in catalogue
// form, and only that; its problems come in field order, after the data set
// and before the submission time. (gbt's tests check the catalogue itself.)
func TestValidateCatalogueCheck(t *testing.T) {
	var seen []string
	check := func(in Info) []FieldError {
		seen = append(seen, in.ModelNo)
		return []FieldError{{Field: "model_no", ReqID: "GB-6.1-a-8", Msg: "not in the catalogue"}}
	}
	tests := []struct {
		name   string
		mutate func(*Info)
		seen   []string
	}{
		{"closed, catalogue form", func(i *Info) { i.ModelNo = "t12-1" }, []string{"t12-1"}},
		{"closed, free text", func(i *Info) { i.ModelNo = "lab-model-7" }, nil},
		{"closed, missing", func(i *Info) { i.ModelNo = " " }, nil},
		{"open", func(i *Info) { i.TestMode = TestOpen }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			info := validInfo(t)
			tc.mutate(&info)
			info.Validate(check)
			if !slices.Equal(seen, tc.seen) {
				t.Errorf("check saw %q, want %q", seen, tc.seen)
			}
		})
	}

	info := validInfo(t)
	info.ModelNo = "T11-13"
	info.DatasetType = DatasetRandom
	info.RandomTrainEpochs = nil
	info.SubmitTime = Timestamp{}
	err := info.Validate(check)
	var ve ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a ValidationError", err)
	}
	if want := []string{"random_train_epochs", "model_no", "submit_time"}; !slices.Equal(ve.Fields(), want) {
		t.Errorf("fields = %q, want %q", ve.Fields(), want)
	}
	if !strings.Contains(err.Error(), "model_no (GB-6.1-a-8): not in the catalogue") {
		t.Errorf("message: %v", err)
	}
	if err := info.Validate(nil); err == nil || strings.Contains(err.Error(), "catalogue") {
		t.Errorf("without a catalogue: %v", err)
	}
}

// GB-7.7.1-a: manual entry overrides automatic detection field by field.
func TestMerge(t *testing.T) {
	detected := FromHost(hostGPU())
	manual, err := Parse([]byte(`
org_name: Lab
os:
  name: Custom Linux
virtualization: 1
virtualization_component: {name: Docker, version: "26"}
servers:
  - nominal_compute: 2 PFLOPS
    cpu:
      frequency_mhz: 2100
    accelerator:
      card_type: training
  - model: second box
extra: {a: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	detected.Extra = map[string]any{"a": 0, "b": 2}
	detBefore, _ := json.Marshal(detected)
	manBefore, _ := json.Marshal(manual)

	got := Merge(detected, manual)

	if got.OrgName != "Lab" || got.OS.Name != "Custom Linux" || got.OS.Kernel != "5.15.0-105-generic" {
		t.Errorf("top level: %q %+v", got.OrgName, got.OS)
	}
	if got.Virtualization != Used || got.VirtualizationComponent.Name != "Docker" {
		t.Errorf("virtualization = %v %+v", got.Virtualization, got.VirtualizationComponent)
	}
	if len(got.Servers) != 2 {
		t.Fatalf("servers = %+v", got.Servers)
	}
	s := got.Servers[0]
	if s.Model != "Supermicro SYS-821GE-TNHR" || s.NominalCompute != "2 PFLOPS" || s.CPU.Model != "Intel(R) Xeon(R) Platinum 8480+" ||
		s.CPU.FrequencyMHz != 2100 || s.CPU.Cores != 4 || s.AcceleratorCount != 2 ||
		s.Accelerator.Name != "NVIDIA H100 80GB HBM3" || s.Accelerator.CardType != CardTraining {
		t.Errorf("server 0 = %+v", s)
	}
	if got.Servers[1].Model != "second box" {
		t.Errorf("server 1 = %+v", got.Servers[1])
	}
	if !reflect.DeepEqual(got.Extra, map[string]any{"a": uint64(1), "b": 2}) {
		t.Errorf("extra = %#v", got.Extra)
	}
	// An explicit 0 overrides a detected 1.
	notUsed := Merge(detected, Info{Virtualization: NotUsed})
	det2 := detected
	det2.Virtualization = Used
	if Merge(det2, Info{Virtualization: NotUsed}).Virtualization != NotUsed || notUsed.Virtualization != NotUsed {
		t.Error("explicit 0 did not override")
	}
	// Neither input changed, and the output shares no memory with them.
	got.Servers[0].Model = "changed"
	got.Extra["b"] = 3
	detAfter, _ := json.Marshal(detected)
	manAfter, _ := json.Marshal(manual)
	if string(detBefore) != string(detAfter) || string(manBefore) != string(manAfter) {
		t.Error("Merge modified its arguments")
	}
	if reflect.DeepEqual(Merge(Info{}, Info{}), Info{}) == false {
		t.Error("merge of zero values is not zero")
	}
}

func TestCodesJSON(t *testing.T) {
	b, err := json.Marshal(Info{TestMode: TestClosed, ScenarioClass: ScenarioSpecial, Virtualization: NotUsed, NodeTopology: TopologyOther})
	if err != nil {
		t.Fatal(err)
	}
	// Codes are the standard's numbers; unset fields are left out.
	if want := `{"test_mode":0,"scenario_class":1,"node_topology":4,"virtualization":0}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
	var info Info
	if err := json.Unmarshal([]byte(`{"test_mode":"open","virtualization":true,"precision":"int4","submit_time":"[2024:01:02 03:04:05]"}`), &info); err != nil {
		t.Fatal(err)
	}
	if info.TestMode != TestOpen || info.Virtualization != Used || !slices.Equal(info.Precision, PrecisionList{INT4}) ||
		info.SubmitTime.String() != "[2024:01:02 03:04:05]" {
		t.Errorf("decoded %+v", info)
	}
	if err := json.Unmarshal([]byte(`{"test_mode":7}`), &info); err == nil {
		t.Error("test_mode 7 accepted")
	}
	for v, s := range map[interface{ String() string }]string{
		TestMode(0): "unset", TestOpen: "open", ScenarioGeneral: "general", TaskInference: "inference",
		DatasetRandom: "random", TargetCluster: "cluster", TopologyRing: "ring", Used: "used", CardInference: "inference",
	} {
		if v.String() != s {
			t.Errorf("%#v.String() = %q, want %q", v, v.String(), s)
		}
	}
	if TestOpen.Code() != 1 || TestMode(0).Code() != -1 || TopologyTree.Code() != 3 || FlagOf(false).Code() != 0 {
		t.Error("codes")
	}
}

func TestParsePrecision(t *testing.T) {
	for _, p := range Precisions() {
		got, err := ParsePrecision(strings.ToLower(string(p)))
		if err != nil || got != p || !p.Valid() {
			t.Errorf("%s: %v %v", p, got, err)
		}
	}
	for _, s := range []string{"FP8", "int16", "", "fp 16"} {
		if _, err := ParsePrecision(s); err == nil {
			t.Errorf("%q accepted (GB-6.7.1-d lists nine types)", s)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want ByteSize
	}{
		{"0", 0}, {"512", 512}, {"512 B", 512}, {"1KB", 1000}, {"1 KiB", 1024},
		{"80 GiB", 80 << 30}, {"3.84 TB", 3_840_000_000_000}, {"1.5 TiB", 3 << 39}, {"64gb", 64e9}, {"2 pib", 2 << 50},
	}
	for _, tc := range tests {
		got, err := ParseByteSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "-1", "1 XB", "GB", "1e3"} {
		if _, err := ParseByteSize(s); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", s)
		}
	}
	if s := ByteSize(80 << 30).String(); s != "80 GiB" {
		t.Errorf("String = %q", s)
	}
	var b ByteSize
	if err := json.Unmarshal([]byte(`"2 GiB"`), &b); err != nil || b != 2<<30 {
		t.Errorf("json string: %d %v", b, err)
	}
}

func TestTimestamp(t *testing.T) {
	ts, err := ParseTimestamp("[2024:11:28 09:30:00]")
	if err != nil {
		t.Fatal(err)
	}
	ts2, err := ParseTimestamp("2024:11:28 09:30:00")
	if err != nil || !ts.Equal(ts2.Time) {
		t.Fatalf("without brackets: %v %v", ts2, err)
	}
	if ts.String() != "[2024:11:28 09:30:00]" || ts.Location() != time.Local {
		t.Errorf("String = %q, location %v", ts, ts.Location())
	}
	// IN-17: the semicolon variant is the training log's typo; 6.1 a) 9)
	// uses colons only.
	for _, bad := range []string{"[2024:11;28 09:30:00]", "2024-11-28 09:30:00", "[2024:11:28T09:30:00]"} {
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := NewTimestamp(time.Date(2024, 1, 2, 3, 4, 5, 999, time.UTC)).String(); got != "[2024:01:02 03:04:05]" {
		t.Errorf("NewTimestamp = %q", got)
	}
}
