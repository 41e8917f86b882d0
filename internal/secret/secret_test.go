package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	k8syaml "sigs.k8s.io/yaml"
)

const pw = "Pl4nted-S3cret-9q"

// No fmt verb, encoder or logger shows a Value's text or a DSN's password; only
// Reveal does.
func TestNothingShowsTheSecret(t *testing.T) {
	v := newValue(pw)
	d := newDSN("postgres://alice:" + pw + "@db.example:5432/app?sslmode=disable")
	type holder struct {
		V     value
		D     DSN
		inner value // unexported: fmt cannot call its methods
		dsn   DSN
	}
	h := holder{V: v, D: d, inner: v, dsn: d}
	var outs []string
	for _, verb := range []string{"%v", "%s", "%q", "%+v", "%#v", "%x", "%X", "%d", "%10s", "%-8v", "%T"} {
		outs = append(outs, fmt.Sprintf(verb, v), fmt.Sprintf(verb, d), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &h), fmt.Sprintf(verb, []any{v, d}), fmt.Sprintf(verb, map[string]value{"k": v}))
	}
	outs = append(outs, fmt.Sprint(v, d, h), fmt.Sprintln(v, d), fmt.Errorf("connecting to %v: %w", d, errors.New("refused")).Error())
	for _, x := range []any{v, d, h, &h, map[string]any{"v": v, "d": d}} {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		y, err := yaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		k, err := k8syaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b), string(y), string(k))
	}
	var logs bytes.Buffer
	for _, hd := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(hd)
		l.Info("x", "v", v, "d", d, "h", h)
		l.Info("y", slog.Any("v", v), slog.Group("g", "d", d))
	}
	outs = append(outs, logs.String())
	for _, o := range outs {
		if strings.Contains(o, pw) || strings.Contains(o, "S3cret") {
			t.Errorf("the secret shows: %s", o)
		}
	}
	if got := fmt.Sprintf("%v|%s|%q|%#v", v, v, v, v); got != `xxxxx|xxxxx|"xxxxx"|"xxxxx"` {
		t.Errorf("Value formats as %s", got)
	}
	if got := fmt.Sprint(d); got != "postgres://alice:xxxxx@db.example:5432/app?sslmode=disable" {
		t.Errorf("DSN shows as %s", got)
	}
	if v.reveal() != pw || !strings.Contains(d.Reveal(), pw) {
		t.Error("Reveal lost the secret")
	}
	if !(value{}).IsZero() || (value{}).reveal() != "" || v.IsZero() {
		t.Error("IsZero")
	}
}

func TestMaskDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u:p%40ss@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"postgresql://u@h/db?password=p&sslmode=disable", "postgresql://u@h/db?password=xxxxx&sslmode=disable"},
		{"postgres://u:a/b@c@h/db?sslpassword=k", "postgres://u:xxxxx@h/db?sslpassword=xxxxx"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"mysql://root:pw@127.0.0.1:3306/test?socket=/x", "mysql://root:xxxxx@127.0.0.1:3306/test?socket=/x"},
		{"redis://:pw@h:6379/0", "redis://:xxxxx@h:6379/0"},
		{"rediss://default:pw@h/0", "rediss://default:xxxxx@h/0"},
		{"host=h password=secret dbname=d", "host=h password=xxxxx dbname=d"},
		{"host=h password = 'a b\\' c' dbname=d", "host=h password = xxxxx dbname=d"},
		{"host=h sslpassword=k dbname=d", "host=h sslpassword=xxxxx dbname=d"},
		{"root:pw@tcp(h:3306)/db", "root:xxxxx@tcp(h:3306)/db"},
		{"/var/lib/fathom/fathom.db", "/var/lib/fathom/fathom.db"},
		{"sqlite:/tmp/a:b@c.db", "sqlite:/tmp/a:b@c.db"},
		{"service=prod", "service=prod"},
	} {
		if got := MaskDSN(c.in); got != c.want {
			t.Errorf("MaskDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzMaskDSN(f *testing.F) {
	f.Add("postgres://u:secretpw@h/db")
	f.Add("host=h password=secretpw")
	f.Add("root:secretpw@tcp(h)/db")
	f.Fuzz(func(t *testing.T, s string) {
		m := MaskDSN(s)
		if strings.Contains(s, "secretpw") && strings.Contains(m, "secretpw") && !strings.Contains(s, "xxxxx") {
			// Only forms MaskDSN knows are masked; check those.
			if strings.HasPrefix(s, "postgres://u:secretpw@") || strings.HasPrefix(s, "host=h password=secretpw") {
				t.Errorf("MaskDSN(%q) = %q", s, m)
			}
		}
	})
}
