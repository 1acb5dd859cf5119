package tester

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/attest"
)

// optionField returns the Field of err's *OptionError, and whether it is
// one of a missing option.
func optionField(t *testing.T, err error) (string, bool) {
	t.Helper()
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("error %v is not an *OptionError", err)
	}
	return oe.Field, oe.Missing
}

func TestNewClient(t *testing.T) {
	dir := t.TempDir()
	cfgFile, err := WriteConfig(filepath.Join(dir, "item.json"), Config{Format: ConfigFormat, TestID: "T1", Server: "https://tester.example:8443"})
	if err != nil {
		t.Fatal(err)
	}
	notConfig := filepath.Join(dir, "other.json")
	if err := os.WriteFile(notConfig, []byte(`{"format":"something-else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("no certificate"), 0o644); err != nil {
		t.Fatal(err)
	}

	cl, cfg, err := NewClient(ClientOptions{Token: "tok", ConfigFile: cfgFile})
	if err != nil {
		t.Fatal(err)
	}
	if cl.BaseURL != "https://tester.example:8443" || cl.Token != "tok" || cfg == nil || cfg.TestID != "T1" {
		t.Errorf("client %+v, config %+v: want the configuration file's server and test item", cl, cfg)
	}
	cl, _, err = NewClient(ClientOptions{Server: "https://other.example", Token: "tok", ConfigFile: cfgFile})
	if err != nil || cl.BaseURL != "https://other.example" {
		t.Errorf("an explicit server must win over the configuration file's: %v, %v", cl, err)
	}

	for _, c := range []struct {
		name    string
		o       ClientOptions
		field   string
		missing bool
	}{
		{"no server", ClientOptions{Token: "tok"}, "server", true},
		{"plain HTTP", ClientOptions{Server: "http://tester.example", Token: "tok"}, "server", false},
		{"no token", ClientOptions{Server: "https://tester.example"}, "token", true},
		{"no config file", ClientOptions{Token: "tok", ConfigFile: filepath.Join(dir, "absent.json")}, "config", false},
		{"not a config file", ClientOptions{Token: "tok", ConfigFile: notConfig}, "config", false},
		{"no CA file", ClientOptions{Server: "https://tester.example", Token: "tok", CAFile: filepath.Join(dir, "absent.pem")}, "ca", false},
		{"CA not PEM", ClientOptions{Server: "https://tester.example", Token: "tok", CAFile: notPEM}, "ca", false},
	} {
		_, _, err := NewClient(c.o)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if f, m := optionField(t, err); f != c.field || m != c.missing {
			t.Errorf("%s: field %q missing %v, want %q %v (%v)", c.name, f, m, c.field, c.missing, err)
		}
	}
}

func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, err := SigningKey(""); err == nil {
		t.Fatal("no key named and no default key file: no error")
	} else if f, m := optionField(t, err); f != "key" || !m {
		t.Errorf("field %q missing %v, want key, missing", f, m)
	}
	pub, err := attest.WriteKeyPair(strings.TrimSuffix(DefaultKeyFile, ".key"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := SigningKey("")
	if err != nil || !pub.Equal(key.Public()) {
		t.Fatalf("the default key file: key %v, error %v", key, err)
	}
	if _, err := SigningKey(strings.TrimSuffix(DefaultKeyFile, ".key") + ".pub"); err == nil {
		t.Error("a public key read as the private key: no error")
	} else if f, m := optionField(t, err); f != "key" || m {
		t.Errorf("field %q missing %v, want key", f, m)
	}
}

func TestLoadRegistration(t *testing.T) {
	dir := t.TempDir()
	pubFile := filepath.Join(dir, "lab.pub")
	info := filepath.Join(dir, "info.json")
	bad := filepath.Join(dir, "bad.json")
	for name, data := range map[string]string{pubFile: "PEM", info: `{"model":"m"}`, bad: "{"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var reg Registration
	if err := LoadRegistration(&reg, pubFile, info); err != nil {
		t.Fatal(err)
	}
	if reg.PublicKey != "PEM" || string(reg.Info) != `{"model":"m"}` {
		t.Errorf("registration %+v", reg)
	}
	for _, c := range []struct {
		pub, info, field string
	}{{"", "", "public-key"}, {filepath.Join(dir, "absent.pub"), "", "public-key"}, {pubFile, bad, "info"}, {pubFile, filepath.Join(dir, "absent.json"), "info"}} {
		err := LoadRegistration(&Registration{}, c.pub, c.info)
		if err == nil {
			t.Errorf("%q, %q: no error", c.pub, c.info)
		} else if f, _ := optionField(t, err); f != c.field {
			t.Errorf("%q, %q: field %q, want %q", c.pub, c.info, f, c.field)
		}
	}
}
