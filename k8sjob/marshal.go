package k8sjob

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Marshal returns job as YAML for kubectl apply -f, without the empty
// status that the API types always carry, preceded by header as "# "
// comment lines (one per line of header; "" writes none).
func Marshal(job *batchv1.Job, header string) ([]byte, error) {
	if job == nil {
		return nil, errors.New("k8sjob: no Job to marshal")
	}
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	y, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if header != "" {
		for line := range strings.SplitSeq(strings.TrimSuffix(header, "\n"), "\n") {
			buf.WriteString(strings.TrimRight("# "+line, " ") + "\n")
		}
	}
	buf.Write(y)
	return buf.Bytes(), nil
}

// DecodeStrict decodes the YAML manifest y into obj (a *batchv1.Job, a
// *corev1.Pod…) as strictly as the API server's strict field validation
// does: field names match case-sensitively, and an unknown field or a
// key given twice is an error naming it.
func DecodeStrict(y []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(y)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(j, obj)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}
