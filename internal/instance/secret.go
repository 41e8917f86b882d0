package instance

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"

	"github.com/fathom-lab/fathom/internal/safefile"
)

// A throwaway server accepts only fathom's own connections: its superuser has a
// generated password (PostgreSQL: scram-sha-256 for local and host connections;
// MariaDB: root@localhost and root@127.0.0.1 only, no anonymous users), kept in a file
// in the instance directory that only fathom's user can read. The file is in the
// format the server's own clients read, so a DSN can name it instead of holding the
// password: PostgreSQL's passfile (.pgpass format) and MariaDB's defaults-file
// ([client] section). The servers listen on 127.0.0.1 only, and their sockets are in
// the instance directory (mode 0700).

// Each driver names its secret file and its format (Driver.SecretFile, Secret).

// NewPassword is a random password of 32 hex digits (128 bits): no character any
// client, URL or option file needs to escape.
func NewPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// SecretFile is the file that holds the superuser's password ("" when the instance was
// created by a fathom that set none).
func (i *Instance) SecretFile() string {
	p := filepath.Join(i.Path, i.Driver().SecretFile())
	if _, err := os.Lstat(p); err != nil {
		return ""
	}
	return p
}

// Password is the superuser's password, read from SecretFile ("" when there is none).
// It is for passing to clients that cannot read the file; never print it.
func (i *Instance) Password() string {
	p := i.SecretFile()
	if p == "" || safefile.Check(p) != nil {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return i.Driver().Password(string(b))
}

// WriteSecret writes the client's secret file, private to fathom's user.
func (i *Instance) WriteSecret(password string) error {
	d := i.Driver()
	return safefile.WriteFile(filepath.Join(i.Path, d.SecretFile()), []byte(d.Secret(i, password)))
}

// refreshSecret rewrites the secret file when what it should say has changed: the
// client file names the instance's port and socket (MariaDB's client.cnf), which move
// with NewPort.
func (i *Instance) refreshSecret() error {
	p := i.SecretFile()
	if p == "" {
		return nil
	}
	if err := safefile.Check(p); err != nil {
		return err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	d := i.Driver()
	pw := d.Password(string(b))
	if pw == "" || d.Secret(i, pw) == string(b) {
		return nil
	}
	return i.WriteSecret(pw)
}

// WriteServerFile writes a file the server's account must read (initdb's password
// file, MariaDB's init file): private to that account.
func (i *Instance) WriteServerFile(name, text string) (string, error) {
	p := filepath.Join(i.Path, name)
	if err := safefile.WriteFile(p, []byte(text), baseOwners()...); err != nil {
		return "", err
	}
	if err := i.GiveToAccount(p); err != nil {
		return "", err
	}
	return p, nil
}

// baseOwners are the users who may own an instance directory besides fathom's: as
// root, the accounts the registered drivers' servers run as.
func baseOwners() []int {
	if os.Geteuid() != 0 {
		return nil
	}
	var out []int
	for _, d := range registered() {
		if u, err := user.Lookup(d.Account()); err == nil {
			if id, err := strconv.Atoi(u.Uid); err == nil {
				out = append(out, id)
			}
		}
	}
	return out
}

// checkBase refuses a base directory of instances that another user owns or can
// write to (they could replace an instance's files, or plant links), creating it when
// missing: 0700, or 0755 as root, so that the servers' accounts can reach their
// instance directories.
func checkBase(base string) error {
	perm := fs.FileMode(0o700)
	if os.Geteuid() == 0 {
		perm = 0o755
	}
	if err := safefile.Dir(base, perm); err != nil {
		if errors.Is(err, safefile.ErrUnsafe) {
			return fmt.Errorf("instance directory: %v (or give --dir)", err)
		}
		return fmt.Errorf("instance directory %s: %v", base, err)
	}
	return nil
}
