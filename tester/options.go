package tester

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"aimeter/attest"
)

// ClientOptions are how a command reaches the service: the service's URL,
// the bearer token, the certificate to trust and the test item's
// configuration file, as a command line gives them.
type ClientOptions struct {
	// Server is the service's base URL, https://HOST:PORT; "" takes the
	// configuration file's.
	Server string
	// Token is the bearer token: the admin token or a client token.
	// Required.
	Token string
	// CAFile is a PEM certificate to trust for the service (its
	// self-signed tls/cert.pem); "" takes the configuration file's
	// certificate, else the system's roots.
	CAFile string
	// ConfigFile is the test item's configuration file (from a
	// registration); "" for none.
	ConfigFile string
}

// OptionError is a wrong or missing option of ClientOptions, of
// SigningKey or of LoadRegistration. Field names the option: "server",
// "token", "ca", "config", "key", "public-key" or "info".
type OptionError struct {
	// Field is the option.
	Field string
	// Value is the option's value where the message shows it; "" otherwise.
	Value string
	// Missing tells a required option that was not given; Err then says
	// what it is, or is nil.
	Missing bool
	// Err is what is wrong.
	Err error
}

func (e *OptionError) Error() string {
	if e.Missing {
		if e.Err == nil {
			return fmt.Sprintf("tester: %s: required", e.Field)
		}
		return fmt.Sprintf("tester: %s: required (%v)", e.Field, e.Err)
	}
	if e.Value != "" {
		return fmt.Sprintf("tester: %s %s: %v", e.Field, e.Value, e.Err)
	}
	return fmt.Sprintf("tester: %s: %v", e.Field, e.Err)
}

func (e *OptionError) Unwrap() error { return e.Err }

// ReadConfig reads a test item's configuration file; a file that is not
// one (not JSON, or another Format) is an error.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &OptionError{Field: "config", Err: err}
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil || cfg.Format != ConfigFormat {
		return nil, &OptionError{Field: "config", Value: path, Err: fmt.Errorf("not an aimeter test configuration (%s)", ConfigFormat)}
	}
	return &cfg, nil
}

// NewClient checks o, reads its files and makes the service's client. It
// returns the configuration file's contents too (nil without one). Every
// error is an *OptionError naming the option.
func NewClient(o ClientOptions) (*Client, *Config, error) {
	var cfg *Config
	var trust []byte
	if o.ConfigFile != "" {
		var err error
		if cfg, err = ReadConfig(o.ConfigFile); err != nil {
			return nil, nil, err
		}
		if o.Server == "" {
			o.Server = cfg.Server
		}
		trust = []byte(cfg.ServerCertificate)
	}
	if o.Server == "" {
		return nil, nil, &OptionError{Field: "server", Missing: true, Err: errors.New("the service's URL, or the configuration file that names it")}
	}
	if !strings.HasPrefix(o.Server, "https://") {
		return nil, nil, &OptionError{Field: "server", Value: o.Server, Err: errors.New("the service speaks HTTPS only (https://HOST:PORT)")}
	}
	if o.Token == "" {
		return nil, nil, &OptionError{Field: "token", Missing: true}
	}
	if o.CAFile != "" {
		b, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, nil, &OptionError{Field: "ca", Err: err}
		}
		trust = b
	}
	cl := &Client{BaseURL: o.Server, Token: o.Token}
	if len(trust) > 0 {
		hc, err := TrustPEM(trust)
		if err != nil {
			return nil, nil, &OptionError{Field: "ca", Err: err}
		}
		cl.HTTP = hc
	}
	return cl, cfg, nil
}

// DefaultKeyFile is the signing key SigningKey reads when none is named:
// the private key of attest.WriteKeyPair's default prefix, in the current
// directory.
const DefaultKeyFile = "aimeter-client.key"

// SigningKey reads the Ed25519 private key (PKCS #8 PEM) that signs the
// uploads from path; "" means DefaultKeyFile, which must then exist. Every
// error is an *OptionError with Field "key".
func SigningKey(path string) (ed25519.PrivateKey, error) {
	if path == "" {
		if _, err := os.Stat(DefaultKeyFile); err != nil {
			return nil, &OptionError{Field: "key", Missing: true, Err: errors.New("the private key registered with the test item; 'aimeter keygen' makes one")}
		}
		path = DefaultKeyFile
	}
	kb, err := os.ReadFile(path)
	if err != nil {
		return nil, &OptionError{Field: "key", Err: err}
	}
	key, err := attest.ParsePrivateKey(kb)
	if err != nil {
		return nil, &OptionError{Field: "key", Value: path, Err: err}
	}
	return key, nil
}

// TestItemOf returns the test item the client's token belongs to; with a
// configuration file (cfg not nil) that names another item, it returns an
// *OptionError with Field "token". A refusal of the service is a
// *RefusedError.
func (c *Client) TestItemOf(ctx context.Context, cfg *Config) (string, error) {
	v, err := c.Whoami(ctx)
	if err != nil {
		return "", err
	}
	if cfg != nil && cfg.TestID != v.ID {
		return "", &OptionError{Field: "token", Err: fmt.Errorf("belongs to test item %s; the configuration file is test item %s", v.ID, cfg.TestID)}
	}
	return v.ID, nil
}

// LoadRegistration puts the tested party's public key (PEM, required) and
// the test information (a JSON file; "" for none) into reg. Every error is
// an *OptionError with Field "public-key" or "info".
func LoadRegistration(reg *Registration, publicKeyFile, infoFile string) error {
	if publicKeyFile == "" {
		return &OptionError{Field: "public-key", Missing: true, Err: errors.New("the tested party's PREFIX.pub from 'aimeter keygen'")}
	}
	pb, err := os.ReadFile(publicKeyFile)
	if err != nil {
		return &OptionError{Field: "public-key", Err: err}
	}
	reg.PublicKey = string(pb)
	if infoFile != "" {
		ib, err := os.ReadFile(infoFile)
		if err != nil {
			return &OptionError{Field: "info", Err: err}
		}
		if !json.Valid(ib) {
			return &OptionError{Field: "info", Value: infoFile, Err: errors.New("not JSON")}
		}
		reg.Info = ib
	}
	return nil
}

// WriteConfig writes a test item's configuration file to path, indented
// JSON; "" means TESTID.json in the current directory. It returns the path
// written.
func WriteConfig(path string, cfg Config) (string, error) {
	if path == "" {
		path = cfg.TestID + ".json"
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}
