// Package attest signs a run bundle and verifies the signature offline.
//
// The signed object is an in-toto Statement v1 (https://in-toto.io/Statement/v1):
// its subjects are every file of the bundle's directory, manifest.json
// included, each with its SHA-256 digest; its predicate (PredicateType) is
// the run's verdict and headline metrics as result.json states them. The
// Statement travels in a DSSE envelope (payload type
// application/vnd.in-toto+json), signed with an Ed25519 key over DSSE's
// pre-authentication encoding (PAE).
//
// Verify needs only the envelope, the signer's public key and the bundle's
// directory: it checks the signature, every digest against the files, that
// no file is missing and no file is extra, that the bundle's own manifest
// agrees, and that the predicate is the one result.json gives. This is the
// integrity check of an upload (GB-6.7.2-c, GB-6.7.2-g); whether the claimed
// metrics follow from the raw records is a separate question, answered by
// package recompute.
package attest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"aimeter/bundle"
	"aimeter/derived"
)

const (
	// PayloadType is the DSSE payload type of an in-toto Statement.
	PayloadType = "application/vnd.in-toto+json"
	// StatementType is the _type of an in-toto Statement v1.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType names aimeter's predicate: the run's verdict and
	// headline metrics (see Predicate).
	PredicateType = "https://aimeter.dev/attestation/run/v1"
)

// Sentinel errors that Verify wraps; test with errors.Is.
var (
	// ErrMalformed: the envelope or its Statement cannot be decoded, or is
	// not an aimeter run Statement.
	ErrMalformed = errors.New("malformed envelope")
	// ErrSignature: no signature of the envelope verifies with the key.
	ErrSignature = errors.New("signature does not verify")
	// ErrDigest: a file's SHA-256 is not the one the Statement names.
	ErrDigest = errors.New("file digest differs")
	// ErrMissing: a file the Statement names is not in the directory.
	ErrMissing = errors.New("file missing")
	// ErrExtra: the directory holds a file the Statement does not name.
	ErrExtra = errors.New("file not signed")
	// ErrPredicate: the signed predicate is not what result.json says.
	ErrPredicate = errors.New("predicate differs from result.json")
)

// Statement is an in-toto Statement v1 about one bundle.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

// Subject is one file of the bundle: its slash-separated path inside the
// bundle's directory and its digests ("sha256": lowercase hex).
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Predicate is what the run claims: its verdict and headline metrics, copied
// from result.json, and the bundle's generator from manifest.json.
type Predicate struct {
	// Generator is the manifest's generator, "aimeter <version>".
	Generator string `json:"generator"`
	// Verdict is result.json's verdict_word (VALID, INVALID, PASS, FAIL,
	// "-"); "" for a bundle without result.json (a training run).
	Verdict string `json:"verdict"`
	// Scenario and Mode are LoadGen's, from result.json.
	Scenario string `json:"scenario,omitempty"`
	Mode     string `json:"mode,omitempty"`
	// Headline is the run's main figure; nil when result.json has none.
	Headline *derived.Figure `json:"headline,omitempty"`
	// Metrics are the headline sample counts and latency percentiles, keyed
	// as in result.json ("samples.ok", "latency_ns.p99", ...).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Envelope is a DSSE envelope (the JSON form the DSSE specification
// recommends).
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     string      `json:"payload"` // base64 of the serialized Statement
	Signatures  []Signature `json:"signatures"`
}

// Signature is one signature of an Envelope. KeyID is a hint only (KeyID of
// the public key), never used to decide anything.
type Signature struct {
	KeyID string `json:"keyid,omitempty"`
	Sig   string `json:"sig"` // base64
}

// PAE is DSSE's pre-authentication encoding of a payload type and body:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, the lengths in ASCII
// decimal without leading zeros. The signature is over these bytes.
func PAE(payloadType string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(body)))
	b.WriteByte(' ')
	b.Write(body)
	return b.Bytes()
}

// StatementOf makes the Statement of the bundle in dir: it checks the
// bundle's manifest (every file it lists has its digest, and the directory
// holds no other file), then lists every file with its SHA-256 and takes the
// predicate from result.json and manifest.json.
func StatementOf(dir string) (*Statement, error) {
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := m.Verify(dir); err != nil {
		return nil, err
	}
	files, err := hashDir(dir)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{bundle.ManifestFile: true}
	for _, e := range m.Files {
		listed[e.Name] = true
	}
	st := &Statement{Type: StatementType, PredicateType: PredicateType}
	for _, f := range files {
		if !listed[f.name] {
			return nil, fmt.Errorf("%s: %w: %s is in the directory but not in %s", dir, ErrExtra, f.name, bundle.ManifestFile)
		}
		st.Subject = append(st.Subject, Subject{Name: f.name, Digest: map[string]string{"sha256": f.sha256}})
	}
	p, err := predicateOf(dir, m)
	if err != nil {
		return nil, err
	}
	st.Predicate = *p
	return st, nil
}

// Sign makes the Statement of the bundle in dir (StatementOf) and signs it.
func Sign(dir string, key ed25519.PrivateKey) (*Envelope, error) {
	st, err := StatementOf(dir)
	if err != nil {
		return nil, err
	}
	return SignStatement(st, key)
}

// SignStatement serializes st and signs it into a DSSE envelope.
func SignStatement(st *Statement, key ed25519.PrivateKey) (*Envelope, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("attest: Ed25519 private key has %d bytes, want %d", len(key), ed25519.PrivateKeySize)
	}
	body, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	sig := ed25519.Sign(key, PAE(PayloadType, body))
	return &Envelope{
		PayloadType: PayloadType,
		Payload:     base64.StdEncoding.EncodeToString(body),
		Signatures: []Signature{{
			KeyID: KeyID(key.Public().(ed25519.PublicKey)),
			Sig:   base64.StdEncoding.EncodeToString(sig),
		}},
	}, nil
}

// ParseEnvelope decodes a DSSE envelope from JSON; it checks the form only,
// not the signature.
func ParseEnvelope(data []byte) (*Envelope, error) {
	var e Envelope
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the envelope", ErrMalformed)
	}
	if e.PayloadType == "" {
		return nil, fmt.Errorf("%w: payloadType is empty", ErrMalformed)
	}
	if len(e.Signatures) == 0 {
		return nil, fmt.Errorf("%w: signatures is empty", ErrMalformed)
	}
	return &e, nil
}

// Marshal returns the envelope as indented JSON.
func (e *Envelope) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// VerifySignature checks that one of e's signatures verifies with pub over
// the PAE of its payload, that the payload type is PayloadType and that the
// payload is an aimeter run Statement, which it returns. It looks at no file.
func VerifySignature(e *Envelope, pub ed25519.PublicKey) (*Statement, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: no envelope", ErrMalformed)
	}
	if len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("attest: Ed25519 public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	body, err := decodeBase64(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	pae := PAE(e.PayloadType, body)
	ok := false
	for _, s := range e.Signatures {
		sig, err := decodeBase64(s.Sig)
		if err != nil {
			continue
		}
		if ed25519.Verify(pub, pae, sig) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w with the key %s", ErrSignature, KeyID(pub))
	}
	if e.PayloadType != PayloadType {
		return nil, fmt.Errorf("%w: payloadType %q, want %q", ErrMalformed, e.PayloadType, PayloadType)
	}
	var st Statement
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%w: statement: %v", ErrMalformed, err)
	}
	if st.Type != StatementType {
		return nil, fmt.Errorf("%w: _type %q, want %q", ErrMalformed, st.Type, StatementType)
	}
	if st.PredicateType != PredicateType {
		return nil, fmt.Errorf("%w: predicateType %q, want %q", ErrMalformed, st.PredicateType, PredicateType)
	}
	if len(st.Subject) == 0 {
		return nil, fmt.Errorf("%w: the statement has no subject", ErrMalformed)
	}
	return &st, nil
}

// Verify checks the envelope against the bundle in dir, offline: the
// signature with pub (VerifySignature), every subject's SHA-256 against its
// file, no subject missing from dir and no file of dir left out, the
// bundle's manifest against its files, and the predicate against
// result.json. It returns the verified Statement. The error wraps one of
// ErrMalformed, ErrSignature, ErrDigest, ErrMissing, ErrExtra, ErrPredicate
// (or is a *bundle.DigestError for a manifest that disagrees with itself).
func Verify(e *Envelope, pub ed25519.PublicKey, dir string) (*Statement, error) {
	st, err := VerifySignature(e, pub)
	if err != nil {
		return nil, err
	}
	want := map[string]string{}
	for _, s := range st.Subject {
		d := s.Digest["sha256"]
		if d == "" {
			return nil, fmt.Errorf("%w: subject %q has no sha256 digest", ErrMalformed, s.Name)
		}
		if _, dup := want[s.Name]; dup {
			return nil, fmt.Errorf("%w: subject %q is named twice", ErrMalformed, s.Name)
		}
		want[s.Name] = d
	}
	files, err := hashDir(dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range files {
		d, ok := want[f.name]
		if !ok {
			return nil, fmt.Errorf("%w: %s is in the bundle but not in the signed statement", ErrExtra, f.name)
		}
		if d != f.sha256 {
			return nil, fmt.Errorf("%w: %s has SHA-256 %s, the signed statement says %s", ErrDigest, f.name, f.sha256, d)
		}
		seen[f.name] = true
	}
	for _, s := range st.Subject {
		if !seen[s.Name] {
			return nil, fmt.Errorf("%w: %s is in the signed statement but not in the bundle", ErrMissing, s.Name)
		}
	}
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := m.Verify(dir); err != nil {
		return nil, err
	}
	p, err := predicateOf(dir, m)
	if err != nil {
		return nil, err
	}
	if !samePredicate(p, &st.Predicate) {
		a, _ := json.Marshal(st.Predicate)
		b, _ := json.Marshal(p)
		return nil, fmt.Errorf("%w: signed %s, result.json gives %s", ErrPredicate, a, b)
	}
	return st, nil
}

func samePredicate(a, b *Predicate) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// KeyID is a short name of a public key: the first 16 hex digits of the
// SHA-256 of its PKIX (DER) encoding.
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:8])
}

// GenerateKey makes a new Ed25519 key pair from crypto/rand.
func GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

// MarshalPrivateKey encodes key as a PEM "PRIVATE KEY" block (PKCS #8).
func MarshalPrivateKey(key ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// MarshalPublicKey encodes pub as a PEM "PUBLIC KEY" block (PKIX).
func MarshalPublicKey(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePrivateKey decodes a PEM "PRIVATE KEY" block (PKCS #8) holding an
// Ed25519 key.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	blk, rest := pem.Decode(data)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("attest: no PEM PRIVATE KEY block (PKCS #8) in the key file")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("attest: data after the PEM PRIVATE KEY block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("attest: private key: %w", err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("attest: private key is %T, want Ed25519", k)
	}
	return ek, nil
}

// ParsePublicKey decodes a PEM "PUBLIC KEY" block (PKIX) holding an Ed25519
// key.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	blk, rest := pem.Decode(data)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New("attest: no PEM PUBLIC KEY block (PKIX) in the key")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("attest: data after the PEM PUBLIC KEY block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("attest: public key: %w", err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("attest: public key is %T, want Ed25519", k)
	}
	return ek, nil
}

// WriteKeyPair generates a key pair and writes it to prefix+".key" (PKCS #8
// PEM, mode 0600) and prefix+".pub" (PKIX PEM, mode 0644). It refuses to
// overwrite an existing file.
func WriteKeyPair(prefix string) (ed25519.PublicKey, error) {
	pub, key, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	kp, err := MarshalPrivateKey(key)
	if err != nil {
		return nil, err
	}
	pp, err := MarshalPublicKey(pub)
	if err != nil {
		return nil, err
	}
	if err := writeNew(prefix+".key", kp, 0o600); err != nil {
		return nil, err
	}
	if err := writeNew(prefix+".pub", pp, 0o644); err != nil {
		os.Remove(prefix + ".key")
		return nil, err
	}
	return pub, nil
}

func writeNew(name string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	return f.Close()
}

func decodeBase64(s string) ([]byte, error) {
	// DSSE: verifiers accept standard and URL-safe base64.
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	if b, err := base64.URLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

type fileDigest struct{ name, sha256 string }

// hashDir lists every file under dir (slash-separated relative names,
// sorted) with its SHA-256. Anything but a regular file or a directory (a
// symbolic link, a device) is an error: a bundle holds none.
func hashDir(dir string) ([]fileDigest, error) {
	var out []fileDigest
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrExtra, rel)
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		out = append(out, fileDigest{rel, hex.EncodeToString(h.Sum(nil))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b fileDigest) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	return out, nil
}
