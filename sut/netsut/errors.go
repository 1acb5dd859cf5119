package netsut

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"aimeter/loadgen"
)

// The error taxonomy: the categories network adapters give their sample
// errors (with loadgen.WithCategory or loadgen.WithCode), so that
// errors.json, records.csv, the console and the report group failures the
// same way whatever the protocol. The names are stable: scripts may match
// on them. An HTTP or gRPC failure also carries its code (ErrorInfo.Code,
// and for gRPC the code's name in ErrorInfo.CodeName), and errors.json
// groups by category and code.
const (
	// CategoryConnectionRefused: the server refused the connection (no
	// listener on the port: ECONNREFUSED).
	CategoryConnectionRefused = "connection_refused"
	// CategoryConnectionReset: the connection broke before a response came
	// (ECONNRESET, EPIPE, the server closing it without answering, an
	// HTTP/2 stream reset).
	CategoryConnectionReset = "connection_reset"
	// CategoryConnectTimeout: the connection could not be made in the
	// dialer's own time limit.
	CategoryConnectTimeout = "connect_timeout"
	// CategoryConnect: any other failure to connect (DNS, an unreachable
	// network).
	CategoryConnect = "connect_error"
	// CategoryTLS: the TLS handshake failed (a plain server, an untrusted
	// or mismatched certificate, a TLS alert).
	CategoryTLS = "tls"
	// CategoryHTTP4xx: the server answered with a 4xx status; the code is
	// kept (ErrorInfo.Code) and the message holds the start of the body.
	CategoryHTTP4xx = "http_4xx"
	// CategoryHTTP5xx: the server answered with a 5xx status (code kept).
	CategoryHTTP5xx = "http_5xx"
	// CategoryHTTPStatus: any other non-2xx status (1xx, 3xx; code kept).
	CategoryHTTPStatus = "http_status"
	// CategoryServerError: the server answered 2xx with an error object in
	// the body or in the stream (OpenAI's {"error": …}).
	CategoryServerError = "server_error"
	// CategoryRequestTimeout: no response (no status line) came before the
	// request's deadline (--request-timeout).
	CategoryRequestTimeout = "request_timeout"
	// CategoryStreamStalled: the response had started (the status line and
	// headers, perhaps part of the body) and then stopped until the
	// request's deadline.
	CategoryStreamStalled = "stream_stalled"
	// CategoryStreamTruncated: the response (an event stream, a body, a
	// gRPC stream) ended before its end marker ([DONE], the body's length,
	// the final response).
	CategoryStreamTruncated = "stream_truncated"
	// CategoryMalformedSSE: the event stream itself was broken (an event or
	// line beyond the size limit).
	CategoryMalformedSSE = "malformed_sse"
	// CategoryMalformedJSON: a body or an event's data was not the JSON
	// expected (a syntax error, a response without choices).
	CategoryMalformedJSON = "malformed_json"
	// CategoryUnexpectedContentType: the response could not be read and
	// its Content-Type was neither the event stream nor the JSON asked for
	// (an HTML page of a proxy, say).
	CategoryUnexpectedContentType = "unexpected_content_type"
	// CategoryMissingUsage: a response without the usage the run needs.
	// The OpenAI adapter counts these (Stats.MissingUsage) and falls back
	// to counting chunks rather than failing the sample; the name is kept
	// for scripts and for adapters that require usage.
	CategoryMissingUsage = "missing_usage"
	// CategoryGRPC: a gRPC call ended with a status other than OK (and not
	// a transport failure above); ErrorInfo.Code is the numeric code and
	// CodeName its name ("ResourceExhausted").
	CategoryGRPC = "grpc"
	// CategoryProtocol: any other violation of the protocol: an
	// inference response without the expected output or with tensor data
	// that does not decode, a malformed HTTP response, an unrecognised
	// transport error.
	CategoryProtocol = "protocol_error"
	// CategoryClient: the client itself failed (a panic, a request it could
	// not build, a request cancelled by the run).
	CategoryClient = "client_error"
)

// Categories lists the taxonomy in the order above.
var Categories = []string{
	CategoryConnectionRefused, CategoryConnectionReset, CategoryConnectTimeout, CategoryConnect,
	CategoryTLS, CategoryHTTP4xx, CategoryHTTP5xx, CategoryHTTPStatus, CategoryServerError,
	CategoryRequestTimeout, CategoryStreamStalled, CategoryStreamTruncated, CategoryMalformedSSE,
	CategoryMalformedJSON, CategoryUnexpectedContentType, CategoryMissingUsage, CategoryGRPC,
	CategoryProtocol, CategoryClient,
}

// HTTPCategory returns the category of a non-2xx HTTP status.
func HTTPCategory(status int) string {
	switch status / 100 {
	case 4:
		return CategoryHTTP4xx
	case 5:
		return CategoryHTTP5xx
	}
	return CategoryHTTPStatus
}

// HTTPError gives err the category of HTTP status code status, with the
// code kept for grouping (errors.json: "http_5xx", code 503).
func HTTPError(status int, err error) error {
	return loadgen.WithCode(HTTPCategory(status), status, "", err)
}

// GRPCError gives err the category grpc with the numeric status code and
// its name (codes.Code's String: "ResourceExhausted").
func GRPCError(code int, name string, err error) error {
	return loadgen.WithCode(CategoryGRPC, code, name, err)
}

// Classify gives a transport error (of dialling, sending the request or
// reading the response) its category and returns it wrapped; an error that
// already has one (loadgen.WithCategory) is returned as it is. started
// says the response had begun (its status line came): a deadline then
// stalled the response, and an EOF truncated it. ctx is the request's
// context; its deadline makes a timeout whatever the error says.
func Classify(ctx context.Context, err error, started bool) error {
	if err == nil {
		return nil
	}
	var c interface{ Category() string }
	if errors.As(err, &c) {
		return err
	}
	return loadgen.WithCategory(ClassOf(ctx, err, started), err)
}

// ClassOf returns the category Classify gives err.
func ClassOf(ctx context.Context, err error, started bool) string {
	if ctx != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				if started {
					return CategoryStreamStalled
				}
				return CategoryRequestTimeout
			}
			return CategoryClient
		}
	}
	var (
		op        *net.OpError
		dnsErr    *net.DNSError
		recErr    tls.RecordHeaderError
		alertErr  tls.AlertError
		certErr   *tls.CertificateVerificationError
		authErr   x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalidEr x509.CertificateInvalidError
	)
	isOp := errors.As(err, &op)
	switch {
	case errors.As(err, &recErr), errors.As(err, &alertErr), errors.As(err, &certErr),
		errors.As(err, &authErr), errors.As(err, &hostErr), errors.As(err, &invalidEr),
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return CategoryTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return CategoryConnectionRefused
	case isOp && op.Op == "dial" && (op.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)):
		return CategoryConnectTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		if started {
			return CategoryStreamTruncated
		}
		return CategoryConnectionReset
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if started {
			return CategoryStreamTruncated
		}
		return CategoryConnectionReset
	case errors.As(err, &dnsErr), isOp && op.Op == "dial":
		return CategoryConnect
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		if started {
			return CategoryStreamStalled
		}
		return CategoryRequestTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if started {
			return CategoryStreamStalled
		}
		return CategoryRequestTimeout
	}
	if m := err.Error(); strings.Contains(m, "stream error") || strings.Contains(m, "connection reset") ||
		strings.Contains(m, "server closed") || strings.Contains(m, "connection lost") {
		// HTTP/2 stream resets and GOAWAYs have unexported types.
		if started {
			return CategoryStreamTruncated
		}
		return CategoryConnectionReset
	}
	return CategoryProtocol
}
