package testinfo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// This file holds the coded fields of the test information: the fields that
// the standard gives as numeric codes (0 closed, 1 open, …). Each is an
// instance of one generic type, Coded, whose type argument names a table
// (codeSpec) of the accepted names; the table drives String, Code, Valid and
// the JSON and YAML methods, so a new coded field is a table row and an
// alias, not another five methods.

// codeSpec describes a coded field: names[c] are the accepted names of code
// c, the first being the canonical one. A stored value is code + 1, so that
// the zero value means "not given".
type codeSpec struct {
	what  string
	names [][]string
}

// The tables of the coded fields, one per field.
var (
	testModeSpec      = codeSpec{"test mode", [][]string{{"closed"}, {"open"}}}
	scenarioClassSpec = codeSpec{"scenario class", [][]string{{"general"}, {"special"}}}
	taskTypeSpec      = codeSpec{"task type", [][]string{{"inference"}, {"training"}}}
	datasetTypeSpec   = codeSpec{"dataset type", [][]string{{"fixed"}, {"random"}}}
	targetTypeSpec    = codeSpec{"test object type", [][]string{{"single machine", "single", "machine", "server"}, {"cluster", "computing center", "computing centre"}}}
	topologySpec      = codeSpec{"node topology", [][]string{{"single node", "single"}, {"master-slave", "master slave", "primary-replica"}, {"ring"}, {"tree"}, {"other"}}}
	flagSpec          = codeSpec{"flag", [][]string{{"not used", "no", "false", "off", "fixed", "not variable"}, {"used", "yes", "true", "on", "variable"}}}
	cardTypeSpec      = codeSpec{"accelerator card type", [][]string{{"inference"}, {"training"}, {"training and inference", "training-inference", "inference and training", "both"}}}
)

// codedField is implemented by the empty types that select a coded field's
// table; it is unexported so that the set of coded fields stays closed.
type codedField interface{ spec() *codeSpec }

// The selectors of the coded fields.
type (
	testModeField      struct{}
	scenarioClassField struct{}
	taskTypeField      struct{}
	datasetTypeField   struct{}
	targetTypeField    struct{}
	topologyField      struct{}
	flagField          struct{}
	cardTypeField      struct{}
)

func (testModeField) spec() *codeSpec      { return &testModeSpec }
func (scenarioClassField) spec() *codeSpec { return &scenarioClassSpec }
func (taskTypeField) spec() *codeSpec      { return &taskTypeSpec }
func (datasetTypeField) spec() *codeSpec   { return &datasetTypeSpec }
func (targetTypeField) spec() *codeSpec    { return &targetTypeSpec }
func (topologyField) spec() *codeSpec      { return &topologySpec }
func (flagField) spec() *codeSpec          { return &flagSpec }
func (cardTypeField) spec() *codeSpec      { return &cardTypeSpec }

// Coded is a coded field of the test information: the standard's code plus
// one, so that the zero value means "not given" and Merge can tell a value
// that was set from one that was not (GB-7.7.1-a). JSON holds the code (null
// when not given); JSON and YAML input accept the code or any of the
// field's names, compared without case, spaces, hyphens or underscores.
// The coded fields are TestMode, ScenarioClass, TaskType, DatasetType,
// TargetType, Topology, Flag and CardType.
type Coded[F codedField] uint8

func (v Coded[F]) spec() *codeSpec {
	var f F
	return f.spec()
}

// Code returns the standard's code, or −1 if not given.
func (v Coded[F]) Code() int { return int(v) - 1 }

// Valid reports whether v is not given or one of the field's codes.
func (v Coded[F]) Valid() bool { return int(v) <= len(v.spec().names) }

// String returns the canonical name of the code ("closed", "single
// machine", "not used", …), "unset" when not given, or "<field>(<code>)"
// for a code the field does not have.
func (v Coded[F]) String() string {
	c := v.spec()
	if v == 0 {
		return "unset"
	}
	if !v.Valid() {
		return fmt.Sprintf("%s(%d)", c.what, v.Code())
	}
	return c.names[v-1][0]
}

// MarshalJSON writes the code, or null when not given; a code the field
// does not have is an error.
func (v Coded[F]) MarshalJSON() ([]byte, error) {
	if v == 0 {
		return []byte("null"), nil
	}
	if !v.Valid() {
		return nil, fmt.Errorf("invalid %s value %d", v.spec().what, v.Code())
	}
	return strconv.AppendInt(nil, int64(v.Code()), 10), nil
}

// UnmarshalJSON reads a code, a name (Flag: also a boolean), or null.
func (v *Coded[F]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			*v = 0
			return err
		}
	}
	x, err := v.spec().parse(s)
	*v = Coded[F](x)
	return err
}

// UnmarshalYAML reads a code, a name (Flag: also a boolean), or null; an
// error names the line and column.
func (v *Coded[F]) UnmarshalYAML(n ast.Node) error {
	s, err := scalarText(n)
	if err != nil {
		*v = 0
		return err
	}
	x, err := v.spec().parse(s)
	*v = Coded[F](x)
	if err != nil {
		return nodeError(n, "%v", err)
	}
	return nil
}

// allowed lists the codes and canonical names for error messages.
func (c *codeSpec) allowed() string {
	var parts []string
	for i, n := range c.names {
		parts = append(parts, fmt.Sprintf("%d = %s", i, n[0]))
	}
	return strings.Join(parts, ", ")
}

// parse reads a code or a name; "", "~" and "null" are "not given".
func (c *codeSpec) parse(s string) (uint8, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "~" || strings.EqualFold(s, "null") {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n >= len(c.names) {
			return 0, fmt.Errorf("invalid %s %d (want %s)", c.what, n, c.allowed())
		}
		return uint8(n + 1), nil
	}
	norm := normName(s)
	for i, ns := range c.names {
		for _, n := range ns {
			if normName(n) == norm {
				return uint8(i + 1), nil
			}
		}
	}
	return 0, fmt.Errorf("invalid %s %q (want %s)", c.what, s, c.allowed())
}

// normName folds a name for comparison: lower case, without spaces, hyphens,
// underscores or en dashes.
func normName(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "_", "", "–", "").Replace(strings.ToLower(s))
}

// TestMode is field 3 (GB-6.1-a-3): 0 closed, 1 open (5.1.2, 5.2.2). The
// zero value is "not given".
type TestMode = Coded[testModeField]

// Test modes.
const (
	TestClosed TestMode = 1 // code 0
	TestOpen   TestMode = 2 // code 1
)

// ScenarioClass is field 4 (GB-6.1-a-4): 0 general, 1 special (7.5). The
// zero value is "not given".
type ScenarioClass = Coded[scenarioClassField]

// Scenario classes.
const (
	ScenarioGeneral ScenarioClass = 1 // code 0
	ScenarioSpecial ScenarioClass = 2 // code 1
)

// TaskType is field 5 (GB-6.1-a-5): 0 inference, 1 training. The zero
// value is "not given".
type TaskType = Coded[taskTypeField]

// Task types.
const (
	TaskInference TaskType = 1 // code 0
	TaskTraining  TaskType = 2 // code 1
)

// DatasetType is field 6 (GB-6.1-a-6): 0 fixed, 1 random. The zero value is
// "not given".
type DatasetType = Coded[datasetTypeField]

// Data set types.
const (
	DatasetFixed  DatasetType = 1 // code 0
	DatasetRandom DatasetType = 2 // code 1
)

// TargetType is field 10 (GB-6.1-a-10): 0 single machine, 1 cluster or
// computing centre. The zero value is "not given".
type TargetType = Coded[targetTypeField]

// Test object types.
const (
	TargetSingleMachine TargetType = 1 // code 0
	TargetCluster       TargetType = 2 // code 1
)

// Topology is field 14 (GB-6.1-a-14): 0 single node, 1 master–slave,
// 2 ring, 3 tree, 4 other. The zero value is "not given".
type Topology = Coded[topologyField]

// Node topologies.
const (
	TopologySingleNode  Topology = 1 // code 0
	TopologyMasterSlave Topology = 2 // code 1
	TopologyRing        Topology = 3 // code 2
	TopologyTree        Topology = 4 // code 3
	TopologyOther       Topology = 5 // code 4
)

// Flag is a 0/1 field of the standard: 0 not used (or fixed, no), 1 used
// (or variable, yes) — fields 17 and 19 (GB-6.1-a-17, GB-6.1-a-19), 7.1 a)
// 1) and 2) (GB-7.1-a-1, GB-7.1-a-2). YAML booleans are accepted. The zero
// value is "not given".
type Flag = Coded[flagField]

// Flag values.
const (
	NotUsed Flag = 1 // code 0
	Used    Flag = 2 // code 1
)

// FlagOf returns Used for true and NotUsed for false.
func FlagOf(b bool) Flag {
	if b {
		return Used
	}
	return NotUsed
}

// CardType is the accelerator card type of sub-field 12.6: 0 inference,
// 1 training, 2 training and inference. The standard names the types
// without codes; these codes are aimeter's. The zero value is "not given".
type CardType = Coded[cardTypeField]

// Accelerator card types.
const (
	CardInference            CardType = 1 // code 0
	CardTraining             CardType = 2 // code 1
	CardTrainingAndInference CardType = 3 // code 2
)
