package kserve_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
)

// wireTap is an aimeter serve kserve behind a handler that measures every
// inference request's body as it came over the wire and after its
// Content-Encoding.
type wireTap struct {
	mu            sync.Mutex
	requests      int
	wire, decoded int64
	gzipped       int
}

func (w *wireTap) handler(k *serve.KServe) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			k.ServeHTTP(rw, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		plain := body
		gz := r.Header.Get("Content-Encoding") == "gzip"
		if gz {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err == nil {
				plain, err = io.ReadAll(zr)
			}
			if err != nil {
				http.Error(rw, err.Error(), http.StatusBadRequest)
				return
			}
		}
		w.mu.Lock()
		w.requests++
		w.wire += int64(len(body))
		w.decoded += int64(len(plain))
		if gz {
			w.gzipped++
		}
		w.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		k.ServeHTTP(rw, r)
	})
}

// TestCompression runs the reference data set against aimeter serve
// kserve with each compression option and checks the bytes on the wire
// that the records hold against what the server received and against the
// payload sizes the client prepared: the records' RequestBytes are the
// bytes sent; with lossless compression the server decodes gzip back to
// bodies whose sizes sum to the prepared payloads, and every answer is the
// in-process model's.
func TestCompression(t *testing.T) {
	m := testModel(t)
	k, err := serve.NewKServe(serve.KServeOptions{Model: m, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	set := dataset.Synthetic(64, 5)
	want := m.Predict(set.Floats(), set.Len())
	for _, c := range []struct {
		name   string
		comp   kserve.Compression
		binary bool
	}{
		{"none-json", kserve.CompressionNone, false},
		{"none-binary", "", true},
		{"lossless-json", kserve.CompressionLossless, false},
		{"lossless-binary", kserve.CompressionLossless, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tap := &wireTap{}
			hs := httptest.NewServer(tap.handler(k))
			defer hs.Close()
			qsl := dataset.NewQSL(set, 64)
			e, err := kserve.New(kserve.Options{URL: hs.URL, BinaryData: c.binary, Model: "fashion-mlp", Inputs: qsl, InputSize: 784, Compression: c.comp})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := e.Check(ctx); err != nil {
				t.Fatal(err)
			}
			sut := netsut.New(context.Background(), e, netsut.Options{RequestTimeout: 5 * time.Second})
			defer sut.Close()
			s := loadgen.DefaultSettings()
			s.Scenario, s.Mode = loadgen.Offline, loadgen.AccuracyOnly
			res, err := loadgen.Run(context.Background(), sut, e.Loading(qsl), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.FailedSamples != 0 || len(res.Accuracy) != set.Len() {
				t.Fatalf("%d failed, %d answers: %v", res.FailedSamples, len(res.Accuracy), res.Errors)
			}
			for _, a := range res.Accuracy {
				if int(a.Data[0]) != want[a.QSLIndex] {
					t.Fatalf("sample %d: class %d, in-process model says %d", a.QSLIndex, a.Data[0], want[a.QSLIndex])
				}
			}
			payload, wire := e.PayloadSizes()
			var sent, raw, prepared int64
			n := 0
			for r := range res.Records() {
				n++
				sent += r.RequestBytes
				if payload != nil {
					raw += payload[r.SampleIndex]
					prepared += wire[r.SampleIndex]
				}
			}
			if tap.requests != n || tap.wire != sent {
				t.Errorf("server received %d requests, %d bytes; the records say %d samples, %d bytes", tap.requests, tap.wire, n, sent)
			}
			if c.comp != kserve.CompressionLossless {
				if payload != nil || tap.gzipped != 0 || tap.decoded != tap.wire {
					t.Errorf("no compression: payload sizes %v, %d gzipped requests", payload != nil, tap.gzipped)
				}
				if min := int64(n) * 4 * 784; c.binary && sent < min {
					t.Errorf("binary bodies of %d bytes, under the %d of the tensors", sent, min)
				}
				return
			}
			if tap.gzipped != n {
				t.Errorf("%d of %d requests gzipped", tap.gzipped, n)
			}
			if prepared != sent {
				t.Errorf("prepared (compressed) sizes sum to %d, the records to %d", prepared, sent)
			}
			if raw != tap.decoded {
				t.Errorf("payloads before compression sum to %d; the server decoded %d", raw, tap.decoded)
			}
			if sent >= raw {
				t.Errorf("gzip sent %d bytes for %d of payload", sent, raw)
			}
			if min := int64(n) * 4 * 784; c.binary && raw < min {
				t.Errorf("binary payloads of %d bytes, under the %d of the tensors", raw, min)
			}
		})
	}
}

// TestCompressionRefused: the options the adapter cannot honour are
// refused before the run, naming why.
func TestCompressionRefused(t *testing.T) {
	qsl := dataset.NewQSL(dataset.Synthetic(4, 1), 4)
	if _, err := kserve.New(kserve.Options{URL: "127.0.0.1:1", GRPC: true, Model: "m", Inputs: qsl, Compression: kserve.CompressionLossless}); err == nil ||
		!strings.Contains(err.Error(), "needs HTTP") {
		t.Errorf("lossless over gRPC: %v", err)
	}
	if _, err := kserve.New(kserve.Options{URL: "http://h", Model: "m", Inputs: qsl, Compression: "zstd"}); err == nil ||
		!strings.Contains(err.Error(), `"zstd"`) {
		t.Errorf("zstd: %v", err)
	}
	srv := startServer(t, testModel(t))
	e, err := kserve.New(kserve.Options{URL: srv.httpURL, Model: "fashion-mlp", Inputs: qsl, InputSize: 784, Compression: kserve.CompressionOriginal})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "no original compressed form") {
		t.Errorf("original over the reference data set: %v", err)
	}
}

// TestServeRefusesUnknownEncoding: aimeter serve kserve decodes gzip and
// names any other Content-Encoding it is sent.
func TestServeRefusesUnknownEncoding(t *testing.T) {
	srv := startServer(t, testModel(t))
	req, _ := http.NewRequest(http.MethodPost, srv.httpURL+"/v2/models/fashion-mlp/infer", strings.NewReader("x"))
	req.Header.Set("Content-Encoding", "br")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(body), `\"br\"`) {
		t.Errorf("%s %s", res.Status, body)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.httpURL+"/v2/models/fashion-mlp/infer", strings.NewReader("not gzip"))
	req.Header.Set("Content-Encoding", "gzip")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a body that is not gzip: %s", res.Status)
	}
}

// TestCompressionOwnInputs: samples built from the model metadata (here
// seeded random FP32 tensors of the served model's shape) are prepared and
// gzipped when loaded too, and the server decodes them: every request
// succeeds and the wire sizes the records hold are the prepared ones.
func TestCompressionOwnInputs(t *testing.T) {
	srv := startServer(t, testModel(t))
	e, err := kserve.New(kserve.Options{URL: srv.httpURL, BinaryData: true, Model: "fashion-mlp",
		Data: &kserve.InputOptions{Mode: kserve.DataRandom, Seed: 3, Samples: 32}, Compression: kserve.CompressionLossless})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if dt := e.InputDatatype(); dt != "FP32" {
		t.Errorf("InputDatatype %q", dt)
	}
	sut := netsut.New(context.Background(), e, netsut.Options{RequestTimeout: 5 * time.Second})
	defer sut.Close()
	s := loadgen.DefaultSettings()
	s.Scenario, s.Mode = loadgen.Offline, loadgen.AccuracyOnly
	res, err := loadgen.Run(context.Background(), sut, e.Loading(e.OwnInputs()), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedSamples != 0 || len(res.Accuracy) != 32 {
		t.Fatalf("%d failed, %d answers: %v", res.FailedSamples, len(res.Accuracy), res.Errors)
	}
	payload, wire := e.PayloadSizes()
	for r := range res.Records() {
		if r.RequestBytes != wire[r.SampleIndex] || payload[r.SampleIndex] < 4*784 || wire[r.SampleIndex] >= payload[r.SampleIndex] {
			t.Fatalf("sample %d: %d bytes sent, prepared %d of %d", r.SampleIndex, r.RequestBytes, wire[r.SampleIndex], payload[r.SampleIndex])
		}
	}
}
