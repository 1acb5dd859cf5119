package attest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/internal/bundletest"
)

// TestPAESpecVector checks PAE against the DSSE specification's own example
// (protocol.md, "Test Vectors"): the exact bytes, and the spec's ECDSA P-256
// signature over them, which verifies only if our bytes are the spec's.
func TestPAESpecVector(t *testing.T) {
	got := PAE("http://example.com/HelloWorld", []byte("hello world"))
	want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"
	if string(got) != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
	x, _ := new(big.Int).SetString("46950820868899156662930047687818585632848591499744589407958293238635476079160", 10)
	y, _ := new(big.Int).SetString("5640078356564379163099075877009565129882514886557779369047442380624545832820", 10)
	raw := append([]byte{4}, x.FillBytes(make([]byte, 32))...)
	raw = append(raw, y.FillBytes(make([]byte, 32))...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString("A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA==")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(got)
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, h[:], r, s) {
		t.Fatal("the DSSE specification's signature does not verify over our PAE bytes")
	}
	// Lengths are bytes, not runes, in decimal without leading zeros.
	if got := string(PAE("t", []byte("é"))); got != "DSSEv1 1 t 2 é" {
		t.Errorf("PAE of a two-byte rune = %q", got)
	}
	if got := string(PAE("", nil)); got != "DSSEv1 0  0 " {
		t.Errorf("PAE of empties = %q", got)
	}
}

func runBundle(t *testing.T) string { return bundletest.Copy(t, bundletest.MLPerf) }

func TestMain(m *testing.M) {
	code := m.Run()
	bundletest.Cleanup()
	os.Exit(code)
}

func mustKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub, key
}

func TestSignVerify(t *testing.T) {
	dir := runBundle(t)
	pub, key := mustKey(t)
	env, err := Sign(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env2, err := ParseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Verify(env2, pub, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Type != StatementType || st.PredicateType != PredicateType || env.PayloadType != PayloadType {
		t.Errorf("types: %q %q %q", st.Type, st.PredicateType, env.PayloadType)
	}
	if st.Predicate.Verdict == "" || st.Predicate.Headline == nil || st.Predicate.Metrics["latency_ns.p99"] <= 0 {
		t.Errorf("predicate = %+v", st.Predicate)
	}
	names := map[string]bool{}
	for _, s := range st.Subject {
		names[s.Name] = true
	}
	for _, n := range []string{bundle.ManifestFile, "records.parquet", bundle.ResultFile, bundle.SettingsFile} {
		if !names[n] {
			t.Errorf("subject %s missing from %v", n, names)
		}
	}
}

// TestTampering refuses every way of changing a signed bundle or its
// envelope; each row fails if its protection is removed.
func TestTampering(t *testing.T) {
	pub, key := mustKey(t)
	otherPub, otherKey := mustKey(t)
	_ = otherPub
	flip := func(t *testing.T, dir, name string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x01
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// editResult changes the claimed p99 in result.json and makes the
	// manifest agree, as a tested party rewriting its own bundle would.
	editResult := func(t *testing.T, dir string) {
		p := filepath.Join(dir, bundle.ResultFile)
		b, _ := os.ReadFile(p)
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		r["latency_ns"].(map[string]any)["p99"] = 1.0
		nb, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(p, nb, 0o644); err != nil {
			t.Fatal(err)
		}
		fixManifest(t, dir)
	}
	for _, tc := range []struct {
		name string
		// change alters the bundle after it was signed with key and
		// returns the envelope to verify (nil: the original one).
		change func(t *testing.T, dir string, env *Envelope) *Envelope
		want   error
	}{
		{"a flipped byte in the records breaks its digest", func(t *testing.T, dir string, _ *Envelope) *Envelope {
			flip(t, dir, "records.parquet")
			return nil
		}, ErrDigest},
		{"a claimed metric edited and re-signed with another key", func(t *testing.T, dir string, _ *Envelope) *Envelope {
			editResult(t, dir)
			e, err := Sign(dir, otherKey)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}, ErrSignature},
		{"a claimed metric edited, the old envelope kept", func(t *testing.T, dir string, _ *Envelope) *Envelope {
			editResult(t, dir)
			return nil
		}, ErrDigest},
		{"the right bundle verified with a wrong key", func(t *testing.T, dir string, env *Envelope) *Envelope {
			env.Signatures[0].KeyID = KeyID(otherPub) // a hint only
			e, _ := Sign(dir, otherKey)
			return e
		}, ErrSignature},
		{"a file added after signing", func(t *testing.T, dir string, _ *Envelope) *Envelope {
			os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o644)
			return nil
		}, ErrExtra},
		{"a file removed after signing", func(t *testing.T, dir string, _ *Envelope) *Envelope {
			os.Remove(filepath.Join(dir, "report.html"))
			return nil
		}, ErrMissing},
		{"the payload type changed", func(t *testing.T, dir string, env *Envelope) *Envelope {
			env.PayloadType = "application/json"
			return env
		}, ErrSignature},
		{"a subject's digest edited in the payload", func(t *testing.T, dir string, env *Envelope) *Envelope {
			body, _ := base64.StdEncoding.DecodeString(env.Payload)
			body = []byte(strings.Replace(string(body), `"sha256":"`, `"sha256":"0`, 1))
			env.Payload = base64.StdEncoding.EncodeToString(body)
			return env
		}, ErrSignature},
		{"a predicate that result.json does not state, signed with the right key", func(t *testing.T, dir string, _ *Envelope) *Envelope {
			st, err := StatementOf(dir)
			if err != nil {
				t.Fatal(err)
			}
			st.Predicate.Metrics["latency_ns.p99"] = 1
			e, err := SignStatement(st, key)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}, ErrPredicate},
		{"a signature of the right length but wrong bytes", func(t *testing.T, dir string, env *Envelope) *Envelope {
			sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
			sig[0] ^= 0x80
			env.Signatures[0].Sig = base64.StdEncoding.EncodeToString(sig)
			return env
		}, ErrSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := runBundle(t)
			env, err := Sign(dir, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(env, pub, dir); err != nil {
				t.Fatalf("untouched bundle: %v", err)
			}
			if e := tc.change(t, dir, env); e != nil {
				env = e
			}
			_, err = Verify(env, pub, dir)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// fixManifest rewrites manifest.json with the digests the files have now.
func fixManifest(t *testing.T, dir string) {
	t.Helper()
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Name)))
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		m.Files[i].Bytes = int64(len(b))
		m.Files[i].SHA256 = hexString(s[:])
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestTruncatedEnvelope(t *testing.T) {
	dir := runBundle(t)
	pub, key := mustKey(t)
	env, err := Sign(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := env.Marshal()
	for _, n := range []int{0, 1, len(data) / 3, len(data) / 2, len(data) - 3} {
		e, err := ParseEnvelope(data[:n])
		if err == nil {
			_, err = Verify(e, pub, dir)
		}
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrSignature) {
			t.Errorf("envelope cut at %d of %d bytes: %v, want a refusal", n, len(data), err)
		}
	}
}

// TestSignRefusesTamperedBundle: a bundle whose files disagree with its own
// manifest is not signed.
func TestSignRefusesTamperedBundle(t *testing.T) {
	dir := runBundle(t)
	_, key := mustKey(t)
	b, _ := os.ReadFile(filepath.Join(dir, "settings.json"))
	os.WriteFile(filepath.Join(dir, "settings.json"), append(b, ' '), 0o644)
	var de *bundle.DigestError
	if _, err := Sign(dir, key); !errors.As(err, &de) {
		t.Fatalf("Sign = %v, want a *bundle.DigestError", err)
	}
}

func TestKeyFiles(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "client")
	pub, err := WriteKeyPair(prefix)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := os.ReadFile(prefix + ".key")
	pb, _ := os.ReadFile(prefix + ".pub")
	key, err := ParsePrivateKey(kb)
	if err != nil {
		t.Fatal(err)
	}
	pub2, err := ParsePublicKey(pb)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(pub2) || !key.Public().(ed25519.PublicKey).Equal(pub) {
		t.Fatal("key files do not round-trip")
	}
	if fi, _ := os.Stat(prefix + ".key"); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := WriteKeyPair(prefix); err == nil {
		t.Error("WriteKeyPair overwrote an existing key")
	}
	for _, tc := range []struct {
		name string
		data []byte
		pub  bool
	}{
		{"empty private key file", nil, false},
		{"a public key given as private", pb, false},
		{"a private key given as public", kb, true},
		{"garbage after the block", append(append([]byte{}, pb...), "junk"...), true},
		{"a PEM block that holds no DER", []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), true},
	} {
		var err error
		if tc.pub {
			_, err = ParsePublicKey(tc.data)
		} else {
			_, err = ParsePrivateKey(tc.data)
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// FuzzParseEnvelope: no input makes ParseEnvelope or VerifySignature panic,
// and nothing but a real signature verifies.
func FuzzParseEnvelope(f *testing.F) {
	pub, key, _ := GenerateKey()
	st := &Statement{Type: StatementType, PredicateType: PredicateType, Subject: []Subject{{Name: "a", Digest: map[string]string{"sha256": "00"}}}}
	env, _ := SignStatement(st, key)
	good, _ := env.Marshal()
	f.Add(good)
	f.Add([]byte(`{"payloadType":"x","payload":"","signatures":[{"sig":""}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseEnvelope(data)
		if err != nil {
			return
		}
		if _, err := VerifySignature(e, pub); err == nil {
			body, _ := decodeBase64(e.Payload)
			if string(body) != string(mustBody(env)) {
				t.Fatalf("a different payload verified: %q", body)
			}
		}
	})
}

func mustBody(e *Envelope) []byte {
	b, _ := base64.StdEncoding.DecodeString(e.Payload)
	return b
}
