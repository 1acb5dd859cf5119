package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"aimeter/sut/kserve"
)

// httpMux routes the v2 HTTP/REST API.
type httpMux = *http.ServeMux

// maxRequest bounds a request body.
const maxRequest = 64 << 20

// The HTTP header of the binary tensor data extension.
const headerContentLength = "Inference-Header-Content-Length"

// ContentEncodingExtension is the extension the server metadata lists to
// declare that inference requests may be gzipped (Content-Encoding: gzip),
// as aimeter's KServe client sends them with --compression lossless.
const ContentEncodingExtension = "content_encoding_gzip"

func (k *KServe) newMux() *http.ServeMux {
	m := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	m.HandleFunc("GET /v2/health/live", ok)
	m.Handle("GET "+MetricsPath, k.metrics)
	m.HandleFunc("GET /v2/health/ready", ok)
	m.HandleFunc("GET /v2", k.serverMetadata)
	m.HandleFunc("GET /v2/models/{model}", k.modelMetadata)
	m.HandleFunc("GET /v2/models/{model}/versions/{version}", k.modelMetadata)
	m.HandleFunc("GET /v2/models/{model}/ready", k.modelReady)
	m.HandleFunc("GET /v2/models/{model}/versions/{version}/ready", k.modelReady)
	m.HandleFunc("POST /v2/models/{model}/infer", k.inferHTTP)
	m.HandleFunc("POST /v2/models/{model}/versions/{version}/infer", k.inferHTTP)
	return m
}

// ServeHTTP serves the v2 HTTP/REST API: health, server and model metadata,
// and inference with JSON or binary tensor data. Inference responses carry
// the request's stage times in a Server-Timing header.
func (k *KServe) ServeHTTP(w http.ResponseWriter, r *http.Request) { k.mux.ServeHTTP(w, r) }

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func httpError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

func (k *KServe) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"name": k.opts.ServerName, "version": k.opts.ServerVersion,
		"extensions": []string{"binary_tensor_data", ContentEncodingExtension},
	})
}

// knownModel checks the model and version of a request's path.
func (k *KServe) knownModel(r *http.Request) error {
	if m := r.PathValue("model"); m != k.opts.ModelName {
		return fmt.Errorf("unknown model %q (this server serves %q)", m, k.opts.ModelName)
	}
	if v := r.PathValue("version"); v != "" && v != k.opts.ModelVersion {
		return fmt.Errorf("model %q has no version %q (it has %q)", k.opts.ModelName, v, k.opts.ModelVersion)
	}
	return nil
}

func (k *KServe) modelReady(w http.ResponseWriter, r *http.Request) {
	if err := k.knownModel(r); err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (k *KServe) metadata() map[string]any {
	type tensor struct {
		Name     string  `json:"name"`
		Datatype string  `json:"datatype"`
		Shape    []int64 `json:"shape"`
	}
	return map[string]any{
		"name": k.opts.ModelName, "versions": []string{k.opts.ModelVersion}, "platform": "aimeter_mlp",
		"inputs":  []tensor{{KServeInput, "FP32", []int64{-1, int64(k.inputs)}}},
		"outputs": []tensor{{KServeOutput, "FP32", []int64{-1, int64(k.classes)}}},
	}
}

func (k *KServe) modelMetadata(w http.ResponseWriter, r *http.Request) {
	if err := k.knownModel(r); err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	writeJSON(w, http.StatusOK, k.metadata())
}

// inferRequest is the JSON of an inference request.
type inferRequest struct {
	ID         string `json:"id"`
	Parameters struct {
		BinaryDataOutput bool `json:"binary_data_output"`
	} `json:"parameters"`
	Inputs []struct {
		Name       string  `json:"name"`
		Datatype   string  `json:"datatype"`
		Shape      []int64 `json:"shape"`
		Parameters struct {
			BinaryDataSize *int64 `json:"binary_data_size"`
		} `json:"parameters"`
		Data json.RawMessage `json:"data"`
	} `json:"inputs"`
	Outputs []struct {
		Name       string `json:"name"`
		Parameters struct {
			BinaryData bool `json:"binary_data"`
		} `json:"parameters"`
	} `json:"outputs"`
}

// httpScratch is the reusable memory of one HTTP inference.
type httpScratch struct {
	zr   *gzip.Reader // reused for gzipped requests
	body bytes.Buffer
	x    []float32
	out  []byte
}

// decoded is the request's body as sent before its Content-Encoding: a
// gzipped body (what aimeter's KServe client sends with --compression
// lossless, and Triton accepts) is decompressed; an encoding other than
// gzip and identity is an error naming it. Inference-Header-Content-Length
// counts the JSON part of the decompressed body, as Triton reads it.
func (sc *httpScratch) decoded(r *http.Request) (io.Reader, error) {
	switch enc := r.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		return r.Body, nil
	case "gzip":
		if sc.zr == nil {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				return nil, fmt.Errorf("the request's gzip Content-Encoding: %w", err)
			}
			sc.zr = zr
		} else if err := sc.zr.Reset(r.Body); err != nil {
			return nil, fmt.Errorf("the request's gzip Content-Encoding: %w", err)
		}
		return sc.zr, nil
	default:
		return nil, fmt.Errorf("request Content-Encoding %q is not supported (gzip and identity are)", enc)
	}
}

func (k *KServe) inferHTTP(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	if err := k.knownModel(r); err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	sc := k.scratch.Get().(*httpScratch)
	defer k.scratch.Put(sc)
	sc.body.Reset()
	src, err := sc.decoded(r)
	if err != nil {
		httpError(w, http.StatusUnsupportedMediaType, err)
		return
	}
	if _, err := sc.body.ReadFrom(io.LimitReader(src, maxRequest+1)); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("reading the request: %w", err))
		return
	}
	body := sc.body.Bytes()
	if len(body) > maxRequest {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", maxRequest))
		return
	}
	js, bin := body, []byte(nil)
	if v := r.Header.Get(headerContentLength); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > len(body) {
			httpError(w, http.StatusBadRequest, fmt.Errorf("%s %q: want the length of the JSON part (body: %d bytes)", headerContentLength, v, len(body)))
			return
		}
		js, bin = body[:n], body[n:]
	}
	var req inferRequest
	if err := json.Unmarshal(js, &req); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("request JSON: %w", err))
		return
	}
	if len(req.Inputs) != 1 {
		httpError(w, http.StatusBadRequest, fmt.Errorf("%d inputs: the model takes one, %q", len(req.Inputs), KServeInput))
		return
	}
	in := req.Inputs[0]
	x := sc.x[:0]
	if in.Parameters.BinaryDataSize != nil {
		if *in.Parameters.BinaryDataSize != int64(len(bin)) {
			httpError(w, http.StatusBadRequest, fmt.Errorf("input %q: binary_data_size %d, but %d bytes of binary data follow the JSON", in.Name, *in.Parameters.BinaryDataSize, len(bin)))
			return
		}
		x, err = rawFloats(x, bin)
	} else {
		err = kserve.ScanNumbers(in.Data, func(v float64) { x = append(x, float32(v)) })
	}
	sc.x = x
	if err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("input %q: %w", in.Name, err))
		return
	}
	rows, err := k.checkInput(in.Name, in.Datatype, in.Shape, len(x))
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	binaryOut := req.Parameters.BinaryDataOutput
	for _, o := range req.Outputs {
		if o.Name != KServeOutput {
			httpError(w, http.StatusBadRequest, fmt.Errorf("unknown output %q: the model's output is %q", o.Name, KServeOutput))
			return
		}
		binaryOut = binaryOut || o.Parameters.BinaryData
	}
	decoded := time.Now()
	j, err := k.infer(r.Context(), x, rows)
	if err != nil {
		code := http.StatusServiceUnavailable
		if errors.Is(err, r.Context().Err()) {
			return // the client has gone
		}
		httpError(w, code, err)
		return
	}
	b := sc.out[:0]
	b = append(b, `{"model_name":`...)
	b = strconv.AppendQuote(b, k.opts.ModelName)
	b = append(b, `,"model_version":`...)
	b = strconv.AppendQuote(b, k.opts.ModelVersion)
	if req.ID != "" {
		b = append(b, `,"id":`...)
		b = strconv.AppendQuote(b, req.ID)
	}
	b = append(b, `,"outputs":[{"name":"`+KServeOutput+`","datatype":"FP32","shape":[`...)
	b = strconv.AppendInt(b, int64(rows), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(k.classes), 10)
	b = append(b, ']')
	jsonLen := 0
	if binaryOut {
		b = append(b, `,"parameters":{"binary_data_size":`...)
		b = strconv.AppendInt(b, int64(4*len(j.out)), 10)
		b = append(b, `}}]}`...)
		jsonLen = len(b)
		for _, v := range j.out {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	} else {
		b = append(b, `,"data":[`...)
		for i, v := range j.out {
			if i > 0 {
				b = append(b, ',')
			}
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				v = 0
			}
			b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
		}
		b = append(b, `]}]}`...)
	}
	sc.out = b
	h := w.Header()
	if binaryOut {
		h["Content-Type"] = []string{"application/octet-stream"}
		h[headerContentLength] = []string{strconv.Itoa(jsonLen)}
	} else {
		h["Content-Type"] = []string{"application/json"}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	h["Server-Timing"] = []string{serverTiming(received, decoded, j, time.Now())}
	k.release(j)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
