package tester

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files of the self-signed certificate in the data directory.
const (
	SelfSignedCertFile = "tls/cert.pem"
	SelfSignedKeyFile  = "tls/key.pem"
)

// SelfSignedValidity is how long a self-signed certificate is valid.
const SelfSignedValidity = 365 * 24 * time.Hour

// TLSConfig returns the server's TLS configuration: the certificate and key
// files when given (both or neither), else the self-signed certificate in
// dataDir, made on first start for localhost, 127.0.0.1, ::1, the host's
// name and the extra hosts (names or IP addresses). created says whether it
// was made now.
func TLSConfig(certFile, keyFile, dataDir string, hosts []string) (cfg *tls.Config, created bool, err error) {
	if (certFile == "") != (keyFile == "") {
		return nil, false, errors.New("server: give both --tls-cert and --tls-key, or neither for a self-signed certificate")
	}
	if certFile == "" {
		certFile = filepath.Join(dataDir, filepath.FromSlash(SelfSignedCertFile))
		keyFile = filepath.Join(dataDir, filepath.FromSlash(SelfSignedKeyFile))
		if _, err := os.Stat(certFile); errors.Is(err, fs.ErrNotExist) {
			if err := writeSelfSigned(certFile, keyFile, hosts); err != nil {
				return nil, false, err
			}
			created = true
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, false, fmt.Errorf("server: TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, created, nil
}

// readSelfSigned returns the PEM of dataDir's self-signed certificate.
func readSelfSigned(dataDir string) ([]byte, error) {
	return os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(SelfSignedCertFile)))
}

func writeSelfSigned(certFile, keyFile string, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "aimeter server (self-signed)", Organization: []string{"aimeter"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(SelfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if h, err := os.Hostname(); err == nil && h != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, h)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}
