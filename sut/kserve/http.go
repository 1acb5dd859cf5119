package kserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
	"aimeter/sut/servertiming"
)

// httpClient is the HTTP/REST side of an Endpoint.
type httpClient struct {
	e        *Endpoint
	client   *http.Client
	inferURL string
	auth     string // the Authorization header value; "" for none
	bufs     sync.Pool
}

// httpBuf is the reusable memory of one request.
type httpBuf struct {
	req  []byte
	gzip bool // req is a prepared body, gzipped (Content-Encoding)
	resp bytes.Buffer
	rd   bytes.Reader
}

func newHTTPClient(e *Endpoint) *httpClient {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		TLSClientConfig:     e.opts.TLS,
		MaxIdleConns:        e.opts.MaxConns,
		MaxIdleConnsPerHost: e.opts.MaxConns,
		MaxConnsPerHost:     e.opts.MaxConns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	h := &httpClient{e: e, client: &http.Client{Transport: tr}}
	h.inferURL = e.base + modelPath(e.opts.Model, e.opts.ModelVersion) + "/infer"
	if e.opts.BearerToken != "" {
		h.auth = "Bearer " + e.opts.BearerToken
	}
	h.bufs.New = func() any { return new(httpBuf) }
	return h
}

// modelPath is /v2/models/NAME[/versions/VERSION].
func modelPath(model, version string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

func (h *httpClient) close() { h.client.CloseIdleConnections() }

// get fetches path and decodes a JSON body into v (if not nil); a non-200
// status is an error wrapping netsut.ErrNotReady.
func (h *httpClient) get(ctx context.Context, step, path string, v any) error {
	u := h.e.base + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("kserve: %s: GET %s: %w", step, u, err)
	}
	if h.auth != "" {
		req.Header.Set("Authorization", h.auth)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("kserve: %s: GET %s: %w", step, u, scrub(err))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("kserve: %s: GET %s: reading the body: %w", step, u, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("kserve: %s: GET %s: %s %q: %w", step, u, res.Status, prefix(string(body)), netsut.ErrNotReady)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			return fmt.Errorf("kserve: %s: GET %s: %w: %w", step, u, errDecode, err)
		}
	}
	return nil
}

// scrub drops the URL of a *url.Error (the caller names it already).
func scrub(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

func (h *httpClient) check(ctx context.Context) (*modelMeta, error) {
	if err := h.get(ctx, "server live", "/v2/health/live", nil); err != nil {
		return nil, err
	}
	if err := h.get(ctx, "server ready", "/v2/health/ready", nil); err != nil {
		return nil, err
	}
	mp := modelPath(h.e.opts.Model, h.e.opts.ModelVersion)
	if err := h.get(ctx, "model ready", mp+"/ready", nil); err != nil {
		return nil, err
	}
	md := new(modelMeta)
	if err := h.get(ctx, "model metadata", mp, md); err != nil {
		return nil, err
	}
	return md, nil
}

func (h *httpClient) nodeName(ctx context.Context) (string, error) {
	var sm struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := h.get(ctx, "server metadata", "/v2", &sm); err != nil {
		return "", err
	}
	return nodeLabel(sm.Name, sm.Version, h.e.target), nil
}

// nodeLabel names a node: the server's name and version, else its address.
func nodeLabel(name, version, addr string) string {
	switch {
	case name == "":
		return addr
	case version == "":
		return name + "@" + addr
	}
	return name + " " + version + "@" + addr
}

func (h *httpClient) do(ctx context.Context, r *loadgen.Responder, l *layout, x []float32, resp *loadgen.Response) {
	b := h.bufs.Get().(*httpBuf)
	defer h.bufs.Put(b)
	var idBuf [20]byte
	id := strconv.AppendUint(idBuf[:0], h.e.ids.Add(1), 10)
	b.req = appendJSONRequest(b.req[:0], string(id), l, x, h.e.opts.BinaryData)
	jsonLen := len(b.req)
	if h.e.opts.BinaryData {
		b.req = appendRaw(b.req, x)
	}
	body, hl, hdr := h.post(ctx, b, jsonLen, resp)
	if body == nil {
		return
	}
	class, err := decodeHTTPResponse(body, hl, l.outName)
	if err != nil {
		resp.Err = decodeError(err)
		return
	}
	h.stages(hdr, resp)
	resp.Data = classBytes[class : class+1]
}

// doGen sends the input tensors ts of a sample built from the metadata
// and checks the response against the metadata's outputs.
func (h *httpClient) doGen(ctx context.Context, l *layout, ts []Tensor, resp *loadgen.Response) {
	b := h.bufs.Get().(*httpBuf)
	defer h.bufs.Put(b)
	var idBuf [20]byte
	id := strconv.AppendUint(idBuf[:0], h.e.ids.Add(1), 10)
	b.req = appendGenRequest(b.req[:0], string(id), ts, l.outs, h.e.opts.BinaryData)
	jsonLen := len(b.req)
	if h.e.opts.BinaryData {
		for _, t := range ts {
			b.req = append(b.req, t.Raw...)
		}
	}
	body, hl, hdr := h.post(ctx, b, jsonLen, resp)
	if body == nil {
		return
	}
	if err := checkHTTPResponse(body, hl, l.outs); err != nil {
		resp.Err = err
		return
	}
	h.stages(hdr, resp)
}

func (h *httpClient) stages(hdr http.Header, resp *loadgen.Response) {
	if h.e.opts.StageTimes {
		if v := hdr["Server-Timing"]; len(v) > 0 {
			st, _ := servertiming.ParseStages(v...)
			resp.Stages = &st
		}
	}
}

// post sends the request in b.req (its JSON part jsonLen bytes long) and
// reads the response: its body, the Inference-Header-Content-Length (-1
// when absent) and the headers. A nil body means resp.Err is set.
func (h *httpClient) post(ctx context.Context, b *httpBuf, jsonLen int, resp *loadgen.Response) ([]byte, int, http.Header) {
	b.rd.Reset(b.req)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.inferURL, &b.rd)
	if err != nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, err)
		return nil, 0, nil
	}
	req.ContentLength = int64(len(b.req))
	hd := req.Header
	if h.e.opts.BinaryData {
		hd["Content-Type"] = octetStream
		hd[headerContentLength] = []string{strconv.Itoa(jsonLen)}
	} else {
		hd["Content-Type"] = appJSON
	}
	if h.auth != "" {
		hd["Authorization"] = []string{h.auth}
	}
	if b.gzip {
		hd["Content-Encoding"] = gzipEncoding
	}
	resp.RequestBytes = int64(len(b.req))
	res, err := h.client.Do(req)
	if err != nil {
		resp.Err = classify(ctx, scrub(err), false)
		return nil, 0, nil
	}
	b.resp.Reset()
	_, err = b.resp.ReadFrom(io.LimitReader(res.Body, maxBody+1))
	res.Body.Close()
	resp.ResponseBytes = int64(b.resp.Len())
	if err != nil {
		resp.Err = classify(ctx, err, true)
		return nil, 0, nil
	}
	body := b.resp.Bytes()
	if res.StatusCode/100 != 2 {
		resp.Err = netsut.HTTPError(res.StatusCode, fmt.Errorf("POST %s: %s: %q", h.inferURL, res.Status, prefix(string(body))))
		return nil, 0, nil
	}
	if len(body) > maxBody {
		resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, fmt.Errorf("%w: body longer than %d bytes", errDecode, maxBody))
		return nil, 0, nil
	}
	hl := -1
	if v := res.Header[headerContentLength]; len(v) > 0 {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 {
			resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, fmt.Errorf("%w: %s %q", errDecode, headerContentLength, prefix(v[0])))
			return nil, 0, nil
		}
		hl = n
	}
	if body == nil {
		body = []byte{}
	}
	return body, hl, res.Header
}

var (
	octetStream = []string{"application/octet-stream"}
	appJSON     = []string{"application/json"}
)

// classBytes holds every class byte, so that a response's Data needs no
// allocation (loadgen copies it where it keeps it).
var classBytes = func() (b [256]byte) {
	for i := range b {
		b[i] = byte(i)
	}
	return
}()

// classify gives a transport error its netsut category (netsut.Classify);
// started says the response had begun.
func classify(ctx context.Context, err error, started bool) error {
	return netsut.Classify(ctx, err, started)
}

// decodeError categorises a response that did not decode: a body that is
// not JSON is malformed_json, an error object server_error, anything else
// (tensors, outputs) protocol_error.
func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, errServer):
		return loadgen.WithCategory(netsut.CategoryServerError, err)
	case errors.As(err, &syn), errors.As(err, &typ), errors.Is(err, io.ErrUnexpectedEOF):
		return loadgen.WithCategory(netsut.CategoryMalformedJSON, err)
	}
	return loadgen.WithCategory(netsut.CategoryProtocol, err)
}
